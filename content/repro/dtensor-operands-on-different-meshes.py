"""Reproduce DTensor's refusal to combine DTensors that live on different DeviceMeshes.

Two ranks (gloo, CPU) build a 2-D mesh ("dp", "tp") of shape (1, 2) and the
usual FSDP2 + tensor-parallel layout on it: the MLP's two linears are
tensor-parallel on the "tp" sub-mesh, the output head is not, and
`fully_shard(model, mesh=mesh["dp"])` then shards everything on "dp". The
TP weights end up as DTensors on the 2-D (dp, tp) mesh, the head weight on
the 1-D dp mesh. Forward, backward and a foreach AdamW step work (2.13.0),
but every operator that takes DTensors of both meshes at once is refused:

  1. `torch.nn.utils.clip_grad_norm_` over all parameters: the per-parameter
     norms are stacked -> `All operands in aten.stack.default must have the
     same mesh, but got ...`
  2. two losses that are DTensors on different meshes added together ->
     `Cannot run aten.add.Tensor on inputs with different meshes: got ...`
  3. a loss whose logits live on one mesh and labels on another ->
     `DTensor does not support cross-mesh operation on
     aten.nll_loss_forward.default! Got meshes: ...`
  4. concatenating gradients of both meshes -> `cat op doesn't support
     cross mesh concatenation`

The script then shows the fixes: clip by norm computed per mesh group and
combined as plain tensors, and labels created on the logits' mesh.
"""
import os
import socket
import sys
import traceback
from collections import defaultdict
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Replicate, distribute_tensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

WORLD_SIZE = 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 16, bias=False)
        self.down = nn.Linear(16, 8, bias=False)
        self.head = nn.Linear(8, 8, bias=False)  # left out of the TP plan

    def forward(self, x):
        return self.head(self.down(torch.relu(self.up(x))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(rank, what, fn):
    try:
        fn()
        print(f"rank {rank}: {what}: ok", flush=True)
    except Exception:
        print(f"rank {rank}: {what}: failed", flush=True)
        traceback.print_exc()
        sys.stderr.flush()


def clip_per_mesh(params, max_norm, norm_type=2.0):
    """clip_grad_norm_ for parameters on several meshes: one norm per mesh, combined as plain tensors."""
    groups = defaultdict(list)
    for p in params:
        if p.grad is not None:
            groups[p.grad.device_mesh if isinstance(p.grad, DTensor) else None].append(p)
    norms = []
    for group in groups.values():
        n = torch.nn.utils.get_total_norm([p.grad for p in group], norm_type)
        norms.append(n.full_tensor() if isinstance(n, DTensor) else n)  # collective over that mesh
    total = torch.linalg.vector_norm(torch.stack(norms), norm_type)
    for group in groups.values():  # one call per mesh: its _foreach_mul_ must not mix meshes either
        torch.nn.utils.clip_grads_with_norm_(group, max_norm, total)
    return total


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    try:
        torch.manual_seed(0)
        mesh = init_device_mesh("cpu", (1, WORLD_SIZE), mesh_dim_names=("dp", "tp"))
        model = Net()
        parallelize_module(model, mesh["tp"], {"up": ColwiseParallel(), "down": RowwiseParallel()})
        fully_shard(model, mesh=mesh["dp"])
        for name, p in model.named_parameters():
            print(f"rank {rank}: {name} on {p.device_mesh} {p.placements}", flush=True)

        model(torch.randn(4, 8)).sum().backward()
        params = list(model.parameters())
        expected = torch.linalg.vector_norm(torch.stack([p.grad.full_tensor().norm() for p in params]))

        # 1. Gradient clipping over parameters of two meshes.
        attempt(rank, "clip_grad_norm_ over both meshes", lambda: torch.nn.utils.clip_grad_norm_(params, 1.0))

        # 2. Two losses that are DTensors on different meshes.
        loss_tp = model.up.weight.grad.square().sum()    # on the 2-D (dp, tp) mesh
        loss_dp = model.head.weight.grad.square().sum()  # on the 1-D dp mesh
        attempt(rank, "adding losses of two meshes", lambda: loss_tp + loss_dp)

        # 3. Logits on one mesh, labels on another.
        logits = distribute_tensor(torch.randn(4, 8), mesh["tp"], [Replicate()])
        labels = distribute_tensor(torch.arange(4), mesh["dp"], [Replicate()])
        attempt(rank, "cross_entropy(logits on tp, labels on dp)", lambda: F.cross_entropy(logits, labels))

        # 4. Concatenating gradients of both meshes.
        grads = [model.up.weight.grad.flatten(), model.head.weight.grad.flatten()]
        attempt(rank, "cat of gradients of two meshes", lambda: torch.cat(grads))

        # Fix for 1: a norm per mesh, gathered to plain tensors, combined, then one clip.
        total = clip_per_mesh(params, 1.0)
        after = torch.linalg.vector_norm(torch.stack([p.grad.full_tensor().norm() for p in params]))
        print(f"rank {rank}: per-mesh clipping ok, total norm {total.item():.6f} "
              f"(reference {expected.item():.6f}), after clipping {after.item():.6f}", flush=True)
        # Fix for 3: create the labels on the logits' mesh (or compare plain tensors).
        labels_same = DTensor.from_local(labels.to_local(), logits.device_mesh, [Replicate()])
        loss = F.cross_entropy(logits, labels_same).full_tensor()
        print(f"rank {rank}: labels on the logits' mesh ok, loss {loss.item():.4f}", flush=True)
        # The optimizer step itself handles several meshes in 2.13 (foreach AdamW).
        opt = torch.optim.AdamW(params, lr=1e-3, foreach=True)
        opt.step()
        print(f"rank {rank}: AdamW(foreach=True) step ok", flush=True)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
