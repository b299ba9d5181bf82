"""Reproduce "Operator ... does not have a sharding strategy registered." on CPU.

One gloo process with a one-device mesh is enough: DTensor decides how to run
an operator from the placements alone, before any communication, so a mesh of
size one fails the same way as a mesh of size 1000.

A two-layer MLP is tensor-parallelised with parallelize_module
(ColwiseParallel, RowwiseParallel). Between the two linears sits a hardswish
activation. DTensor runs hardswish's forward (2.13 derives a strategy from its
decomposition) but not its backward kernel, aten.hardswish_backward: no rule
is registered for it in 2.13.0 or 2.14.1 and none comes out of its
decomposition.

1) ColwiseParallel(use_local_output=False) keeps the activation input a
   DTensor: the forward runs, loss.backward() raises

       NotImplementedError: Operator aten.hardswish_backward.default does not have a sharding strategy registered.

2) The default use_local_output=True hands the activation a plain local
   tensor: forward and backward run (workaround: keep the op out of DTensor).
3) local_map runs hardswish on the local shard while the model keeps
   DTensors (torch.distributed.tensor.experimental, 2.5+; 2.4 under
   torch.distributed._tensor.experimental).
4) register_sharding (2.5+) supplies the missing rule for
   aten.hardswish_backward.default: the same step then runs.
5) A custom operator (torch.library.custom_op) called on a DTensor fails
   the same way, naming its own namespace (mtf.rowscale.default), until a
   register_sharding rule is added for it.

The gradient norms printed by 2, 3 and 4 are equal.
Observed with torch 2.13.0+cpu; about 15 seconds.
"""
import os
import socket
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.distributed.tensor.experimental import local_map, register_sharding
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)

aten = torch.ops.aten


class MLP(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.w1, self.w2, self.act = nn.Linear(16, 64), nn.Linear(64, 16), act

    def forward(self, x):
        h = self.w1(x)
        print("   activation input:", type(h).__name__)
        return self.w2(self.act(h))


def train_step(mesh, keep_dtensor, act=F.hardswish):
    torch.manual_seed(0)
    model = parallelize_module(
        MLP(act),
        mesh,
        {"w1": ColwiseParallel(use_local_output=not keep_dtensor), "w2": RowwiseParallel()},
    )
    model(torch.randn(4, 16)).sum().backward()
    return round(model.w1.weight.grad.to_local().norm().item(), 6)


@torch.library.custom_op("mtf::rowscale", mutates_args=())
def rowscale(x: torch.Tensor) -> torch.Tensor:
    return x / x.abs().amax(dim=-1, keepdim=True)


@rowscale.register_fake
def _(x):
    return torch.empty_like(x)


def main():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=0, world_size=1)
    mesh = init_device_mesh("cpu", (1,))
    print("torch", torch.__version__)

    print("1) activation applied to a DTensor (use_local_output=False)")
    try:
        train_step(mesh, keep_dtensor=True)
    except NotImplementedError:
        traceback.print_exc()

    print("2) activation applied to the local tensor: grad norm", train_step(mesh, keep_dtensor=False))

    hs_local = local_map(F.hardswish, out_placements=[Shard(1)], in_placements=([Shard(1)],))
    print("3) local_map around hardswish: grad norm", train_step(mesh, keep_dtensor=True, act=hs_local))

    @register_sharding(aten.hardswish_backward.default)
    def hardswish_backward_rule(grad_output, self):
        # elementwise: output and both inputs share one placement
        rules = [([Replicate()], [Replicate(), Replicate()])]
        rules += [([Shard(d)], [Shard(d), Shard(d)]) for d in range(self.ndim)]
        return rules

    print("4) register_sharding for hardswish_backward: grad norm", train_step(mesh, keep_dtensor=True))

    print("5) custom operator on a DTensor")
    x = distribute_tensor(torch.randn(4, 8), mesh, [Shard(0)])
    try:
        rowscale(x)
    except NotImplementedError:
        traceback.print_exc()

    @register_sharding(torch.ops.mtf.rowscale.default)
    def rowscale_rule(x):
        return [([Replicate()], [Replicate()]), ([Shard(0)], [Shard(0)])]

    print("   with a rule: output placements", rowscale(x).placements)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
