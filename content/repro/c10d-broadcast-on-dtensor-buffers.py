"""Reproduce a c10d collective called on DTensor parameters or buffers.

Two ranks (gloo, CPU). Once a model has been sharded with FSDP2
(`fully_shard`) or distributed with DTensor (`distribute_module`), its
parameters (and, for `distribute_module`, its buffers) are DTensors. The
plain c10d collectives in `torch.distributed` (`broadcast`, `all_reduce`,
`all_gather`, and the `_broadcast_coalesced` that DDP runs on the module's
parameters and buffers) are operators of their own (`c10d.broadcast_`,
`c10d.allreduce_`, ...). Handed a DTensor, they go through DTensor's
dispatcher, which has no sharding rule for them. PyTorch 2.11 and later
raise

    NotImplementedError: Operator c10d.broadcast_.default does not have a sharding strategy registered.

(2.2 to 2.10 fail earlier, with `AssertionError: found no DeviceMesh from
dtensor args for c10d.broadcast_.default!`, because their dispatcher did not
look inside the list of tensors these operators take.)

The script shows five ways to get there and two correct alternatives:
broadcasting the local tensor of a replicated DTensor over the mesh's group,
and `full_tensor()` to get a plain copy of a sharded parameter.
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
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Replicate, distribute_module

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(rank, what, fn):
    try:
        fn()
        print(f"rank {rank}: {what}: ok", flush=True)
    except (NotImplementedError, AssertionError, RuntimeError) as exc:
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
        torch.manual_seed(rank)  # different initial weights per rank, as before a real sync
        mesh = init_device_mesh("cpu", (WORLD_SIZE,))

        # 1. FSDP2: a hand-written "sync from rank 0" loop over the state dict.
        sharded = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 4))
        fully_shard(sharded, mesh=mesh)
        w = sharded[0].weight
        print(f"rank {rank}: after fully_shard, weight is {type(w).__name__} {w.placements}", flush=True)
        attempt(rank, "dist.broadcast over model.state_dict()",
                lambda: [dist.broadcast(t, src=0) for t in sharded.state_dict().values()])

        # 2. FSDP2: averaging gradients by hand (FSDP2 already reduce-scatters them).
        sharded(torch.randn(2, 8)).sum().backward()
        attempt(rank, "dist.all_reduce on a DTensor gradient", lambda: dist.all_reduce(w.grad))

        # 2b. Gathering a sharded parameter into plain output tensors: the arguments mix
        #     torch.Tensor and DTensor, which DTensor refuses before any sharding rule is looked up.
        attempt(rank, "dist.all_gather into plain tensors",
                lambda: dist.all_gather([torch.zeros(4, 8) for _ in range(WORLD_SIZE)], w.detach()))
        attempt(rank, "dist.all_gather_into_tensor into a plain tensor",
                lambda: dist.all_gather_into_tensor(torch.zeros(8, 8), w.detach()))

        # 3. DTensor model with replicated buffers wrapped in DDP: DDP's start-up
        #    _sync_module_states broadcasts parameters and buffers.
        replicated = distribute_module(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8)), mesh)
        b = replicated[1].running_mean
        print(f"rank {rank}: after distribute_module, running_mean is {type(b).__name__} {b.placements}", flush=True)
        attempt(rank, "DistributedDataParallel(model)",
                lambda: torch.nn.parallel.DistributedDataParallel(replicated))

        # Fix A: a Replicate DTensor holds the same values on every rank of its mesh;
        # broadcast its local tensor over the mesh's own group.
        group = mesh.get_group()
        for name, t in replicated.state_dict().items():
            if isinstance(t, DTensor) and all(isinstance(p, Replicate) for p in t.placements):
                dist.broadcast(t.to_local(), group=group, group_src=0)
        print(f"rank {rank}: broadcast of to_local() over mesh.get_group(): ok, "
              f"running_mean[0]={replicated[1].running_mean.to_local()[0].item():.1f}", flush=True)

        # Fix B: a Shard DTensor is not the same on every rank; gather a plain copy instead.
        full = w.full_tensor()
        print(f"rank {rank}: full_tensor() gives a plain {type(full).__name__} {tuple(full.shape)}", flush=True)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
