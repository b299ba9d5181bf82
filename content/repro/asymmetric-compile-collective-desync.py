"""Reproduce a collective desync caused by rank-dependent paths in compiled code.

Each rank runs the same torch.compile'd training step. Inside it, a metric
is all-reduced only when the local batch contains class 3 (a conditional,
data-dependent collective inside the compiled region); after that every
rank all-reduces the gradient-like tensor. Rank 0's batch contains class 3,
rank 1's does not, so rank 0 issues all_reduce(metric, shape [1]) where
rank 1 issues all_reduce(grad, shape [8]): the ranks' collective sequences
no longer line up. On NCCL this is a silent hang until the watchdog timeout;
with TORCH_DISTRIBUTED_DEBUG=DETAIL the fingerprints are compared first and
the job fails with

    RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=1, OpType=ALLREDUCE, TensorShape=[8], ...), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=1, OpType=ALLREDUCE, TensorShape=[1], ...)

(which rank reports first can vary). Two ranks, gloo backend, CPU,
torch.multiprocessing.spawn, process group timeout 10 s; backend="eager"
keeps torch.compile free of a C++ compiler. The NCCL watchdog line of this
entry is not reproduced (no NCCL here).
"""
import os
import socket
import sys
import traceback
from datetime import timedelta

os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"  # must be set before the process group exists

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 2


def train_step(x, labels, w):
    grad = (x @ w).mean(0)
    if (labels == 3).any():                 # data-dependent, differs per rank
        metric = (labels == 3).float().sum().reshape(1)
        dist.all_reduce(metric)             # collective only some ranks issue
    dist.all_reduce(grad)
    return grad


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=10))
    try:
        torch.manual_seed(0)
        step = torch.compile(train_step, backend="eager")
        w = torch.randn(8, 8)
        x = torch.randn(4, 8)
        dist.all_reduce(x)  # a first collective all ranks agree on
        labels = torch.tensor([0, 1, 3, 2]) if rank == 0 else torch.tensor([0, 1, 2, 2])
        out = step(x, labels, w)
        print(f"rank {rank}: step done {out[:2].tolist()}", flush=True)
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
