"""Reproduce a pipeline stage whose forward does not get the inputs it takes.

torch.distributed.pipelining, two ranks, gloo backend, CPU. Rank r holds stage r
of a two-stage pipeline (ScheduleGPipe, 4 microbatches, batch 8). Each case runs
in two fresh (forked) processes; a rank that fails prints its own traceback and exits,
so its peer, blocked in a receive, fails next with gloo's "Connection closed by
peer" (printed as a one-line summary here). The script exits 0.

What torch 2.13.0 prints (the notes in parentheses name what earlier releases print
instead, read from their source, not run):

1. first-stage-no-inputs: rank 0 calls schedule.step() without the batch; the
   stage was built without input_args, so metadata inference calls the first
   stage's forward with nothing:
     TypeError: First.forward() missing 1 required positional argument: 'x'
   (2.6.0 to 2.11.0: the same TypeError, raised from _shape_inference)
2. first-stage-no-inputs-static: the same call, the stage built with
   input_args/output_args; the forward itself fails, wrapped by the stage:
     RuntimeError: ... [Stage 0] failed to run forward: ... args: ()
   (2.4.0 to 2.11.0: PipeliningShapeError: Stage 0 forward inputs: Number of
   values (0) does not match expected number (1))
3. first-stage-no-inputs-debug: case 2 with TORCH_DISTRIBUTED_DEBUG=DETAIL:
     PipeliningMetadataError: Stage 0 forward inputs: expected 1 tensors, got 0
4. next-stage-takes-two-args: stage 1's forward(h, mask) but stage 0 sends h:
     TypeError: LastMask.forward() missing 1 required positional argument: 'mask'
5. previous-stage-sends-two: stage 0 returns (h, h * 2), stage 1 takes forward(h):
     TypeError: Last.forward() takes 2 positional arguments but 3 were given
6. traced-first-stage-no-inputs: pipeline() + build_stage, rank 0 calls step():
     [Stage 0] failed to run forward: ... TypeError: forward() missing 1 required
     positional argument: 'x'
   (2.4.0 to 2.11.0: the input check against the traced example runs first:
   PipeliningShapeError: Stage 0 forward inputs: Number of values (0) does not
   match expected number (1))
7. inputs-on-last-stage: the last stage also passes the batch to step();
   2.12.0 and later ignore it (2.6.0 to 2.11.0, stage built without input_args:
   AssertionError: Can't supply input args for shape inference on non-first stage)
8. uneven-microbatch-debug: stage built with input_args for microbatches of 2,
   stepped with a batch of 10 (chunks of 3, 3, 2, 2), TORCH_DISTRIBUTED_DEBUG=DETAIL:
     PipeliningMetadataError: Stage 0 forward inputs[0]: shape mismatch: ...
   (2.4.0 to 2.11.0, always on: PipeliningShapeError: Stage 0 forward inputs:
   value 0 has a shape mismatch: expected torch.Size([2, 16]) actual torch.Size([3, 16]))
9. fixed: batch only on rank 0, target only on the last rank: 4 losses.
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
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe, SplitPoint, pipeline

WORLD_SIZE, BATCH, DIM, N_MB = 2, 8, 16, 4


class First(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(DIM, DIM)

    def forward(self, x):
        return self.lin(x)


class FirstTwoOutputs(First):
    def forward(self, x):
        h = self.lin(x)
        return h, h * 2


class Last(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(DIM, 4)

    def forward(self, h):
        return self.lin(h)


class LastMask(Last):
    def forward(self, h, mask):
        return self.lin(h * mask)


class Whole(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(DIM, DIM)
        self.b = nn.Linear(DIM, 4)

    def forward(self, x):
        return self.b(self.a(x))


def manual_stage(rank, first=First, last=Last, static=False):
    kwargs = {}
    if static:  # shapes given up front for one microbatch of BATCH // N_MB samples
        mb = BATCH // N_MB
        kwargs = {"input_args": (torch.randn(mb, DIM),),
                  "output_args": torch.randn(mb, DIM) if rank == 0 else torch.randn(mb, 4)}
    return PipelineStage(first() if rank == 0 else last(), rank, WORLD_SIZE, torch.device("cpu"), **kwargs)


def traced_stage(rank):
    pipe = pipeline(Whole(), mb_args=(torch.randn(BATCH // N_MB, DIM),), split_spec={"b": SplitPoint.BEGINNING})
    return pipe.build_stage(rank, torch.device("cpu"))


def run(rank, case):
    x, y = torch.randn(BATCH, DIM), torch.randint(0, 4, (BATCH,))
    builds = {
        "first-stage-no-inputs": lambda: manual_stage(rank),
        "first-stage-no-inputs-static": lambda: manual_stage(rank, static=True),
        "first-stage-no-inputs-debug": lambda: manual_stage(rank, static=True),
        "next-stage-takes-two-args": lambda: manual_stage(rank, last=LastMask),
        "previous-stage-sends-two": lambda: manual_stage(rank, first=FirstTwoOutputs),
        "traced-first-stage-no-inputs": lambda: traced_stage(rank),
        "inputs-on-last-stage": lambda: manual_stage(rank),
        "uneven-microbatch-debug": lambda: manual_stage(rank, static=True),
        "fixed": lambda: manual_stage(rank),
    }
    schedule = ScheduleGPipe(builds[case](), n_microbatches=N_MB, loss_fn=nn.CrossEntropyLoss())
    losses = []
    if rank == 0:
        if case.startswith(("first-stage-no-inputs", "traced-first-stage-no-inputs")):
            schedule.step()  # the mistake: the first stage is the one that must get the batch
        elif case == "uneven-microbatch-debug":
            schedule.step(torch.randn(BATCH + 2, DIM))
        else:
            schedule.step(x)
    elif case == "inputs-on-last-stage":
        schedule.step(x, target=y, losses=losses)
    else:
        schedule.step(target=y, losses=losses)
    return f"step ran, {len(losses)} losses on the last stage" if rank == WORLD_SIZE - 1 else "step ran"


def worker(rank, port, case):
    warnings.simplefilter("ignore")
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if case.endswith("-debug"):
        os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
        dist.set_debug_level_from_env()  # read once at import; a user sets it before starting the job
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=30))
    torch.manual_seed(0)
    try:
        result = run(rank, case)
        print(f"[{case}] rank {rank}: {result}", flush=True)
    except Exception as exc:
        if "Connection closed by peer" in str(exc) or "Connection reset by peer" in str(exc):
            print(f"[{case}] rank {rank}: peer gone: {str(exc).splitlines()[0][:160]}", flush=True)
        else:
            print(f"[{case}] rank {rank} failed:", flush=True)
            traceback.print_exc(file=sys.stdout)
            sys.stdout.flush()
        os._exit(1)  # leave without the process group's teardown, as a crashed rank would
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CASES = ["first-stage-no-inputs", "first-stage-no-inputs-static", "first-stage-no-inputs-debug",
         "next-stage-takes-two-args", "previous-stage-sends-two", "traced-first-stage-no-inputs",
         "inputs-on-last-stage", "uneven-microbatch-debug", "fixed"]

if __name__ == "__main__":
    print(f"torch {torch.__version__}", flush=True)
    ctx = mp.get_context("fork")
    for case in CASES:
        port = free_port()
        procs = [ctx.Process(target=worker, args=(r, port, case)) for r in range(WORLD_SIZE)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(90)
            if p.is_alive():
                p.terminate()
                p.join()
        print(f"[{case}] exit codes: {[p.exitcode for p in procs]}", flush=True)
