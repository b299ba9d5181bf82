"""Reproduce DDP's "Expected to mark a variable ready only once".

The same Linear layer is applied twice in forward, and each application is
wrapped in reentrant activation checkpointing
(torch.utils.checkpoint.checkpoint(..., use_reentrant=True)), with
DistributedDataParallel(find_unused_parameters=True). Reentrant checkpointing
runs a separate backward pass per checkpointed segment, so DDP's autograd
hook for the shared weight fires once per segment inside one iteration, and
the second firing is rejected:

    RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: ...
    Parameter at index 1 with name shared.bias has been marked as ready twice. ...

Two ranks, gloo backend, CPU, started with torch.multiprocessing.spawn.
TORCH_DISTRIBUTED_DEBUG is forced to INFO: observed with torch 2.13.0+cpu,
the same script under TORCH_DISTRIBUTED_DEBUG=DETAIL kills a rank with
SIGSEGV (3 of 3 runs) instead of raising this error.
TORCH_SHOW_CPP_STACKTRACES=1 makes the error also print the C++ origin,
"Exception raised from checkAndRaiseMarkedTwiceError at .../reducer.cpp:N
(most recent call first):"; without it that frame line is not printed.
"""
import os
import socket
from datetime import timedelta

os.environ["TORCH_DISTRIBUTED_DEBUG"] = "INFO"  # DETAIL segfaults here, see docstring
os.environ.setdefault("TORCH_SHOW_CPP_STACKTRACES", "1")  # also print the C++ frame

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

WORLD_SIZE = 2


class SharedBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = torch.nn.Linear(8, 8)

    def forward(self, x):
        x = checkpoint(self.shared, x, use_reentrant=True)
        x = checkpoint(self.shared, torch.relu(x), use_reentrant=True)  # same weights again
        return x


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
        model = DDP(SharedBlock(), find_unused_parameters=True)
        x = torch.randn(4, 8, requires_grad=True)
        loss = model(x).sum()
        loss.backward()
        print(f"rank {rank}: backward finished", flush=True)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
