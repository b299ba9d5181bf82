"""Reproduce the argument checks of init_device_mesh and DeviceMesh slicing refusing a bad mesh set-up.

Four ranks, gloo backend, CPU, started with torch.multiprocessing.spawn; a
(2, 2) mesh is the smallest on which the slice-order check can fire (on
dimensions of size 1 every order is accepted). Each case is one mistake
made in real training code; every rank runs it, rank 0 prints the
traceback (the other ranks fail the same way) and all go on to the next
case. The script exits 0.

1. string-for-tuple: `mesh_dim_names=("fsdp")` is a parenthesised string,
   not a one-element tuple, so its length is 4 against a 1-D shape:

     RuntimeError: mesh_shape and mesh_dim_names should have same length! Found len(mesh_dim_names): 4 and len(mesh_shape):1.

   (2.2.0 to 2.11.0 pass the two sentences as two arguments and print them
   as a tuple: `RuntimeError: ('mesh_shape and ... same length!', 'Found ...')`.)
2. repeated-name: the same name given to two dimensions.
3. device-with-index: `f"cuda:{local_rank}"` passed as device_type.
4. device-object: a torch.device passed as device_type.
5. int-shape: a bare int as mesh_shape (a plain Python TypeError).
6. two-letter-string: `mesh_dim_names="dp"` on a 2-D shape is accepted and
   names the dimensions 'd' and 'p'; slicing by "dp" then fails.
7. missing-name: slicing, get_group and get_local_rank with a name the mesh
   does not have.
8. slice-order: slicing names in a different order from the mesh.
9. unnamed-mesh: slicing a mesh created without mesh_dim_names.
10. flatten-clash: _flatten() into a name the mesh already uses.
"""
import os
import socket
import sys
import traceback
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.device_mesh import init_device_mesh

WORLD_SIZE = 4


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


def worker(rank, port):
    warnings.simplefilter("ignore")
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    try:
        case(rank, "string-for-tuple",
             lambda: init_device_mesh("cpu", (WORLD_SIZE,), mesh_dim_names=("fsdp")))
        case(rank, "repeated-name",
             lambda: init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "dp")))
        case(rank, "device-with-index",
             lambda: init_device_mesh(f"cuda:{rank}", (WORLD_SIZE,)))
        case(rank, "device-object",
             lambda: init_device_mesh(torch.device("cpu"), (WORLD_SIZE,)))
        case(rank, "int-shape",
             lambda: init_device_mesh("cpu", WORLD_SIZE))

        two_letters = init_device_mesh("cpu", (2, 2), mesh_dim_names="dp")
        if rank == 0:
            say(f"[two-letter-string] accepted, mesh_dim_names={two_letters.mesh_dim_names}")
        case(rank, "two-letter-string", lambda: two_letters["dp"])

        mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        case(rank, "missing-name slice", lambda: mesh["sp"])
        case(rank, "missing-name get_group", lambda: mesh.get_group("sp"))
        case(rank, "missing-name get_local_rank", lambda: mesh.get_local_rank("sp"))
        case(rank, "slice-order", lambda: mesh["tp", "dp"])

        unnamed = init_device_mesh("cpu", (WORLD_SIZE,))
        case(rank, "unnamed-mesh", lambda: unnamed["dp"])
        case(rank, "flatten-clash", lambda: mesh._flatten("tp"))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def main():
    say(f"torch {torch.__version__}")
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
