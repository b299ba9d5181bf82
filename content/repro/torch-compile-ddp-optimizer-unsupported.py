"""Reproduce DDPOptimizer's refusal of a higher order op on CPU (gloo, 1 rank).

A model wrapped in DistributedDataParallel and compiled with torch.compile goes
through Dynamo's DDPOptimizer, which splits the captured graph at DDP bucket
boundaries. A block run through torch.utils.checkpoint is captured as a higher
order op (tag_activation_checkpoint) whose body is a nested graph module.

1. default settings (optimize_ddp=True): on PyTorch 2.1 to 2.5 the first call
   fails with
       torch._dynamo.exc.BackendCompilerFailed: backend='compile_fn' raised:
       NotImplementedError: DDPOptimizer backend: Found a higher order op in the graph. ...
   (PyTorch 2.6 and later split around the op and this call succeeds.)
2. torch._dynamo.config.optimize_ddp = False: one graph, no split, it runs.
3. DDP(bucket_cap_mb=0.5) with the default optimize_ddp: DDPOptimizer refuses a
   bucket cap below its 1 MiB first bucket (2.0 to 2.14 at least):
       AssertionError: First bucket should be smaller/equal to other buckets to get comms warmed up ASAP
4. the workaround for 2.1 to 2.5 that keeps DDPOptimizer: compile each block
   and call checkpoint outside the compiled code, so no captured graph holds
   the higher order op.

The "eager" backend is used so that no C++ compiler is needed; DDPOptimizer
wraps whatever backend is chosen.
"""
import os
import traceback

import torch
import torch._dynamo
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, d)
        self.fc2 = torch.nn.Linear(d, d)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Net(torch.nn.Module):
    def __init__(self, d=64, n=4):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))

    def forward(self, x):
        for blk in self.blocks:
            x = x + checkpoint(blk, x, use_reentrant=False)
        return x


def run(title, optimize_ddp, per_block=False, **ddp_kwargs):
    print(f"== {title}", flush=True)
    torch._dynamo.reset()
    torch._dynamo.config.optimize_ddp = optimize_ddp
    torch.manual_seed(0)
    net = Net()
    if per_block:
        for blk in net.blocks:
            blk.compile(backend="eager")  # checkpoint(blk, x) stays eager
    model = DDP(net, **ddp_kwargs)
    compiled = model if per_block else torch.compile(model, backend="eager")
    x = torch.randn(8, 64, requires_grad=True)
    try:
        compiled(x).sum().backward()
        print("forward and backward OK", flush=True)
    except Exception:
        traceback.print_exc()


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("gloo", rank=0, world_size=1)
    print("torch", torch.__version__, flush=True)
    try:
        run("1. optimize_ddp=True (default)", True)
        run("2. optimize_ddp=False", False)
        run("3. bucket_cap_mb=0.5, optimize_ddp=True", True, bucket_cap_mb=0.5)
        run("4. per-block compile, checkpoint outside, optimize_ddp=True", True,
            per_block=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
