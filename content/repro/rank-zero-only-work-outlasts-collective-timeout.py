"""Reproduce a rank-0-only phase outlasting the process-group timeout (CPU, gloo).

Two worker processes (ranks 0 and 1) on 127.0.0.1 with a 2 s process-group
timeout. Rank 0 does 5 s of work alone (standing in for a dataset map or a
checkpoint download under main_process_first); rank 1 waits for it.

1. accelerate: PartialState.main_process_first(); rank 1 waits in
   wait_for_everyone() (a barrier) and fails after 2 s; rank 0 prints nothing wrong
   until it reaches its own barrier after the others are gone.
2. torch.distributed.monitored_barrier(timeout=2 s) on rank 1: the error names
   rank 0 as the rank to look at.
"""
import os
import socket
import subprocess
import sys
import time
from datetime import timedelta

WORK_SECONDS = 5


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, scenario):
    import torch.distributed as dist

    if scenario == "accelerate":
        from accelerate import PartialState

        state = PartialState(cpu=True, backend="gloo", timeout=timedelta(seconds=2))
        print(f"rank {rank}: process group timeout 2 s", flush=True)
        try:
            with state.main_process_first():
                if state.is_main_process:
                    time.sleep(WORK_SECONDS)  # dataset.map(...) on rank 0 only
                    print("rank 0: preprocessing done", flush=True)
        except RuntimeError as exc:
            print(f"rank {rank}: {type(exc).__name__}: {exc}", flush=True)
            sys.exit(1)
    else:
        dist.init_process_group("gloo", rank=rank, world_size=2, timeout=timedelta(seconds=2))
        if rank == 0:
            time.sleep(WORK_SECONDS)
            print("rank 0: preprocessing done", flush=True)
            return
        try:
            dist.monitored_barrier(timeout=timedelta(seconds=2))
        except RuntimeError as exc:
            print(f"rank {rank}: {type(exc).__name__}: {exc}", flush=True)
            sys.exit(1)


def run(scenario):
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE="2")
    procs = []
    for rank in range(2):
        e = dict(env, RANK=str(rank), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE="2")
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(rank), scenario], env=e))
    codes = [p.wait(timeout=50) for p in procs]
    print(f"== {scenario}: exit codes {codes}", flush=True)
    return codes


def main():
    for scenario in ("accelerate", "monitored"):
        print(f"== {scenario}", flush=True)
        run(scenario)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        i = sys.argv.index("--worker")
        worker(int(sys.argv[i + 1]), sys.argv[i + 2])
    else:
        main()
