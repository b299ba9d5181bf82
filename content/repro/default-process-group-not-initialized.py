"""Reproduce "Default process group has not been initialized, please make sure
to call init_process_group."

One process, CPU only. Four calls that need the default process group are made
when there is none:

  1. a collective (all_reduce) in a script started with plain `python`, as
     when a script written for torchrun is run directly;
  2. dist.get_rank(), the usual first call in logging or evaluation helpers;
  3. wrapping a model in DistributedDataParallel before init_process_group;
  4. a barrier after destroy_process_group() (a gloo group of one process is
     created and destroyed first).

Each prints the exception type and message. PyTorch 2.2 and newer raise
ValueError; 2.1 and older raise RuntimeError with the same text.
"""
import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(label, fn):
    try:
        fn()
        print(f"== {label}: no error", flush=True)
    except (ValueError, RuntimeError) as exc:
        print(f"== {label}:", flush=True)
        print(f"{type(exc).__name__}: {exc}", flush=True)


def main():
    print(f"torch {torch.__version__}, is_initialized() = {dist.is_initialized()}", flush=True)
    attempt("1. all_reduce without init", lambda: dist.all_reduce(torch.ones(2)))
    attempt("2. get_rank without init", dist.get_rank)
    attempt("3. DDP before init", lambda: DDP(torch.nn.Linear(4, 4)))

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(free_port())
    dist.init_process_group("gloo", rank=0, world_size=1)
    dist.barrier()
    print(f"after init: is_initialized() = {dist.is_initialized()}, rank {dist.get_rank()}", flush=True)
    dist.destroy_process_group()
    attempt("4. barrier after destroy_process_group", dist.barrier)


if __name__ == "__main__":
    main()
