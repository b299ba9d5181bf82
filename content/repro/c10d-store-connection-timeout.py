"""Reproduce c10d TCPStore connection timeouts (client and server side).

1. Client side: a non-master rank creates a TCPStore client for
   127.0.0.1:<port> where nothing listens (the master never started, crashed,
   or MASTER_ADDR/MASTER_PORT point to the wrong place). The client retries
   until its timeout (3 s here, 30 min by default in init_process_group) and
   then raises:
       torch.distributed.DistNetworkError: The client socket has timed out after 3000ms while trying to connect to (127.0.0.1, <port>).
2. Server side: the master's TCPStore is created for world_size=2 with
   wait_for_workers=True, but only one client (the master itself) ever
   joins, so after its timeout the master raises:
       torch.distributed.DistStoreError: Timed out after 4 seconds waiting for clients. 1/2 clients joined.

Everything stays on 127.0.0.1; the port is a free one found by binding to
port 0.
"""
import socket
import traceback
from datetime import timedelta

import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    print("== 1. client connecting to a port where no store listens", flush=True)
    try:
        dist.TCPStore("127.0.0.1", free_port(), world_size=2, is_master=False,
                      timeout=timedelta(seconds=3))
    except Exception:
        traceback.print_exc()

    print("== 2. master store waiting for a client that never comes", flush=True)
    try:
        dist.TCPStore("127.0.0.1", free_port(), world_size=2, is_master=True,
                      timeout=timedelta(seconds=3), wait_for_workers=True)
    except Exception:
        traceback.print_exc()
        raise SystemExit(1)


if __name__ == "__main__":
    main()
