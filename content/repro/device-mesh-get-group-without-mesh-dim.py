"""Reproduce DeviceMesh.get_group() / get_local_rank() called without mesh_dim on a 2-D mesh.

Two ranks, gloo backend, CPU, started with torch.multiprocessing.spawn. The
mesh has shape (1, 2) and the names ("replicate", "shard"): the layout of a
one-node HSDP job (FSDP2 `fully_shard` given a 2-D mesh), where only the
shard dimension has more than one rank. Every rank runs every case; rank 0
prints the traceback (the other rank fails the same way) and both go on.
The script exits 0.

Failing calls (what 1-D code does when it is handed the 2-D mesh):

1. mesh.get_group() on the 2-D mesh (PyTorch 2.4.0 and later raise; 2.2.0
   and 2.3.0 returned a list of groups instead):

     RuntimeError: ('Found the DeviceMesh have 2 dimensions', 'Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.', 'If you want to get the list of all the ProcessGroups in the DeviceMesh,please use `get_all_groups()` instead.')

2. mesh.get_local_rank() on the same mesh (a two-part tuple, from 2.2.0).
3. A parameter-norm helper written for plain FSDP (a 1-D mesh) that sums the
   squares of the local shards and all-reduces them over the group of the
   parameter's mesh; after fully_shard(model, mesh=<2-D mesh>) every
   parameter is a DTensor whose device_mesh is the 2-D mesh, so its
   get_group() raises (1). The right group here is the shard dimension:
   replicas hold the same shard, so reducing over them too would count it
   once per replica.
4. DistributedDataParallel(model, device_mesh=<2-D mesh>).
5. A functional collective given the 2-D mesh as its group.

Then the same operations done right: name the dimension (get_group("shard"),
get_group(mesh_dim=1)), slice the 1-D sub-mesh (mesh["shard"].get_group()),
ask for every group (get_all_groups()), or pass (mesh, dim) to a functional
collective. Each prints a "fixed:" line.
"""
import os
import socket
import sys
import traceback
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def say(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def case(rank, name, fn):
    try:
        result = fn()
        if rank == 0:
            say(f"[{name}] accepted: {result}")
    except Exception:  # print rank 0's own traceback, then go on to the next case
        if rank == 0:
            say(f"[{name}] failed:")
            traceback.print_exc(file=sys.stdout)
            sys.stdout.flush()


def param_norm(model, group_of):
    """Norm of all parameters from their local shards, reduced over the group group_of(mesh) returns."""
    params = list(model.parameters())
    local_sq = sum(p.to_local().float().pow(2).sum() for p in params)
    dist.all_reduce(local_sq, group=group_of(params[0].device_mesh))
    return round(local_sq.sqrt().item(), 4)


def worker(rank, port):
    warnings.simplefilter("ignore")
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    try:
        mesh = init_device_mesh("cpu", (1, WORLD_SIZE), mesh_dim_names=("replicate", "shard"))
        if rank == 0:
            say(f"mesh: {mesh} ndim={mesh.ndim} names={mesh.mesh_dim_names}")

        # --- the failure -------------------------------------------------------
        case(rank, "get_group() on 2-D mesh", lambda: mesh.get_group())
        case(rank, "get_local_rank() on 2-D mesh", lambda: mesh.get_local_rank())

        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 8))
        fully_shard(model, mesh=mesh)  # HSDP: replicate over dim 0, shard over dim 1
        if rank == 0:
            p = next(model.parameters())
            say(f"parameter mesh after fully_shard: {p.device_mesh}, placements={p.placements}")
        case(rank, "HSDP param_norm with mesh.get_group()",
             lambda: param_norm(model, lambda m: m.get_group()))

        case(rank, "DDP(device_mesh=2-D mesh)",
             lambda: DDP(torch.nn.Linear(8, 8), device_mesh=mesh))
        case(rank, "funcol.all_reduce(group=2-D mesh)",
             lambda: funcol.all_reduce(torch.ones(2), "sum", mesh))

        # --- the fix -------------------------------------------------------------
        g_name = mesh.get_group("shard")
        g_index = mesh.get_group(mesh_dim=1)
        g_slice = mesh["shard"].get_group()
        groups = mesh.get_all_groups()
        if rank == 0:
            say(f"fixed: get_group('shard') size={g_name.size()}, get_group(mesh_dim=1) size={g_index.size()}, "
                f"mesh['shard'].get_group() size={g_slice.size()}, get_all_groups() sizes={[g.size() for g in groups]}")
            say(f"fixed: get_local_rank('shard')={mesh.get_local_rank('shard')}, "
                f"get_local_rank('replicate')={mesh.get_local_rank('replicate')}")
        norm = param_norm(model, lambda m: m.get_group("shard"))
        reference = round(torch.sqrt(sum(p.full_tensor().float().pow(2).sum() for p in model.parameters())).item(), 4)
        if rank == 0:
            say(f"fixed: param_norm with get_group('shard') = {norm}, norm of the full tensors = {reference}")
        ddp = DDP(torch.nn.Linear(8, 8), device_mesh=mesh["shard"])
        reduced = funcol.all_reduce(torch.ones(2), "sum", (mesh, 1)).tolist()  # waits on every rank
        if rank == 0:
            say(f"fixed: DDP(device_mesh=mesh['shard']) built ({type(ddp).__name__}); "
                f"funcol.all_reduce(group=(mesh, 1)) -> {reduced}")
        dist.barrier()
    finally:
        dist.destroy_process_group()


def main():
    say(f"torch {torch.__version__}")
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
