"""Reproduce DDP with uneven inputs across ranks, made visible by Join.

Rank 0 gets 3 batches, rank 1 gets 5 (a sampler that does not pad or drop
the tail, a per-rank filtered dataset, an iterable dataset sharded
unevenly). Without anything special rank 1's 4th backward waits in an
all-reduce that rank 0 never joins: a hang at the end of the epoch until
the collective timeout. Wrapping the loop in the Join context manager with
throw_on_early_termination=True turns the hang into an immediate error
on every rank once a rank runs out of data:

    RuntimeError: Rank 0 exhausted all inputs.
    RuntimeError: Detected at least one rank that exhausted inputs. Throwing across all ranks.

Two ranks, gloo backend, CPU, started with torch.multiprocessing.spawn,
process group timeout 10 s. Each rank prints its own traceback, because
mp.spawn re-raises only the first failing rank's exception.
"""
import os
import socket
import sys
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD_SIZE = 2
BATCHES_PER_RANK = {0: 3, 1: 5}


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
        model = DDP(torch.nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        batches = [torch.randn(4, 8) for _ in range(BATCHES_PER_RANK[rank])]
        with Join([model], throw_on_early_termination=True):
            for step, x in enumerate(batches):
                loss = model(x).pow(2).mean()
                loss.backward()
                opt.step()
                opt.zero_grad()
                print(f"rank {rank}: step {step} done", flush=True)
        print(f"rank {rank}: epoch finished", flush=True)
    except RuntimeError:
        # Print every rank's error here: mp.spawn only re-raises the first one.
        traceback.print_exc()
        sys.stderr.flush()
        raise
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
