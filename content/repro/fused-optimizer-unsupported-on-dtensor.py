"""Reproduce a fused torch.optim step failing on FSDP2 (DTensor) parameters, on CPU.

Two gloo ranks wrap a small model with fully_shard, so every parameter, its
gradient and its optimizer state are DTensors. After one backward pass each
case builds an optimizer with fused=True and calls step():

- SGD(fused=True) and Adagrad(fused=True): DTensor has no sharding strategy
  for aten._fused_sgd_ / aten._fused_adagrad_ in any release checked (up to
  2.14.1), so on 2.11 and later the step raises

      NotImplementedError: Operator aten._fused_sgd_.default does not have a sharding strategy registered.

  (the same with aten._fused_adagrad_.default).
- AdamW(fused=True): DTensor learned aten._fused_adamw_ in 2.4.0, so the step
  succeeds from 2.4 on. On 2.3 the step dies in DTensor's dispatcher before
  any kernel runs. (2.3 allowed fused=True and fully_shard only with CUDA, so
  there the script makes the same sharded DTensor parameters and gradients
  with distribute_tensor and switches the fused flag on after construction,
  which is the code path a CUDA job takes.)

      AssertionError: found no DeviceMesh from dtensor args for aten._fused_adamw_.default!

- The foreach=True variants of the same optimizers work on every release
  from 2.3 on: that is the workaround.

Observed with torch 2.13.0+cpu and torch 2.3.0; a few seconds in all.
"""
import os
import socket
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh

try:
    from torch.distributed.fsdp import fully_shard  # 2.6 and later
except ImportError:
    from torch.distributed._composable.fsdp import fully_shard  # 2.3 to 2.5
try:
    from torch.distributed.tensor import Shard, distribute_tensor  # 2.5 and later
except ImportError:
    from torch.distributed._tensor import Shard, distribute_tensor

WORLD_SIZE = 2
TORCH = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])


def make_optimizer(name, params, fused):
    kind = {"fused": dict(fused=True), "foreach": dict(foreach=True)}[fused]
    if fused == "fused" and TORCH < (2, 4):
        # 2.3 accepts fused=True only for CUDA parameters; build the optimizer
        # unfused and switch the flag on, which is the path a CUDA job takes.
        kind = dict(foreach=False)
    opt = {
        "AdamW": lambda: torch.optim.AdamW(params, lr=1e-3, **kind),
        "SGD": lambda: torch.optim.SGD(params, lr=1e-2, momentum=0.9, **kind),
        "Adagrad": lambda: torch.optim.Adagrad(params, lr=1e-2, **kind),
    }[name]()
    if fused == "fused" and TORCH < (2, 4):
        for group in opt.param_groups:
            group["fused"] = True
    return opt


def run(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    mesh = init_device_mesh("cpu", (WORLD_SIZE,))
    cases = [("AdamW", "fused"), ("SGD", "fused"), ("Adagrad", "fused"),
             ("SGD", "foreach"), ("Adagrad", "foreach")]
    if TORCH < (2, 4):
        cases = [("AdamW", "fused"), ("AdamW", "foreach")]  # fused SGD/Adagrad have no CPU path on 2.3
    for name, fused in cases:
        torch.manual_seed(0)
        if TORCH >= (2, 4):
            model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
            for layer in model:
                if isinstance(layer, nn.Linear):
                    fully_shard(layer, mesh=mesh)
            fully_shard(model, mesh=mesh)
            params = list(model.parameters())
            model(torch.randn(8, 16)).sum().backward()
        else:  # what fully_shard leaves behind: dim-0 shards as DTensors
            params = [nn.Parameter(distribute_tensor(torch.randn(16, 16), mesh, [Shard(0)]))
                      for _ in range(2)]
            for p in params:
                p.grad = distribute_tensor(torch.randn(16, 16), mesh, [Shard(0)])
        opt = make_optimizer(name, params, fused)
        try:
            opt.step()
            if rank == 0:
                print(f"{name}({fused}=True): step OK", flush=True)
        except Exception:  # print what a training job would print
            if rank == 0:
                print(f"{name}({fused}=True): step failed", flush=True)
                print(traceback.format_exc().rstrip().splitlines()[-1], flush=True)
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    print("torch", torch.__version__, flush=True)
    mp.spawn(run, args=(free_port(),), nprocs=WORLD_SIZE, join=True)
