"""Reproduce DistributedSampler's range check on its rank argument.

Everything runs on CPU; part 2 uses gloo on 127.0.0.1 with a free port.

1. A sampler built by hand the way Lightning builds it, with
   num_replicas = num_nodes * devices taken from the Trainer's arguments and
   rank = the global rank the launcher assigned. Two nodes were launched
   with 4 processes each (global ranks 0..7), but the Trainer was told
   num_nodes=1, so num_replicas is 4: the first process of the second node
   stops with
       ValueError: Invalid rank 4, rank should be in the interval [0, 3]
   A rank of -1 (an unset LOCAL_RANK default) fails the same check.
2. Two real processes in a gloo world of 2 build their sampler with the
   per-node process count (1 here) as num_replicas and the global rank as
   rank. Rank 0 passes, rank 1 raises
       ValueError: Invalid rank 1, rank should be in the interval [0, 0]
   Rebuilt with num_replicas=dist.get_world_size() and
   rank=dist.get_rank() (the sampler's defaults), both ranks get disjoint
   halves of the dataset.
"""
import os
import socket
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DistributedSampler, TensorDataset


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def part1():
    ds = TensorDataset(torch.arange(16))
    num_nodes_given, devices = 1, 4  # what the Trainer was told
    for global_rank in (3, 4):  # last rank of node 0, first rank of node 1
        try:
            DistributedSampler(ds, num_replicas=num_nodes_given * devices, rank=global_rank)
            print(f"part 1: rank {global_rank} accepted by a sampler of {num_nodes_given * devices} replicas")
        except ValueError:
            traceback.print_exc()
    try:
        DistributedSampler(ds, num_replicas=1, rank=-1)
    except ValueError:
        traceback.print_exc()


def worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    ds = TensorDataset(torch.arange(8))
    per_node = 1  # what LOCAL_WORLD_SIZE or torch.cuda.device_count() would give on one node each
    try:
        DistributedSampler(ds, num_replicas=per_node, rank=dist.get_rank())
        print(f"part 2: rank {rank}: wrong-size sampler accepted", flush=True)
    except ValueError:
        traceback.print_exc()
    good = DistributedSampler(ds, num_replicas=dist.get_world_size(), rank=dist.get_rank(), shuffle=False)
    print(f"part 2: rank {rank} of {dist.get_world_size()}: indices {list(good)}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    print("torch", torch.__version__)
    part1()
    mp.spawn(worker, args=(2, free_port()), nprocs=2, join=True)
