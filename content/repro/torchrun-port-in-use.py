"""Reproduce "address already in use" on the rendezvous / TCPStore port.

Everything stays on 127.0.0.1 with a free port P found by binding to port 0.
A first TCPStore server on P stands in for an earlier job (or a stale process
of one) that still holds MASTER_PORT. Then three things try to listen on P too:

1. a second TCPStore server (what rank 0 of a second job creates),
2. init_process_group("gloo") with MASTER_ADDR/MASTER_PORT pointing at P
   (env:// rendezvous, rank 0 hosts the store),
3. torchrun --master-port=P (static rendezvous; its agent hosts the store).

Each fails immediately with:

    torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: P, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use

(older releases word it "The server socket has failed to bind to [::]:P
(errno: 98 - Address already in use)" and raise RuntimeError).
"""
import os
import socket
import subprocess
import sys
import traceback
from datetime import timedelta

import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    port = free_port()
    holder = dist.TCPStore("127.0.0.1", port, world_size=1, is_master=True,
                           timeout=timedelta(seconds=5))
    print(f"== port {port} is now held by a first store (the 'other job')", flush=True)

    print("== 1. second TCPStore server on the same port", flush=True)
    try:
        dist.TCPStore("127.0.0.1", port, world_size=1, is_master=True,
                      timeout=timedelta(seconds=5))
    except Exception:
        traceback.print_exc()

    print("== 2. init_process_group with MASTER_PORT on the same port", flush=True)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    try:
        dist.init_process_group("gloo", rank=0, world_size=1,
                                timeout=timedelta(seconds=5))
    except Exception:
        traceback.print_exc()

    print("== 3. torchrun --master-port on the same port", flush=True)
    rc = subprocess.call([
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes=1", "--nproc-per-node=1",
        "--master-addr=127.0.0.1", f"--master-port={port}",
        "--max-restarts=0", "--no-python", "true",
    ], timeout=40)
    print(f"== torchrun exited with {rc}", flush=True)
    del holder
    sys.exit(1)


if __name__ == "__main__":
    main()
