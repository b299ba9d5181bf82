"""Reproduce a pipeline stage whose real output shape differs from the declared one.

torch.distributed.pipelining, two ranks, gloo backend, CPU. Rank r holds stage r
of a two-stage pipeline (ScheduleGPipe, 4 microbatches of 1 sample, batch 4).
Stage 0 ends with ``.squeeze()``, which turns its [1, 10] output into [10],
while the stages were built with ``output_args``/``input_args`` of shape [1, 10].
Each case runs in two fresh processes; a rank that fails prints its traceback,
and its peer then fails with gloo's "Connection closed by peer". Exits 0.

What torch 2.13.0 prints:

1. static: every stage gets input_args and output_args (all metadata given, so
   no inference runs). Stage 0 sends its [10] output, receives a [1, 10]
   gradient into the buffer sized from output_args, and its backward fails:
     RuntimeError: Mismatch in shape: grad_output[0] has a shape of
     torch.Size([1, 10]) and output[0] has a shape of torch.Size([10]).
     ... RuntimeError:
             Failed to run stage backward:
             Stage output: ('Tensor(torch.Size([10]), ...)',)
             Output gradient: ('Tensor(torch.Size([1, 10]), ...)',)
2. dynamic: stage 1 is built without output_args, so the schedule infers the
   metadata from the first microbatch and compares it with what was declared:
     PipeliningMetadataError: Stage 0 output[0]: shape mismatch:
     torch.Size([1, 10]) vs torch.Size([10]); stride mismatch: (10, 1) vs (1,)
3. nograd: shapes are right (no squeeze), but the example tensors passed as
   input_args/output_args do not require grad. In 2.13.0 the static metadata
   then says no gradient flows between the stages; stage 0 gets None as its
   output gradient and the same wrapper hides a different error:
     RuntimeError: grad can be implicitly created only for scalar outputs
     ... Failed to run stage backward: ... Output gradient: ('None',)
"""

import os
import sys
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe


class Stage0(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(10, 10)

    def forward(self, x):
        # The bug: squeeze() drops the batch dimension of a 1-sample microbatch.
        return self.lin(x).squeeze()


class Stage0Fixed(Stage0):
    def forward(self, x):
        return self.lin(x)  # keeps the [1, 10] shape


class Stage1(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(10, 10)

    def forward(self, h):
        return self.lin(h)


def loss_fn(out, target):
    return (out - target).pow(2).mean()


def run(rank, world, case, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    dev = torch.device("cpu")
    # one [1, 10] activation per microbatch
    declared = torch.empty(1, 10, requires_grad=(case != "nograd"))
    if rank == 0 and case == "nograd":
        stage = PipelineStage(Stage0Fixed(), 0, world, dev,
                              input_args=(torch.randn(1, 10),), output_args=(declared,))
    elif rank == 0:
        stage = PipelineStage(Stage0(), 0, world, dev,
                              input_args=(torch.randn(1, 10),), output_args=(declared,))
    elif case in ("static", "nograd"):
        stage = PipelineStage(Stage1(), 1, world, dev,
                              input_args=(declared,), output_args=(declared,))
    else:
        stage = PipelineStage(Stage1(), 1, world, dev, input_args=(declared,))
    schedule = ScheduleGPipe(stage, n_microbatches=4, loss_fn=loss_fn)
    try:
        if rank == 0:
            schedule.step(torch.randn(4, 10))
        else:
            schedule.step(target=torch.randn(4, 10))
        print(f"[{case}] rank {rank}: step finished", flush=True)
    except Exception as e:
        if "Connection closed by peer" in str(e):
            print(f"[{case}] rank {rank}: peer failed: {str(e).splitlines()[0]}", flush=True)
        else:
            print(f"[{case}] rank {rank} failed:", flush=True)
            traceback.print_exc(file=sys.stdout)
            sys.stdout.flush()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    print("torch", torch.__version__, flush=True)
    for i, case in enumerate(["static", "dynamic", "nograd"]):
        print(f"=== case {case} ===", flush=True)
        mp.spawn(run, args=(2, case, 29611 + i), nprocs=2)
