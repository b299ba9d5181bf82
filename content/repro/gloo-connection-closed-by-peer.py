"""Reproduce gloo's "Connection closed by peer" when a peer process exits.

Run without arguments, the script starts two worker processes (ranks 0 and 1)
on 127.0.0.1 and a free port, with MASTER_ADDR/MASTER_PORT set as a launcher
would. Both join a gloo process group and complete one all_reduce. Rank 1 then
exits (standing in for a crash, an uncaught exception or a kill), while rank 0
enters the next all_reduce. Rank 0's gloo pair reads end-of-file on the TCP
connection to rank 1 and the collective fails with:

    RuntimeError: [.../third_party/gloo/gloo/transport/tcp/pair.cc:NNN] Connection closed by peer [127.0.0.1]:PORT. This is typically caused by a remote worker crashing. ...

(older gloo builds print only "Connection closed by peer [addr]:port"). If the
peer dies with data still unread in its socket, the kernel sends a reset and
rank 0 reports "Read error [addr]:port: Connection reset by peer" instead;
exiting between collectives, as here, gives the clean close.

The error surfaces on rank 0, the survivor, which is why the message is
collateral: the cause is whatever ended rank 1.
"""
import os
import socket
import subprocess
import sys
from datetime import timedelta


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=2,
                            timeout=timedelta(seconds=20))
    t = torch.ones(4)
    dist.all_reduce(t)
    print(f"rank {rank}: first all_reduce ok {t.tolist()}", flush=True)
    if rank == 1:
        print("rank 1: exiting early (simulated crash)", flush=True)
        raise SystemExit(3)
    dist.all_reduce(t)  # rank 1 is gone: the read on its connection hits EOF


def main():
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(rank)], env=env)
             for rank in range(2)]
    codes = [p.wait(timeout=50) for p in procs]
    print(f"exit codes: {codes}", flush=True)
    sys.exit(1 if any(codes) else 0)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(int(sys.argv[sys.argv.index("--worker") + 1]))
    else:
        main()
