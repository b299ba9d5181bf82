"""Reproduce full-state-dict loads into an FSDP2 model whose dim-0 shards are uneven (CPU, gloo, two ranks).

The model is nn.Sequential(Linear(4, 5), Linear(5, 3)): every parameter has an
odd first dimension, so with two ranks FSDP2 gives rank 0 ceil(N/2) rows and
rank 1 the rest (5 -> 3 + 2, 3 -> 2 + 1), keeping rank 1's shard padded to
rank 0's size in its own buffer. Each case builds a fresh model, wraps it with
fully_shard and loads the same full (unsharded) state dict a different way.

Failing cases:
1. model.load_state_dict(full_sd): plain tensors copied into DTensor
   parameters -> "aten.copy_.default got mixed torch.Tensor and DTensor",
   reported per parameter inside "Error(s) in loading state_dict".
2. model.load_state_dict(full_sd, assign=True): the plain tensors replace the
   DTensor parameters, and FSDP2's load_state_dict post-hook fails with
   "AttributeError: 'Parameter' object has no attribute '_local_tensor'".
3. A hand-made shard, DTensor.from_local(full.chunk(2)[rank], mesh, [Shard(0)])
   without shape=/stride=: from_local assumes even sharding and infers the
   global size as local rows x 2, so rank 0 claims 6 rows and rank 1 claims 4
   for a 5-row weight -> "size mismatch for 0.weight: copying a param with
   shape torch.Size([6, 4]) from checkpoint ...".
4. A loader that always builds Shard(0) DTensors (distribute_tensor) meets a
   model that fully_shard placed on Shard(1) (shard_placement_fn, 2.6+) and
   loads with assign=True -> the post-hook's
   "AssertionError: Shard(1) requires even sharding: local_tensor.size()=...".
5. A loader that wraps each rank's unpadded chunk in a tensor subclass with
   FSDP2 all-gather extensions (as quantised-weight loaders do): the rank
   with padding fails at the first all-gather with "When a parameter is
   unevenly sharded by FSDP ... must return all-gather inputs with the padded
   sharded size"; rank 0 then loses its peer (with NCCL it would hang until
   the watchdog fires).

Working cases (each checks every gathered value against the full state dict):
6. set_model_state_dict(full_state_dict=True, broadcast_from_rank0=True) into
   a model built on the meta device (rank 1 passes an empty dict).
7. distribute_tensor(full, param.device_mesh, param.placements) per parameter,
   then load_state_dict(assign=True).
8. DTensor.from_local(chunk, mesh, placements, shape=full.shape,
   stride=full.stride()).

Observed with torch 2.13.0+cpu; the whole run takes about a minute.
"""
import os
import socket
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Shard, distribute_tensor
from torch.utils._pytree import tree_map_only

WORLD_SIZE = 2


def build(meta=False):
    torch.manual_seed(0)
    if meta:
        with torch.device("meta"):
            return nn.Sequential(nn.Linear(4, 5), nn.Linear(5, 3))
    return nn.Sequential(nn.Linear(4, 5), nn.Linear(5, 3))


def full_state_dict():
    torch.manual_seed(1)
    return {k: v.detach().clone() for k, v in nn.Sequential(nn.Linear(4, 5), nn.Linear(5, 3)).state_dict().items()}


class Wrapped(torch.Tensor):
    """A minimal tensor subclass with FSDP2 all-gather extensions (stands in for a quantised weight)."""

    @staticmethod
    def __new__(cls, data):
        return torch.Tensor._make_wrapper_subclass(cls, data.shape, strides=data.stride(), dtype=data.dtype,
                                                   device=data.device, requires_grad=data.requires_grad)

    def __init__(self, data):
        self._data = data

    def __repr__(self):
        return f"Wrapped({tuple(self._data.shape)})"

    def __tensor_flatten__(self):
        return ["_data"], None

    @staticmethod
    def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
        return Wrapped(inner["_data"])

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda t: t._data  # noqa: E731
        out = func(*tree_map_only(Wrapped, unwrap, args), **tree_map_only(Wrapped, unwrap, kwargs or {}))
        if func is torch.ops.aten.copy_.default:
            return args[0]
        return tree_map_only(torch.Tensor, Wrapped, out)

    def fsdp_pre_all_gather(self, mesh, outer_size, outer_stride, module, mp_policy):
        return (self._data,), None  # the unpadded rows on a rank with padding

    def fsdp_post_all_gather(self, outputs, metadata, param_dtype, *, out=None):
        (data,) = outputs
        if out is not None:
            return
        return Wrapped(data), (data,)


