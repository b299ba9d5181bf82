"""Reproduce DDP's model-consistency check failing across ranks.

DistributedDataParallel's constructor first verifies that every rank has
the same number and shapes of parameters, then broadcasts rank 0's
parameters to the others. Here rank 1 builds its model from a different
config (bias=False, as when a config file or a flag differs between nodes),
so rank 1 has 1 parameter while rank 0 has 2. Without the check the ranks
would issue different broadcasts and hang; with it DDP fails at
construction:

    RuntimeError: DDP expects same model across all ranks, but Rank 0 has 2 params, while rank 1 has inconsistent 1 params.

(Observed with torch 2.13.0: freezing all of rank 1's parameters instead
fails earlier on rank 1 with "DistributedDataParallel is not needed when a
module doesn't have any parameter that requires a gradient.")

The check uses the process group itself, so it works the same with gloo as
with NCCL. Two ranks, gloo backend, CPU, started with
torch.multiprocessing.spawn, process group timeout 10 s.
"""
import os
import socket
import sys
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=10))
    try:
        use_bias = rank != 1  # config differs on rank 1
        model = torch.nn.Linear(8, 4, bias=use_bias)
        DDP(model)
        print(f"rank {rank}: DDP constructed", flush=True)
    except RuntimeError:
        traceback.print_exc()  # mp.spawn re-raises only the first failing rank's error
        sys.stderr.flush()
        raise
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
