"""Reproduce a training worker dying from SIGSEGV (a native crash).

A real segmentation fault is caused here by reading address 0 through
ctypes (`ctypes.string_at(0)`), standing in for a bug in a C/C++/CUDA
extension, a driver or a library. Two cases are run:

1. Inside a DataLoader worker: PyTorch's worker signal handler prints

       ERROR: Unexpected segmentation fault encountered in worker.

   and the main process raises
       RuntimeError: DataLoader worker (pid N) is killed by signal: Segmentation fault.

2. Inside a training rank launched by torchrun (2 workers, gloo, CPU,
   127.0.0.1, a free port). PYTHONFAULTHANDLER=1 makes the dying rank print
   "Fatal Python error: Segmentation fault" with its Python stack, and the
   elastic agent reports

       failed (exitcode: -11) local_rank: 1 (pid: N) of binary: .../python
       traceback : Signal 11 (SIGSEGV) received by PID N

   Rank 0, waiting in a barrier, is torn down by the agent.
"""
import ctypes
import os
import socket
import subprocess
import sys
import traceback
from datetime import timedelta


def crash():
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dataloader_case():
    import torch
    from torch.utils.data import DataLoader, Dataset

    class CrashingDataset(Dataset):
        def __len__(self):
            return 16

        def __getitem__(self, idx):
            if idx == 5:
                crash()
            return torch.full((4,), float(idx))

    try:
        for step, batch in enumerate(DataLoader(CrashingDataset(), batch_size=4, num_workers=1, timeout=20)):
            print("step", step, batch[:, 0].tolist(), flush=True)
    except RuntimeError:
        traceback.print_exc()
        sys.stderr.flush()


def worker():
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    t = torch.ones(2)
    dist.all_reduce(t)
    print(f"rank {rank}: all_reduce ok {t.tolist()}", flush=True)
    if rank == 1:
        crash()
    dist.barrier()  # rank 0 waits here for rank 1, which never arrives


def launch():
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    cmd = [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes=1", "--nproc-per-node=2",
        "--master-addr=127.0.0.1", f"--master-port={free_port()}",
        "--max-restarts=0", "--monitor-interval=0.5",
        os.path.abspath(__file__), "--worker",
    ]
    print("launching:", " ".join(cmd), flush=True)
    return subprocess.call(cmd, timeout=50, env=env)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker()
    else:
        print("== 1. segfault inside a DataLoader worker", flush=True)
        dataloader_case()
        print("== 2. segfault inside a torchrun rank", flush=True)
        sys.exit(launch())
