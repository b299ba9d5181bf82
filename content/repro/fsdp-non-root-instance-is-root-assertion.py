"""Reproduce FSDP's "Non-root FSDP instance's `_is_root` should not have been set yet".

A model has an inner FullyShardedDataParallel unit (its second Linear) inside
an outer FSDP root. Before the root has run once, the script calls the inner
unit on its own. Its lazy initialization finds no FSDP parent that has already
initialized it, so it marks itself as a root. When the outer module then runs
its first forward, its own lazy initialization walks every FSDP unit below it,
finds one whose `_is_root` is already True, and FSDP's check fails:

    Non-root FSDP instance's `_is_root` should not have been set yet or should have been set to `False`
    AssertionError: Non-root FSDP instance's `_is_root` should not have been set yet or should have been set to `False`

(the first line is the bare message FSDP prints, followed by a stack, before
it raises). Two ranks, gloo backend, CPU (device_id=cpu), started with
torch.multiprocessing.spawn. Observed with torch 2.13.0+cpu.
"""
import os
import socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=20))
    try:
        torch.manual_seed(0)
        cpu = torch.device("cpu")
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 8))
        model[1] = FSDP(model[1], device_id=cpu)  # inner (nested) FSDP unit
        model = FSDP(model, device_id=cpu)  # outer FSDP unit: the intended root
        x = torch.randn(4, 8)
        # The mistake: run the nested unit alone before the root's first forward.
        model.module[1](x)
        # The root's lazy init now finds a child that already calls itself root.
        model(x).sum().backward()
        print(f"rank {rank}: step finished", flush=True)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
