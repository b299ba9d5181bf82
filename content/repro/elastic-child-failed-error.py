"""Reproduce torchrun's ChildFailedError when one worker raises.

Run without arguments, the script launches itself under
`python -m torch.distributed.run` (torchrun) with 2 local workers on
127.0.0.1 and a free port. Each worker joins a gloo process group; rank 1
then raises an exception (standing in for any user-code error: a bad batch,
a shape error, a missing file) while rank 0 waits in a barrier. With gloo,
rank 0's barrier then fails too ("Connection closed by peer"), so both
workers exit with code 1 (unless the agent's SIGTERM reaches rank 0 first:
then "Signal 15 (SIGTERM) received by PID N"), and the elastic agent prints
its failure summary:

    E... api.py:NNN] failed (exitcode: 1) local_rank: 0 (pid: N) of binary: .../python
    torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
    ...
      traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html

The real cause (the ValueError) is only in rank 1's own traceback above the
summary, which is why this error is "collateral". Note that the summary's
"Root Cause (first observed failure)" may name rank 0, the victim, when the
agent happens to notice rank 0's exit first (it did in the captured log).
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


def worker():
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    try:
        rank = dist.get_rank()
        t = torch.ones(2)
        dist.all_reduce(t)
        print(f"rank {rank}: all_reduce ok {t.tolist()}", flush=True)
        if rank == 1:
            raise ValueError("rank 1: corrupt sample in batch 3 (simulated user error)")
        dist.barrier()  # rank 0 waits here for rank 1, which never arrives
    finally:
        # Without this, the failing rank sometimes dies at interpreter exit with
        # "terminate called without an active exception" (SIGABRT, exitcode -6)
        # instead of exit code 1 (observed with torch 2.13.0+cpu).
        dist.destroy_process_group()


def launch():
    cmd = [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes=1", "--nproc-per-node=2",
        "--master-addr=127.0.0.1", f"--master-port={free_port()}",
        "--max-restarts=0", "--monitor-interval=0.5",
        os.path.abspath(__file__), "--worker",
    ]
    print("launching:", " ".join(cmd), flush=True)
    return subprocess.call(cmd, timeout=50)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker()
    else:
        sys.exit(launch())
