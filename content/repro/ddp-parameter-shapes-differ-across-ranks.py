"""Reproduce DDP's construction-time model check failing because ranks built different models.

Before it broadcasts rank 0's weights, DistributedDataParallel.__init__ runs
_verify_param_shape_across_processes: an allgather of the number of
trainable parameters, then a broadcast of rank 0's sizes and strides that
every rank compares with its own. Three ways to build different models on
two ranks, each in its own process group:

1. count: rank 1 adds one extra trainable parameter (an adapter attached on
   one rank only). Both ranks fail, each naming its own count:

     RuntimeError: DDP expects same model across all ranks, but Rank 1 has 3 params, while rank 0 has inconsistent 2 params.

2. sizes: rank 1 resized its embedding (vocabulary grown on one rank only).
   Only rank 1 fails the check:

     RuntimeError: [1]: params[0] in this process with sizes [104, 16] appears not to match sizes of the same param in process 0.

   Rank 0 passes it and goes on to the weight broadcast, where it waits for
   rank 1 and fails with a gloo "Connection closed by peer" or "Connection
   reset by peer" error once rank 1 has left (under NCCL it would wait for
   the watchdog timeout instead).

3. strides: the same [8, 8, 1, 1] 1x1-convolution weight, channels_last on
   rank 1 (strides [8, 1, 8, 8] against [8, 1, 1, 1]). `is_contiguous()` is
   True on both ranks, yet the strides differ; again only rank 1 fails, and
   the message names the sizes, not the strides:

     RuntimeError: params[0] in this process with sizes [8, 8, 1, 1] appears not to match strides of the same param in process 0.

Two ranks, gloo backend, CPU, started with torch.multiprocessing.spawn,
one fresh process group per case, process-group timeout 10 s. Each rank
prints its own traceback (mp.spawn would re-raise only the first failure),
then both go on to the next case; the script exits 0.
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
CASES = ("count", "sizes", "strides")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def say(msg):
    sys.stdout.write(msg + "\n")  # one write per line, so the two ranks' lines do not interleave
    sys.stdout.flush()


def build(case, rank):
    torch.manual_seed(0)
    if case == "count":
        model = torch.nn.Linear(16, 4)  # weight, bias
        if rank == 1:  # an adapter registered on rank 1 only
            model.adapter = torch.nn.Parameter(torch.zeros(4))
        return model
    if case == "sizes":
        vocab = 104 if rank == 1 else 100  # tokenizer grew by 4 tokens on rank 1 only
        return torch.nn.Sequential(torch.nn.Embedding(vocab, 16), torch.nn.Linear(16, 4))
    if case == "strides":
        model = torch.nn.Conv2d(8, 8, kernel_size=1, bias=False)
        if rank == 1:
            model = model.to(memory_format=torch.channels_last)
        w = model.weight
        say(f"[{case}] rank {rank}: weight sizes {list(w.shape)} strides {list(w.stride())} "
            f"is_contiguous={w.is_contiguous()}")
        return model
    raise ValueError(case)


def run_case(rank, case, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=10))
    try:
        model = build(case, rank)
        trainable = [tuple(p.shape) for p in model.parameters() if p.requires_grad]
        say(f"[{case}] rank {rank}: {len(trainable)} trainable params {trainable}")
        DDP(model)
        say(f"[{case}] rank {rank}: DDP constructed")
    except RuntimeError:  # print each rank's own error, then go on to the next case
        say(f"[{case}] rank {rank} failed:")
        traceback.print_exc()
        sys.stderr.flush()
    finally:
        dist.destroy_process_group()


def worker(rank, ports):
    for case, port in zip(CASES, ports):
        run_case(rank, case, port)


def main():
    mp.spawn(worker, args=([free_port() for _ in CASES],), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
