"""Reproduce DTensor refusing an in-place op that would change the tensor's placement.

Two ranks (gloo, CPU). An in-place operator (`pow_`, `clamp_`, `add_`, ...)
writes its result into the DTensor it was called on, so DTensor may only run
it under a sharding strategy that leaves that tensor's placement as it is.
When every strategy for the op needs a different placement for it (typically
a `Partial()` or `_NormPartial` tensor, i.e. a sum or norm not yet reduced
across ranks, going through a non-linear op that needs the reduced value),
PyTorch refuses the call. On 2.13 the error reads

    RuntimeError: aten.pow_.Scalar: in-place operations that require placement changes are not supported. The input has placement (_NormPartial(2),), but no valid strategy preserves this placement. Please use the out-of-place version of this operation instead.

followed by a blank line and `Sharding propagation failed for ...`.

The script shows three ways to get there and the out-of-place alternatives:
1. a norm over the dimension FSDP2 shards (dim 0), squared in place;
2. `torch.optim.Adafactor` (single-tensor path) stepping a `fully_shard` model,
   which does exactly that for the column statistics of every 2-D weight;
3. a `Partial()` DTensor clamped in place.
The out-of-place `square()` and an explicit `redistribute` before the
in-place op both work. With `foreach=True` Adafactor squares the norms with
`torch._foreach_mul_`, and the message names the per-tensor op instead
(`aten.mul.Tensor`), followed by `Sharding propagation failed for
aten._foreach_mul_.List(...)`.
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
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(rank, what, fn):
    try:
        out = fn()
        extra = f" -> {type(out).__name__} {out.placements}" if isinstance(out, DTensor) else ""
        print(f"rank {rank}: {what}: ok{extra}", flush=True)
    except RuntimeError as exc:
        print(f"rank {rank}: {what} failed:", flush=True)
        if rank == 0:
            traceback.print_exc()
            sys.stderr.flush()
        else:
            print(f"{type(exc).__name__}: {str(exc).splitlines()[0]}", flush=True)


def adafactor_step(rank, mesh, foreach):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Linear(16, 4))
    fully_shard(model, mesh=mesh)
    opt = torch.optim.Adafactor(model.parameters(), lr=1e-2, foreach=foreach)
    model(torch.randn(4, 16)).sum().backward()
    opt.step()


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    try:
        mesh = init_device_mesh("cpu", (WORLD_SIZE,))
        torch.manual_seed(0)
        w = distribute_tensor(torch.randn(8, 8), mesh, [Shard(0)])

        # 1. A norm over the sharded dim is a _NormPartial DTensor; squaring it needs the
        #    reduced value (Replicate), which an in-place op may not switch to.
        n = torch.norm(w, dim=0, keepdim=True)
        print(f"rank {rank}: norm over the sharded dim has placements {n.placements}", flush=True)
        # Fix: the out-of-place op is free to redistribute and returns a new DTensor.
        attempt(rank, "torch.norm(w, dim=0, keepdim=True).square()", lambda: n.square())
        attempt(rank, "torch.norm(w, dim=0, keepdim=True).square_()", lambda: n.square_())

        # 2. The same pattern inside torch.optim.Adafactor under FSDP2.
        attempt(rank, "Adafactor(foreach=False).step() on a fully_shard model",
                lambda: adafactor_step(rank, mesh, foreach=False))
        attempt(rank, "Adafactor(foreach=True).step() on a fully_shard model",
                lambda: adafactor_step(rank, mesh, foreach=True))

        # 3. A Partial (pending-sum) DTensor clamped in place.
        attempt(rank, "Partial DTensor .clamp_(max=1.5)",
                lambda: DTensor.from_local(torch.ones(4), mesh, [Partial()]).clamp_(max=1.5))
        # Fix: reduce explicitly first (an all-reduce); the in-place op then keeps Replicate.
        attempt(rank, "p.redistribute(placements=[Replicate()]).clamp_(max=1.5)",
                lambda: DTensor.from_local(torch.ones(4), mesh, [Partial()])
                .redistribute(placements=[Replicate()]).clamp_(max=1.5))
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
