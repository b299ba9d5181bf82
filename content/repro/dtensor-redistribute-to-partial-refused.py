"""Reproduce DTensor refusing a redistribution to a Partial placement.

Two ranks (gloo, CPU). `Partial()` marks a DTensor whose ranks each hold an
addend of the true value, with a reduction still pending. DTensor produces
such tensors itself (a row-wise matmul, a sum over a sharded dimension), but
its public `redistribute` will not turn a Shard or Replicate tensor into one:
up to PyTorch 2.13 every such request is refused before any communication,

    RuntimeError: Can not redistribute from S(0) to P(sum), redistributing to Partial is for internal use only!

(2.4 to 2.9: "Can not redistribute to Partial, redistributing to Partial is
for internal use only!"; 2.0 to 2.3: "Can not redistribute to _Partial,
_Partial is for internal use only!"). 2.14 lets Shard -> Partial(sum) through
and refuses the rest with "..., only Shard to Partial(sum) redistribution is
supported!".

The script asks for Partial in four ways (a direct call from Shard and from
Replicate, a ColwiseParallel plan with output_layouts=Partial(), a
PrepareModuleInput plan with desired_input_layouts=Partial()), shows the
lower-level refusal that the internal redistribution routine raises for
Shard -> Partial, and then the supported way to build and reduce a Partial
DTensor.

It runs on PyTorch 2.3 to 2.14 (imports fall back to torch.distributed._tensor
before 2.5); it was run on 2.3.0, 2.9.0, 2.13.0 and 2.14.1. On 2.14.1 the
Shard(0) and ColwiseParallel requests succeed and the Replicate sources are
refused with the 2.14 wording.
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

try:  # PyTorch 2.5 and later: the public module
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
    from torch.distributed.tensor._redistribute import redistribute_local_tensor
except ImportError:  # 2.2 to 2.4: torch.distributed._tensor, class _Partial up to 2.3
    from torch.distributed._tensor import DTensor, Replicate, Shard
    from torch.distributed._tensor.placement_types import _Partial as Partial
    try:
        from torch.distributed._tensor._redistribute import redistribute_local_tensor
    except ImportError:
        from torch.distributed._tensor.redistribute import redistribute_local_tensor
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    PrepareModuleInput,
    parallelize_module,
)

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(rank, what, fn):
    try:
        out = fn()
        extra = f" -> {out.placements}" if isinstance(out, DTensor) else ""
        print(f"rank {rank}: {what}: ok{extra}", flush=True)
    except (RuntimeError, ValueError, AssertionError) as exc:
        print(f"rank {rank}: {what} failed:", flush=True)
        if rank == 0:
            traceback.print_exc()
            sys.stderr.flush()
        else:
            print(f"{type(exc).__name__}: {exc}", flush=True)


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    try:
        print(f"rank {rank}: torch {torch.__version__}", flush=True)
        mesh = init_device_mesh("cpu", (WORLD_SIZE,))
        local = torch.full((2, 4), float(rank + 1))

        # 1. Direct requests through the public API.
        sharded = DTensor.from_local(local, mesh, [Shard(0)], run_check=False)
        attempt(rank, "Shard(0).redistribute([Partial()])",
                lambda: sharded.redistribute(mesh, [Partial()]))
        replicated = DTensor.from_local(torch.ones(2, 4), mesh, [Replicate()], run_check=False)
        attempt(rank, "Replicate().redistribute([Partial()])",
                lambda: replicated.redistribute(mesh, [Partial()]))

        # 2. A tensor-parallel plan that asks for a Partial output from a
        #    column-wise layer, whose output is Shard(-1).
        colwise = parallelize_module(torch.nn.Linear(4, 4), mesh, ColwiseParallel(output_layouts=Partial()))
        attempt(rank, "ColwiseParallel(output_layouts=Partial()) forward",
                lambda: colwise(torch.ones(2, 4)))

        # 3. A plan that annotates a replicated input and asks for Partial.
        prep = parallelize_module(
            torch.nn.Identity(), mesh,
            PrepareModuleInput(input_layouts=(Replicate(),), desired_input_layouts=(Partial(),)),
        )
        attempt(rank, "PrepareModuleInput(desired_input_layouts=(Partial(),)) forward",
                lambda: prep(torch.ones(2, 4)))

        # 4. The internal routine that DTensor's dispatcher uses: Shard -> Partial
        #    is refused there too (2.3 to 2.13) with a different wording.
        spec = sharded._spec
        target = spec.__class__(mesh, (Partial(),), tensor_meta=spec.tensor_meta)
        attempt(rank, "redistribute_local_tensor(Shard(0) -> Partial())",
                lambda: redistribute_local_tensor(sharded.to_local(), spec, target))

        # Fix: declare per-rank addends as Partial with from_local (no communication),
        # then reduce them with redistribute to Replicate (an all-reduce).
        addends = DTensor.from_local(local, mesh, [Partial()], run_check=False)
        total = addends.redistribute(mesh, [Replicate()])
        print(f"rank {rank}: from_local(..., [Partial()]) -> {addends.placements}; "
              f"redistribute([Replicate()]) -> {total.placements}, value {total.to_local()[0, 0].item():.1f}",
              flush=True)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
