"""Reproduce DDP's error for parameters that did not receive a gradient.

A model has two heads; the forward pass uses only one of them (a branch not
taken this step, a frozen-by-accident layer, an auxiliary head). The model
is wrapped in DistributedDataParallel with the default
find_unused_parameters=False, so DDP waits for a gradient for every
parameter; the reduction of the first iteration never finishes, and the
second forward raises on every rank:

    RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. ...
    Parameter indices which did not receive grad for rank 0: 2 3

Two ranks, gloo backend, CPU, started with torch.multiprocessing.spawn;
TORCH_DISTRIBUTED_DEBUG=INFO adds the parameter names to the message.
"""
import os
import socket
from datetime import timedelta

os.environ.setdefault("TORCH_DISTRIBUTED_DEBUG", "INFO")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD_SIZE = 2


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.main_head = torch.nn.Linear(8, 4)
        self.aux_head = torch.nn.Linear(8, 4)  # never used in forward

    def forward(self, x):
        return self.main_head(x)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=10))
    try:
        torch.manual_seed(0)
        model = DDP(TwoHeads())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            loss = model(torch.randn(16, 8)).pow(2).mean()
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
