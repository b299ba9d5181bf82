"""Reproduce a training rank killed by SIGBUS, as torchrun and mp.spawn report it.

Linux only; CPU and gloo; about 15 s.

A real bus error, not a signal sent with kill: rank 1 loads a checkpoint with
`torch.load(..., mmap=True)`, so the tensor's storage is the file's pages
mapped into memory. The file is then truncated, as `open(path, "wb")` does
first when a writer (another job or rank saving to the same path) overwrites
the checkpoint in place. The next read of the tensor touches a page that no longer has file data behind
it, and the kernel kills the process with SIGBUS. No Python exception is
raised; PYTHONFAULTHANDLER=1 makes the rank print "Fatal Python error: Bus
error" and its stack first.

1. under torchrun (torch.distributed.run, 2 workers): the elastic agent logs
       failed (exitcode: -7) local_rank: 1 (pid: N) of binary: .../python
   and the ChildFailedError summary shows
       exitcode  : -7 (pid: N)  (SIGBUS)       (2.13.0; 2.0 ends at the pid)
       traceback : Signal 7 (SIGBUS) received by PID N
2. under torch.multiprocessing.spawn (2 processes): the parent raises
       torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGBUS
In both cases rank 0, waiting in a barrier for rank 1, is stopped by the
launcher.
"""
import os
import socket
import subprocess
import sys
import tempfile
from datetime import timedelta


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(rank, world_size, workdir):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=20))
    t = torch.ones(2)
    dist.all_reduce(t)
    print(f"rank {rank}: all_reduce ok {t.tolist()}", flush=True)
    if rank == 1:
        path = os.path.join(workdir, "ckpt.pt")
        torch.save({"w": torch.randn(1 << 18)}, path)
        state = torch.load(path, mmap=True)  # storage = the file's pages, mapped
        os.truncate(path, 0)  # what open(path, "wb") does first
        print(f"rank {rank}: checkpoint file truncated under the mapping; reading it", flush=True)
        print(state["w"].sum())  # SIGBUS here
    dist.barrier()  # rank 0 waits here for rank 1, which never arrives


def torchrun_worker():
    train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), os.environ["REPRO_DIR"])


def spawn_worker(rank, world_size, workdir, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    import faulthandler

    faulthandler.enable()
    train(rank, world_size, workdir)


def run_torchrun(workdir):
    env = dict(os.environ, PYTHONFAULTHANDLER="1", REPRO_DIR=workdir)
    cmd = [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes=1", "--nproc-per-node=2",
        "--master-addr=127.0.0.1", f"--master-port={free_port()}",
        "--max-restarts=0", "--monitor-interval=0.5",
        os.path.abspath(__file__), "--worker",
    ]
    print("launching:", " ".join(cmd), flush=True)
    return subprocess.call(cmd, timeout=50, env=env)


def run_spawn(workdir):
    import torch.multiprocessing as mp

    try:
        mp.spawn(spawn_worker, args=(2, workdir, free_port()), nprocs=2, join=True)
    except mp.ProcessExitedException as exc:
        print(f"{type(exc).__module__}.{type(exc).__name__}: {exc}", flush=True)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        torchrun_worker()
    else:
        with tempfile.TemporaryDirectory() as workdir:
            print("== 1. torchrun: rank 1 reads a memory-mapped checkpoint that was truncated", flush=True)
            rc = run_torchrun(workdir)
            print(f"torchrun exit status: {rc}", flush=True)
        with tempfile.TemporaryDirectory() as workdir:
            print("== 2. torch.multiprocessing.spawn: the same rank", flush=True)
            run_spawn(workdir)
