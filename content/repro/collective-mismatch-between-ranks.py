"""Reproduce mismatched collectives between ranks (TORCH_DISTRIBUTED_DEBUG=DETAIL).

Two ranks (gloo backend, CPU, started with torch.multiprocessing.spawn) run
the same first all_reduce, then diverge: rank 0 calls all_reduce again while
rank 1 calls broadcast (a rank-dependent code path, e.g. logging or eval
done on rank 0 only). Without debugging this is a hang until the collective
timeout; with TORCH_DISTRIBUTED_DEBUG=DETAIL every collective is first
checked against the other ranks' fingerprints and the job fails at once:

    RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=1, OpType=BROADCAST, ...), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=1, OpType=ALLREDUCE, ...).

(which rank reports it first can vary from run to run).

The process group timeout is 10 s so that nothing can hang for long.
"""
import os
import socket
from datetime import timedelta

os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"  # must be set before the process group exists

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

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
        t = torch.ones(4)
        dist.all_reduce(t)  # both ranks agree on this one
        print(f"rank {rank}: first all_reduce ok: {t.tolist()}", flush=True)
        if rank == 0:
            dist.all_reduce(t)        # rank 0 goes one way...
        else:
            dist.broadcast(t, src=0)  # ...rank 1 another
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
