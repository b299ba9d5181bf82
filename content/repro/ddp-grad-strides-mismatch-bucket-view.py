"""Reproduce DDP's 'Grad strides do not match bucket view strides' warning.

The model is built in the default (contiguous) memory format and wrapped in
DistributedDataParallel, which lays out its gradient buckets to follow each
parameter's strides. The inputs are then fed in channels_last. For the 1x1
convolution, autograd produces the weight gradient in channels_last strides,
which differ from the bucket view's, so the reducer warns once per process
(the first backward) and from then on copies that gradient into the bucket
with a layout change at every step:

    UserWarning: Grad strides do not match bucket view strides. ...
    grad.sizes() = [16, 8, 1, 1], strides() = [8, 1, 8, 8]
    bucket_view.sizes() = [16, 8, 1, 1], strides() = [8, 1, 1, 1]

Training continues and the gradients are correct. Converting the model with
model.to(memory_format=torch.channels_last) *before* wrapping it in DDP
silences the warning.

Two ranks, gloo backend, CPU, started with torch.multiprocessing.spawn.
"""
import os
import socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    try:
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Conv2d(8, 16, kernel_size=1),  # 1x1 conv: weight [16, 8, 1, 1]
            torch.nn.ReLU(),
            torch.nn.Conv2d(16, 16, kernel_size=3, padding=1),
        )
        ddp = DDP(model)  # model still contiguous here
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
        for step in range(3):
            x = torch.randn(4, 8, 12, 12).to(memory_format=torch.channels_last)
            loss = ddp(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            print(f"rank {rank}: step {step} loss {loss.item():.4f}", flush=True)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
