"""Reproduce FSDP2's uniform-dtype assertions on CPU (gloo, two ranks).

Case 1, at the first forward: a small model is cast to bf16, but the
LayerNorm of each block is put back to fp32 (as models do for norms,
routers or state-space parameters). Each block and the root are wrapped with
fully_shard; nothing fails at wrap time, but the first forward runs the
root's lazy initialisation, which finds two original dtypes among the
trainable parameters of one group and raises:

    AssertionError: FSDP expects uniform original parameter dtype but got {torch.bfloat16, torch.float32}

(the order inside the braces is the order of a Python set and varies).
A MixedPrecisionPolicy alone does not help: it changes the compute dtype,
not the dtype the parameters are stored in.

Case 2, at the first synchronised backward after gradient accumulation:
one fully_shard group with MixedPrecisionPolicy(param_dtype=bf16,
reduce_dtype=fp32) holds two Linear layers; the first micro-batch (gradient
sync off) uses only one of them, so only its gradient is upcast to the fp32
accumulation buffer. The second micro-batch (sync on) uses both, and the
reduce-scatter receives one fp32 and one fresh bf16 gradient:

    AssertionError: FSDP reduce-scatter expects uniform gradient dtype but got {torch.bfloat16, torch.float32}

Observed with torch 2.13.0+cpu; each case takes a few seconds.
"""
import os
import socket
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

WORLD_SIZE = 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        return self.norm(self.proj(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class TwoBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 16)

    def forward(self, x, use_b):
        x = self.a(x)
        return self.b(x) if use_b else x


def mixed_param_dtypes(mesh):
    model = Net().to(torch.bfloat16)
    for block in model.blocks:
        block.norm.float()  # kept in fp32, inside the same fully_shard unit as the bf16 Linear
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    print(f"rank {dist.get_rank()}: fully_shard done, parameter dtypes {sorted({str(p.dtype) for p in model.parameters()})}", flush=True)
    model(torch.randn(4, 16, dtype=torch.bfloat16)).sum().backward()  # lazy init fails here


def mixed_grad_dtypes(mesh):
    model = TwoBranch()
    fully_shard(model, mesh=mesh, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32))
    x = torch.randn(4, 16)
    model.set_requires_gradient_sync(False)
    model(x, use_b=False).float().sum().backward()  # only `a` gets a gradient; it is kept in fp32
    model.set_requires_gradient_sync(True)
    model(x, use_b=True).float().sum().backward()  # `b` brings a fresh bf16 gradient to the reduce-scatter


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    try:
        mesh = init_device_mesh("cpu", (WORLD_SIZE,))
        for case in (mixed_param_dtypes, mixed_grad_dtypes):
            try:
                case(mesh)
                print(f"rank {rank}: {case.__name__} ran without error", flush=True)
            except AssertionError:
                if rank == 0:
                    traceback.print_exc()
            dist.barrier()
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
