"""Reproduce FSDP's "The `grad_fn` is needed to access the `AccumulateGrad` and register the post-backward hook".

An FSDP1 (FullyShardedDataParallel, FULL_SHARD over two ranks) model runs its
very first forward inside torch.inference_mode(), as a validation pass before
training would. That first forward is where FSDP lazily allocates the padded
buffer that receives the all-gathered parameters, so the buffer is created as
an inference tensor. The root unit keeps its gathered parameters after the
forward, and in the next forward, now with gradients enabled, the flat
parameter is pointed at a view of that buffer again. The view has no autograd
history, `flat_param.expand_as(flat_param).grad_fn` is None, and FSDP's check
fails on every rank:

    The `grad_fn` is needed to access the `AccumulateGrad` and register the post-backward hook
    AssertionError: The `grad_fn` is needed to access the `AccumulateGrad` and register the post-backward hook

(the first line is the bare message FSDP prints, followed by a stack, before
it raises). The script then shows two runs that work: the same validation pass
under torch.no_grad(), and one training step before the inference-mode pass.
Two ranks, gloo backend, CPU (device_id=cpu), started with
torch.multiprocessing.spawn. Observed with torch 2.13.0+cpu.
"""
import os
import socket
import traceback
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


def build():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    return FSDP(net, device_id=torch.device("cpu"))


def run_case(rank, name, eval_ctx, train_first=False):
    model = build()
    x = torch.randn(4, 8)
    try:
        if train_first:
            model(x).sum().backward()
        with eval_ctx():  # the "validation pass"
            model(x)
        model(x).sum().backward()  # the first training step after it
        print(f"rank {rank}: {name}: training step finished", flush=True)
    except AssertionError:
        print(f"rank {rank}: {name}: failed", flush=True)
        traceback.print_exc()


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    try:
        run_case(rank, "first forward under inference_mode", torch.inference_mode)
        dist.barrier()
        run_case(rank, "first forward under no_grad", torch.no_grad)
        dist.barrier()
        run_case(rank, "training step before inference_mode", torch.inference_mode, train_first=True)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
