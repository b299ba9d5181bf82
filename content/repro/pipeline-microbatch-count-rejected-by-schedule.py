"""Reproduce torch.distributed.pipelining refusing a microbatch count that does not fit the schedule.

Two ranks, gloo backend, CPU, started with torch.multiprocessing.spawn. Each
rank holds one stage (single-stage schedules) or two stages (looped and
V-shaped multi-stage schedules), so the pipeline has 2 or 4 stages in total.
Every case is one configuration mistake; every rank runs it, rank 0 prints the
traceback (rank 1 fails the same way, before any send or receive, so nothing
hangs) and both go on to the next case. The script exits 0.

1. 1f1b-too-few: Schedule1F1B with n_microbatches=1 on 2 stages:

     ValueError: Number of microbatches (1) must be greater than or equal to the number of stages (2).

   (2.7.0 to 2.10.0 run this check for every single-stage schedule, GPipe
   included; from 2.11.0 only Schedule1F1B has it, see case 6.)
2. batch-smaller-than-n-microbatches: ScheduleGPipe with n_microbatches=4
   stepped with a batch of 2 samples; the batch is cut into 2 chunks, not 4:

     ValueError: Expecting 4 arg_mbs but got 2

3. interleaved-not-multiple-of-rounds: ScheduleInterleaved1F1B, 2 ranks with
   2 stages each, n_microbatches=5 (rounds = 5 // 2 = 2, and 5 % 2 != 0).
4. zero-bubble-not-multiple-of-rounds: ScheduleInterleavedZeroBubble, same.
5. dualpipev-too-few: ScheduleDualPipeV, 4 stages in a V, n_microbatches=3.
6. gpipe-one-microbatch: ScheduleGPipe with n_microbatches=1 is accepted by
   2.13.0 and runs (a full bubble: one rank idles while the other works).
7. fixed: Schedule1F1B with n_microbatches=2 (= number of stages) and a batch
   of 4 runs a forward and backward step.
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
import torch.nn as nn
from torch.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleDualPipeV,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
    ScheduleInterleavedZeroBubble,
)

WORLD_SIZE = 2
DIM = 8


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
    dist.barrier()


def loss_fn(output, target):
    return ((output - target) ** 2).mean()


def one_stage(rank):
    # stage index = rank, 2 stages in total
    return PipelineStage(nn.Linear(DIM, DIM), rank, WORLD_SIZE, torch.device("cpu"))


def two_stages(rank, style):
    # 4 stages in total: looped (rank 0 holds 0 and 2) or V-shaped (rank 0 holds 0 and 3)
    n = 2 * WORLD_SIZE
    ids = [rank, rank + WORLD_SIZE] if style == "loop" else [rank, n - 1 - rank]
    return [PipelineStage(nn.Linear(DIM, DIM), i, n, torch.device("cpu")) for i in ids]


def run_step(rank, schedule, batch):
    x = torch.randn(batch, DIM)
    target = torch.randn(batch, DIM)
    losses = []
    # every rank passes the batch, so a bad split fails on both ranks before any communication
    if rank == 0:
        schedule.step(x)
    else:
        schedule.step(x, target=target, losses=losses)
    return f"step ran, losses on the last stage: {len(losses)}" if rank == WORLD_SIZE - 1 else "step ran"


def worker(rank, port):
    warnings.simplefilter("ignore")
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    torch.manual_seed(0)
    try:
        case(rank, "1f1b-too-few",
             lambda: Schedule1F1B(one_stage(rank), n_microbatches=1, loss_fn=loss_fn))
        case(rank, "batch-smaller-than-n-microbatches",
             lambda: run_step(rank, ScheduleGPipe(one_stage(rank), n_microbatches=4, loss_fn=loss_fn), batch=2))
        case(rank, "interleaved-not-multiple-of-rounds",
             lambda: ScheduleInterleaved1F1B(two_stages(rank, "loop"), n_microbatches=5, loss_fn=loss_fn))
        case(rank, "zero-bubble-not-multiple-of-rounds",
             lambda: ScheduleInterleavedZeroBubble(two_stages(rank, "loop"), n_microbatches=5, loss_fn=loss_fn))
        case(rank, "dualpipev-too-few",
             lambda: ScheduleDualPipeV(two_stages(rank, "v"), n_microbatches=3, loss_fn=loss_fn))
        case(rank, "gpipe-one-microbatch",
             lambda: run_step(rank, ScheduleGPipe(one_stage(rank), n_microbatches=1, loss_fn=loss_fn), batch=2))
        case(rank, "fixed",
             lambda: run_step(rank, Schedule1F1B(one_stage(rank), n_microbatches=2, loss_fn=loss_fn), batch=4))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    say(f"torch {torch.__version__}")
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE)
