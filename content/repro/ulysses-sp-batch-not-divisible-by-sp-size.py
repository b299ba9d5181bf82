"""Reproduce a Ulysses slice-and-gather meeting a token count the SP size does not divide.

A Ulysses forward wrapper (ArcticInference's vLLM patch works this way) gives
each sequence-parallel rank N // sp of the N tokens of the batch, runs the
model on that slice and all-gathers the outputs into a buffer of N rows. When
N is not a multiple of the SP size the gathered slices add up to fewer than N
rows and the all-gather refuses the buffer on every rank.

Needs only torch (checked with 2.13.0+cpu); runs two gloo processes on the
CPU, so the SP size is 2. Gloo words the refusal as
"ProcessGroupGloo::allgather: invalid tensor size at index 0 (...)"; on GPUs
NCCL raises "output tensor size must be equal to world_size times input
tensor size" for the same call (not run here).

Cases:
1. N = 7 tokens over SP 2: every rank raises.
2. The fix: N padded up to a multiple of the SP size (8): no error.
"""
import os
import socket
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slice_and_gather(rank, sp, n, hidden=4):
    n_local = n // sp                                   # the wrapper's equal slice
    local_out = torch.full((n_local, hidden), float(rank))  # the model's output for this rank's slice
    full = torch.empty((n, hidden))                     # buffer sized for the whole batch
    dist.all_gather_into_tensor(full, local_out)


def show(rank, title, fn):
    try:
        fn()
        print(f"[rank{rank}] {title}: no error", flush=True)
    except (ValueError, RuntimeError) as exc:
        print(f"[rank{rank}] {title}: {type(exc).__name__}: {exc}", flush=True)


def worker(rank, sp, port):
    warnings.simplefilter("ignore", FutureWarning)  # all_gather_into_tensor is deprecated in 2.13
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=sp)
    show(rank, "case 1 N=7, sp=2", lambda: slice_and_gather(rank, sp, 7))
    dist.barrier()
    show(rank, "case 2 N=8, sp=2", lambda: slice_and_gather(rank, sp, 8))
    dist.destroy_process_group()


if __name__ == "__main__":
    print(f"torch {torch.__version__}", flush=True)
    mp.spawn(worker, args=(2, free_port()), nprocs=2)
