"""Reproduce the column-major check on the second operand of torch._scaled_mm
after a DTensor redistribution has re-laid out the local shard (CPU, gloo).

A low-precision linear layer computes `x @ weight.t()`. `weight` is stored
[out, in] and row-major, so `weight.t()` is a free view with strides (1, in):
column-major, which is exactly what `_scaled_mm` wants for `mat2`.

Two ranks (gloo, CPU) make the weight a DTensor sharded on dim 0, as tensor
parallelism (ColwiseParallel) and FSDP2 do. `weight.t()` is then sharded on
dim 1 and its local shard is still a column-major view. When a sharding
decision redistributes that transposed DTensor (here to Replicate, as a
strategy that needs the full `mat2` on every rank does), the all-gather
returns a freshly allocated, contiguous local tensor: same shape, but
row-major strides (N, 1).

The layout rule of `_scaled_mm` is written in PyTorch's meta function,
which torch.compile runs on FakeTensors while tracing; calling the op on
"meta" tensors (treated as CUDA by the meta function) with the same sizes and
strides runs that check on a CPU-only machine:

    RuntimeError: mat2 must be col_major, got stride (64, 1)

Re-laying the operand out as column-major (`b.t().contiguous().t()`, what
torchao's float8 path does before calling _scaled_mm) makes the check pass.

Observed with torch 2.13.0+cpu; the whole script takes a few seconds.
"""
import os
import socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor

WORLD_SIZE = 2
F8 = torch.float8_e4m3fn
IN_FEATURES, OUT_FEATURES, TOKENS = 32, 64, 16


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def layout(t):
    s = t.stride()
    if s[1] == 1 and s[0] > 1:
        return "row-major"
    if s[0] == 1 and s[1] > 1:
        return "column-major"
    return "other"


def scaled_mm_check(label, mat2_like):
    """Run _scaled_mm's meta function (what torch.compile traces) on the given layout."""
    a = torch.empty(TOKENS, IN_FEATURES, dtype=F8, device="meta")
    b = torch.empty_strided(mat2_like.shape, mat2_like.stride(), dtype=F8, device="meta")
    one = torch.ones((), dtype=torch.float32, device="meta")
    try:
        torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)
        print(f"{label}: ok")
    except Exception as e:  # print the message exactly as a log would show it
        print(f"{label}: failed")
        print(f"{type(e).__name__}: {e}")


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=20))
    try:
        mesh = init_device_mesh("cpu", (WORLD_SIZE,))
        torch.manual_seed(0)
        weight = distribute_tensor(torch.randn(OUT_FEATURES, IN_FEATURES), mesh, [Shard(0)])
        wt = weight.t()  # mat2 of x @ weight.t()
        local = wt.to_local()
        if rank == 0:
            print(f"weight.t(): placements {wt.placements}, local shard {tuple(local.shape)} "
                  f"stride {local.stride()} ({layout(local)})", flush=True)

        full = wt.redistribute(mesh, [Replicate()])  # e.g. a strategy that wants mat2 replicated
        gathered = full.to_local()
        if rank == 0:
            print(f"after redistribute to Replicate: local {tuple(gathered.shape)} "
                  f"stride {gathered.stride()} ({layout(gathered)})", flush=True)
            scaled_mm_check("_scaled_mm with the transposed view (column-major)",
                            torch.empty(OUT_FEATURES, IN_FEATURES).t())
            scaled_mm_check("_scaled_mm with the redistributed mat2", gathered)
            fixed = gathered.t().contiguous().t()
            print(f"after b.t().contiguous().t(): stride {fixed.stride()} ({layout(fixed)})", flush=True)
            scaled_mm_check("_scaled_mm with mat2 re-laid out column-major", fixed)
        dist.barrier()
    finally:
        dist.destroy_process_group()


def main():
    print("torch", torch.__version__, flush=True)
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
