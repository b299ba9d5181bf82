"""Reproduce FSDP's error for parameters of mixed dtype in one flat parameter.

FullyShardedDataParallel (FSDP1, use_orig_params=False) flattens all
parameters of a wrapped module into one FlatParameter, which needs a
single dtype. Here one submodule of the model was cast to bfloat16 (e.g. a
half-precision embedding loaded from a checkpoint) while the rest stays
float32, and the whole model is wrapped as one FSDP unit, so FSDP fails at
construction:

    ValueError: Must flatten tensors with uniform dtype but got torch.float32 and torch.bfloat16

Two ranks, gloo backend, CPU (FSDP with device_id=cpu), started with
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
        model[1].to(torch.bfloat16)  # one part in a different dtype
        FSDP(model, device_id=torch.device("cpu"), use_orig_params=False)
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
