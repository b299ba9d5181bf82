"""Reproduce "Backend fake does not yet support sequence numbers".

Two ranks, gloo, CPU. The script builds meshes the way torchtitan's
`ParallelDims.build_mesh` does: a 1-D world mesh, then `DeviceMesh._unflatten`
into ("pp", "batch", "cp", "tp") with a `backend_override` that puts every
dimension of size 1 on the "fake" backend. Importing `torch.distributed.fsdp`
(as any FSDP2 program does) registers "fake" as a c10d plugin backend.

With TORCH_DISTRIBUTED_DEBUG=DETAIL, group creation wraps every gloo, nccl,
xccl, ucc or plugin backend in a ProcessGroupWrapper (the collective
fingerprint checker). The wrapper's constructor asks the wrapped backend to
set its sequence number; the fake backend keeps the base-class method, which
raises. Without DETAIL the same meshes build fine.

The last phase calls the private sequence-number methods directly to show
both wordings: the backend's ("Backend fake ...") and the ProcessGroup's
("ProcessGroup custom ...", printed when the group's default backend type is
not gloo, nccl, xccl or ucc).
"""
import os
import socket
import sys
import traceback

import torch
import torch.distributed as dist
import torch.distributed.fsdp  # noqa: F401  registers the "fake" backend
import torch.multiprocessing as mp
from torch.distributed.device_mesh import init_device_mesh

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_meshes(rank):
    world = init_device_mesh("cpu", (WORLD_SIZE,), mesh_dim_names=("world",))
    dims = ("pp", "batch", "cp", "tp")
    sizes = (1, WORLD_SIZE, 1, 1)
    override = {n: "fake" for n, s in zip(dims, sizes) if s == 1}
    return world._unflatten(0, sizes, dims, backend_override=override)


def worker(rank, port, debug):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    try:
        mesh = build_meshes(rank)
        print(f"rank {rank}: TORCH_DISTRIBUTED_DEBUG={debug}: mesh built: {mesh}", flush=True)
        if debug == "OFF" and rank == 0:
            pp_group = mesh.get_group("pp")
            for name, obj in (
                ("backend", pp_group._get_backend(torch.device("cpu"))),
                ("process group", pp_group),
            ):
                try:
                    obj._get_sequence_number_for_group()
                except RuntimeError as exc:
                    print(f"direct call on the {name}: RuntimeError: {exc}", flush=True)
    except RuntimeError:
        print(f"rank {rank}: TORCH_DISTRIBUTED_DEBUG={debug}: mesh build failed:", flush=True)
        if rank == 0:
            traceback.print_exc()
            sys.stderr.flush()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    print(f"torch {torch.__version__}", flush=True)
    for debug in ("DETAIL", "OFF"):
        # c10d reads TORCH_DISTRIBUTED_DEBUG when torch.distributed is
        # imported, so it must be in the environment the workers start with.
        os.environ["TORCH_DISTRIBUTED_DEBUG"] = debug
        mp.spawn(worker, args=(free_port(), debug), nprocs=WORLD_SIZE, join=True)