def case_1_plain_load(mesh, rank, full):
    model = build()
    fully_shard(model, mesh=mesh)
    model.load_state_dict(full)
    return model


def case_2_assign_plain(mesh, rank, full):
    model = build(meta=True)
    fully_shard(model, mesh=mesh)
    model.load_state_dict(full, assign=True)
    return model


def case_3_from_local_without_shape(mesh, rank, full):
    model = build()
    fully_shard(model, mesh=mesh)
    sd = {k: DTensor.from_local(v.chunk(WORLD_SIZE)[rank], mesh, [Shard(0)]) for k, v in full.items()}
    model.load_state_dict(sd)
    return model


def case_4_shard0_loader_on_shard1_model(mesh, rank, full):
    model = nn.Sequential(nn.Linear(4, 5))
    fully_shard(model, mesh=mesh, shard_placement_fn=lambda p: Shard(1) if p.dim() == 2 else Shard(0))
    sd = {k: distribute_tensor(v, mesh, [Shard(0)]) for k, v in full.items() if k.startswith("0.")}
    model.load_state_dict(sd, assign=True)
    return model


def subclass_load(mesh, rank, full, cls):
    with torch.device("meta"):
        model = nn.Sequential(nn.Linear(4, 5, bias=False))
    fully_shard(model, mesh=mesh)
    weight = full["0.weight"]
    local = cls(weight.chunk(WORLD_SIZE)[rank].clone())  # rank 1: 2 rows, FSDP2 pads to 3
    sd = {"0.weight": DTensor.from_local(local, mesh, [Shard(0)], shape=weight.shape, stride=weight.stride())}
    model.load_state_dict(sd, assign=True)
    model.unshard()  # the first all-gather, as the first forward would run it
    gathered = model[0].weight.data._data.clone()
    model.reshard()
    return torch.equal(gathered, weight)


def case_5_subclass_unpadded(mesh, rank, full):
    return subclass_load(mesh, rank, full, Wrapped)  # rank 1 raises; rank 0 waits in the all-gather


def case_6_set_model_state_dict(mesh, rank, full):
    model = build(meta=True)
    fully_shard(model, mesh=mesh)
    set_model_state_dict(model, dict(full) if rank == 0 else {},
                         options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
    return model


def case_7_distribute_tensor_assign(mesh, rank, full):
    model = build(meta=True)
    fully_shard(model, mesh=mesh)
    sharded = model.state_dict()
    sd = {k: distribute_tensor(full[k], p.device_mesh, p.placements) for k, p in sharded.items()}
    model.load_state_dict(sd, assign=True)
    return model


def case_8_from_local_with_shape(mesh, rank, full):
    model = build()
    fully_shard(model, mesh=mesh)
    sd = {k: DTensor.from_local(v.chunk(WORLD_SIZE)[rank], mesh, [Shard(0)], shape=v.shape, stride=v.stride())
          for k, v in full.items()}
    model.load_state_dict(sd)
    return model


CASES = [case_1_plain_load, case_2_assign_plain, case_3_from_local_without_shape,
         case_4_shard0_loader_on_shard1_model, case_5_subclass_unpadded, case_6_set_model_state_dict,
         case_7_distribute_tensor_assign, case_8_from_local_with_shape]


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    mesh = init_device_mesh("cpu", (WORLD_SIZE,))
    full = full_state_dict()
    try:
        for case in CASES:
            if case is case_5_subclass_unpadded:
                continue  # run last: it breaks the process group on rank 0
            try:
                result = case(mesh, rank, full)
                if isinstance(result, nn.Module):
                    result(torch.randn(2, result[0].in_features)).sum().backward()
                    got = {k: v.full_tensor() for k, v in result.state_dict().items()}
                    result = all(torch.equal(got[k], full[k]) for k in got)
                print(f"rank {rank}: {case.__name__}: loaded, values match the full state dict: {result}", flush=True)
            except Exception:
                if rank == 0:
                    print(f"rank {rank}: {case.__name__}:", flush=True)
                    traceback.print_exc()
            dist.barrier()
        try:
            case_5_subclass_unpadded(mesh, rank, full)
            print(f"rank {rank}: case_5_subclass_unpadded: no error", flush=True)
        except Exception:
            print(f"rank {rank}: case_5_subclass_unpadded:", flush=True)
            traceback.print_exc()
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
