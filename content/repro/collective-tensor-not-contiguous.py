"""Reproduce c10d refusing (or mishandling) non-contiguous tensors on gloo.

Two ranks (gloo backend, CPU, started with torch.multiprocessing.spawn):

1. all_to_all_single with a transposed input: ProcessGroupGloo checks the
   flat buffers first and raises

       ValueError: Tensors must be contiguous

2. send of a strided slice (t[::2]): the point-to-point check raises

       RuntimeError: input tensor has to be contiguous

   (both ranks send, so neither waits for a peer that already failed).

3. all_reduce of the same strided slice: no error at all on gloo, but the
   reduction runs over the first numel() elements of memory from the view's
   start, so the result is wrong and the base tensor is modified in places
   the view does not cover. Packing with .contiguous() and copying back
   gives the right answer.

The process group timeout is 10 s so that nothing can hang for long.
"""
import os
import socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def show(rank, what, exc):
    print(f"rank {rank}: {what} -> {type(exc).__name__}: {exc}", flush=True)


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=10))
    try:
        # 1. all_to_all_single on a transposed tensor.
        x = torch.arange(12.0).reshape(3, 4).t()  # shape (4, 3), stride (1, 4)
        print(f"rank {rank}: input is_contiguous={x.is_contiguous()} stride={x.stride()}", flush=True)
        try:
            dist.all_to_all_single(torch.empty(4, 3), x)
        except Exception as exc:
            show(rank, "all_to_all_single(transposed)", exc)
        out = torch.empty(4, 3)
        dist.all_to_all_single(out, x.contiguous())  # the fix
        print(f"rank {rank}: all_to_all_single(x.contiguous()) ok", flush=True)
        dist.barrier()

        # 2. send of a strided slice (both ranks fail locally before any data moves).
        try:
            dist.send(torch.arange(8.0)[::2], dst=1 - rank)
        except Exception as exc:
            show(rank, "send(t[::2])", exc)
        dist.barrier()

        # 3. all_reduce of a strided slice: silently wrong on gloo.
        base = torch.arange(8.0) + 100 * rank
        view = base[::2]
        expected = sum(torch.arange(8.0)[::2] + 100 * r for r in range(WORLD_SIZE))
        dist.all_reduce(view)
        print(f"rank {rank}: all_reduce(base[::2]) gave {view.tolist()}, expected {expected.tolist()}", flush=True)

        base = torch.arange(8.0) + 100 * rank
        view = base[::2]
        packed = view.contiguous()  # own dense buffer
        dist.all_reduce(packed)
        view.copy_(packed)          # write the result back into the view
        print(f"rank {rank}: all_reduce(view.contiguous()) + copy_ gave {view.tolist()}", flush=True)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
