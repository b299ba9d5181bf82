"""Reproduce "trying to initialize the default process group twice!".

torch.distributed keeps one default ("WORLD") process group per process.
`init_process_group` refuses to run while that group exists, whatever
arguments it gets. Lightning 0.8/0.9 hit this when `trainer.test()` ran after
`trainer.fit()` in the same DDP process, because both calls reached an
unguarded `init_process_group`; a library and a user script both initialising,
or a re-run notebook cell, hit it the same way.

Cases, CPU only (gloo):
1. One process calls init_process_group twice; the second call raises.
2. The same, guarded by torch.distributed.is_initialized(): no error.
3. destroy_process_group() between the two calls: the second call succeeds.
4. Two ranks started with env:// variables, as torchrun starts them, that
   each initialise once for a "fit" and once more for a "test": every rank
   raises, and the uncaught error is printed with the [rankN]: prefix torch
   adds to tracebacks once a process group exists.
"""
import os
import socket
import subprocess
import sys
import traceback
import warnings
from datetime import timedelta

warnings.filterwarnings("ignore")

import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def init_single():
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}",
                            rank=0, world_size=1, timeout=timedelta(seconds=30))


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        fn()
        print("no error", flush=True)
    except (RuntimeError, ValueError) as e:
        print("".join(traceback.format_exception_only(type(e), e)).strip(), flush=True)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def twice():
    init_single()
    init_single()


def guarded():
    init_single()
    if not dist.is_initialized():
        init_single()
    print(f"is_initialized={dist.is_initialized()} world_size={dist.get_world_size()}", flush=True)


def destroy_then_init():
    init_single()
    dist.destroy_process_group()
    print(f"after destroy: is_initialized={dist.is_initialized()}", flush=True)
    init_single()
    print(f"after second init: is_initialized={dist.is_initialized()}", flush=True)


CHILD = r"""
import warnings
warnings.filterwarnings("ignore")
import torch.distributed as dist

dist.init_process_group("gloo")   # "fit": env:// from RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
dist.barrier()
dist.init_process_group("gloo")   # "test", same process: raises, uncaught
"""


def two_ranks():
    """Start two ranks the way torchrun does (env:// variables) and show their stderr."""
    port = str(free_port())
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen([sys.executable, "-c", CHILD], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for rank, proc in enumerate(procs):
        _, err = proc.communicate(timeout=50)
        for line in err.splitlines():
            if "twice" in line:
                print(line, flush=True)
        print(f"rank {rank} exit code {proc.returncode}", flush=True)


if __name__ == "__main__":
    report("1. init_process_group called twice in one process", twice)
    report("2. second call guarded by dist.is_initialized()", guarded)
    report("3. destroy_process_group() before initialising again", destroy_then_init)
    print("--- 4. two ranks, each initialising for fit and again for test", flush=True)
    two_ranks()
