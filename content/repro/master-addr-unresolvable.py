"""Reproduce a rendezvous host name that does not resolve (MASTER_ADDR typo, DNS record not there yet).

The host is `no-such-host.invalid`: the `.invalid` top-level domain is reserved
and never resolves, so getaddrinfo() fails with EAI_NONAME (-2) on any machine,
with or without a network.

1. Pre-flight check, as the entry recommends: resolving MASTER_ADDR from Python
   raises
       socket.gaierror: [Errno -2] Name or service not known
2. init_process_group(gloo) as rank 1 of 2 with that MASTER_ADDR. c10d's
   TCPStore client cannot resolve the name, logs one warning per attempt
       [c10d] The IPv6 network addresses of (no-such-host.invalid, <port>) cannot be retrieved (gai error: -2 - Name or service not known).
   keeps retrying until the (here 3 s) timeout, and then raises the generic
   connect timeout:
       torch.distributed.DistNetworkError: The client socket has timed out after 3000ms while trying to connect to (no-such-host.invalid, <port>).

Nothing listens anywhere; the whole run takes about ten seconds.
"""
import datetime
import os
import socket
import traceback

import torch.distributed as dist

HOST = "no-such-host.invalid"
PORT = 29531


def main():
    os.environ["MASTER_ADDR"] = HOST
    os.environ["MASTER_PORT"] = str(PORT)

    print("== 1. resolve MASTER_ADDR before init_process_group", flush=True)
    try:
        socket.getaddrinfo(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                           type=socket.SOCK_STREAM)
    except socket.gaierror:
        traceback.print_exc()

    print("== 2. init_process_group with an unresolvable MASTER_ADDR", flush=True)
    try:
        dist.init_process_group("gloo", rank=1, world_size=2,
                                timeout=datetime.timedelta(seconds=3))
    except Exception as exc:  # DistNetworkError in 2.x
        print(f"{type(exc).__module__}.{type(exc).__name__}: {exc}", flush=True)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
