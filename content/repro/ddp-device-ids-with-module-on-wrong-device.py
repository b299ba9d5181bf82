"""Reproduce DDP refusing `device_ids` for a module that is not on one GPU.

DistributedDataParallel.__init__ looks at the devices of the module's
parameters before it talks to the other ranks. `device_ids` (and
`output_device`) are only accepted for a module whose parameters all sit on
one GPU; for a CPU module or a module spread over several GPUs it stops
with a ValueError that prints what it got, on every rank:

    ValueError: DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-device GPU modules or CPU modules, but got device_ids [1], output_device None, and module parameters {device(type='cpu')}.

The cases, each run by both ranks on one gloo process group (none of the
failing constructors reaches a collective, so the ranks stay in step):

1. wrap-before-move: the model is still on the host when it is wrapped with
   device_ids=[local_rank] (the `.to(device)` comes after, or never, as in a
   CPU-only run).
2. output-device: the same, with output_device=local_rank as well (what the
   Transformers Trainer up to 4.29 and Accelerate up to 0.21 passed).
3. output-only: no device_ids, output_device=1 on a CPU module:
       ValueError: ... but got device_ids None, output_device 1, and module parameters {device(type='cpu')}.
   (the check tests truthiness, so output_device=0 alone would pass).
4. several-ids: device_ids lists every GPU, as for nn.DataParallel:
       ValueError: device_ids can only be None or contain a single element.
5. mixed-types: one parameter on the host and one elsewhere. On GPUs this is
   a device map that offloaded part of the model to the CPU ({'cpu',
   'cuda'}); here the second device type is `meta`, the only other one a
   CPU-only machine has, which drives the same check:
       ValueError: DistributedDataParallel's input module must be on the same type of devices, but input module parameters locate in {'cpu', 'meta'}.
   (the order inside the braces varies from run to run).
6. fixed: the CPU module wrapped without device_ids; one training step runs.

Two ranks, gloo backend, CPU, started with torch.multiprocessing.spawn,
process-group timeout 10 s. Each rank prints its own traceback (mp.spawn
would re-raise only the first failure); the script exits 0.
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


def say(msg):
    sys.stdout.write(msg + "\n")  # one write per line, so the two ranks' lines do not interleave
    sys.stdout.flush()


def attempt(rank, case, build_and_wrap):
    try:
        build_and_wrap()
        say(f"[{case}] rank {rank}: DDP constructed")
    except ValueError:
        say(f"[{case}] rank {rank} failed:")
        traceback.print_exc()
        sys.stderr.flush()


def mixed_model():
    model = torch.nn.Linear(8, 2)
    model.extra = torch.nn.Parameter(torch.zeros(2, device="meta"))  # stands in for a GPU-resident part
    return model


def fixed(rank):
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 2))  # CPU module: no device_ids, no output_device
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.randn(4, 8)).sum()
    loss.backward()
    opt.step()
    say(f"[fixed] rank {rank}: DDP constructed, one step done, device_ids={model.device_ids}")


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=10))
    local_rank = rank  # one node: the local rank is the rank
    try:
        if rank == 0:
            say(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}")
        attempt(rank, "wrap-before-move",
                lambda: DDP(torch.nn.Linear(8, 2), device_ids=[local_rank]))
        attempt(rank, "output-device",
                lambda: DDP(torch.nn.Linear(8, 2), device_ids=[local_rank], output_device=local_rank))
        attempt(rank, "output-only",
                lambda: DDP(torch.nn.Linear(8, 2), output_device=1))
        attempt(rank, "several-ids",
                lambda: DDP(torch.nn.Linear(8, 2), device_ids=list(range(WORLD_SIZE))))
        attempt(rank, "mixed-types",
                lambda: DDP(mixed_model(), device_ids=[local_rank]))
        fixed(rank)
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
