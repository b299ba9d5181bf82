"""Reproduce DTensor's refusal to mix a plain torch.Tensor into an operator.

Two ranks (gloo, CPU) shard a small model with FSDP2 (`fully_shard`), whose
parameters become DTensors sharded on dim 0 of a 1-D device mesh. Running
the module itself works: FSDP2 gathers the parameters into full tensors for
its forward. The bug is a computation that reads a parameter *outside* the
module's forward, as a tied output head or a custom loss often does: here
`hidden @ head.T`, with `hidden` a plain tensor and `head` (the first
layer's weight, tied as an output head) a DTensor again once that layer's
forward has finished. DTensor's dispatcher cannot guess how the plain (non-scalar)
tensor is laid out across ranks, so it fails:

    RuntimeError: aten.t.default ... / aten.mm.default: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before calling distributed operators!

The script then shows two correct ways out: `weight.full_tensor()` (an
all-gather that returns a plain tensor) and `DTensor.from_local(...,
Replicate())` for a tensor that really is the same on every rank.
"""
import os
import socket
import sys
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Replicate

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
        mesh = init_device_mesh("cpu", (WORLD_SIZE,))
        model = torch.nn.Sequential(torch.nn.Linear(16, 16, bias=False), torch.nn.Linear(16, 16, bias=False))
        for layer in model:
            fully_shard(layer, mesh=mesh)  # one FSDP2 unit per layer, resharded after its forward
        fully_shard(model, mesh=mesh)
        head = model[0].weight  # e.g. an output head tied to the embedding
        print(f"rank {rank}: weight is {type(head).__name__} {head.placements}", flush=True)

        x = torch.randn(4, 16)
        hidden = model(x)  # fine: FSDP2 unshards around forward
        print(f"rank {rank}: forward ok, output is {type(hidden).__name__}", flush=True)

        try:
            logits = hidden @ head.T  # tied head outside forward: plain @ DTensor
        except RuntimeError:
            traceback.print_exc()
            sys.stderr.flush()

        # Fix 1: gather the full parameter (collective on every rank) and stay plain.
        logits = hidden @ head.full_tensor().T
        print(f"rank {rank}: full_tensor() fix ok, logits {tuple(logits.shape)}", flush=True)

        # Fix 2: declare a tensor that is identical on all ranks as a replicated DTensor.
        h = DTensor.from_local(hidden.detach(), mesh, [Replicate()])
        out = (h @ head.T).full_tensor()
        print(f"rank {rank}: from_local(Replicate) fix ok, out {tuple(out.shape)}", flush=True)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
