"""Reproduce FSDP's check that `device_id` matches the compute device.

FullyShardedDataParallel (FSDP1) works out a compute device from where the
module's parameters are, or, for a module still on the host, from the
current device of the process. When `device_id` names another device, the
constructor stops:

    ValueError: Inconsistent compute device and `device_id` on rank 1: cpu vs cpu:1

On GPUs the usual form is `cuda:0 vs cuda:1`: every rank left its current
device at cuda:0 (no torch.cuda.set_device(local_rank)) or moved the model
to cuda:0, while `device_id` says cuda:<local_rank>. This CPU version passes
`device_id=torch.device("cpu", rank)`, an explicit index the host device
never has, which drives the same check in the same function.

Two ranks, gloo backend, CPU, started with torch.multiprocessing.spawn,
process group timeout 10 s.
"""
import os
import socket
import sys
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

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
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 2))
        FSDP(model, device_id=torch.device("cpu", rank))  # per-rank index, like cuda:<rank>
        print(f"rank {rank}: FSDP constructed", flush=True)
    except Exception:
        traceback.print_exc()  # mp.spawn re-raises only the first failing rank's error
        sys.stderr.flush()
        raise
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
