"""Reproduce DDP refusing a model whose weights are torchao tensor subclasses.

Two ranks (gloo, CPU), PyTorch with torchao installed (run with torch 2.13.0
and torchao 0.18.0). `DistributedDataParallel.__init__` broadcasts rank 0's
parameters and buffers to the other ranks (`_sync_module_states` ->
`dist._broadcast_coalesced`). The C++ side of that call groups the tensors
into buckets and flattens each one with `view(-1)` before the broadcast, so
every parameter, frozen or not, has to support that operator. torchao's
quantized weight tensors only implement the operators their own workflows
need, so the wrap stops on every rank:

* Int8WeightOnlyConfig (torchao 0.18 stores an Int8Tensor) has no
  `aten.view` at all: torchao's generic dispatcher raises
  `NotImplementedError: Int8Tensor dispatch: attempting to run unimplemented
  operator/function: func=<OpOverload(op='aten.view', overload='default')>, ...`
* Float8WeightOnlyConfig (a Float8Tensor) has a `view` that only reshapes
  2-D <-> 3-D, and its assertion refuses `[-1]`.

Then three ways that work: the quantized weight listed in
`_ddp_params_and_buffers_to_ignore`, the weight frozen before wrapping and
quantized afterwards, and `init_sync=False` (PyTorch 2.13.0 has it) when every
rank loaded the same weights.
"""
import os
import socket
import sys
import traceback
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build():
    torch.manual_seed(0)  # same weights on every rank
    return torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 8)
    )


def train_two_steps(ddp_model):
    for _ in range(2):
        ddp_model(torch.randn(4, 256)).sum().backward()


def attempt(rank, what, fn):
    try:
        fn()
        print(f"rank {rank}: {what}: ok", flush=True)
    except (NotImplementedError, AssertionError, RuntimeError) as exc:
        print(f"rank {rank}: {what} failed:", flush=True)
        if rank == 0:
            traceback.print_exc()
            sys.stderr.flush()
        else:
            print(f"{type(exc).__name__}: {exc}", flush=True)
    dist.barrier()


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    from torchao.quantization import (
        Float8WeightOnlyConfig,
        Int8WeightOnlyConfig,
        quantize_,
    )

    def int8_then_ddp():
        model = build()
        quantize_(model[0], Int8WeightOnlyConfig())
        print(f"rank {rank}: 0.weight is {type(model[0].weight).__name__}", flush=True)
        DDP(model)

    def float8_then_ddp():
        model = build()
        quantize_(model[0], Float8WeightOnlyConfig())
        print(f"rank {rank}: 0.weight is {type(model[0].weight).__name__}", flush=True)
        DDP(model)

    def ignore_quantized():
        model = build()
        quantize_(model[0], Int8WeightOnlyConfig())
        names = [n for n, p in model.named_parameters() if not p.requires_grad]
        DDP._set_params_and_buffers_to_ignore_for_model(model, names)
        train_two_steps(DDP(model))

    def freeze_wrap_then_quantize():
        model = build()
        model[0].weight.requires_grad_(False)
        ddp_model = DDP(model)  # plain tensors are broadcast here
        quantize_(ddp_model.module[0], Int8WeightOnlyConfig())
        train_two_steps(ddp_model)

    def no_init_sync():
        model = build()
        quantize_(model[0], Int8WeightOnlyConfig())
        train_two_steps(DDP(model, init_sync=False))

    attempt(rank, "int8 weight-only quantize_ then DDP(model)", int8_then_ddp)
    attempt(rank, "float8 weight-only quantize_ then DDP(model)", float8_then_ddp)
    attempt(rank, "quantized weights in _ddp_params_and_buffers_to_ignore", ignore_quantized)
    attempt(rank, "freeze, DDP(model), then quantize_ the wrapped module", freeze_wrap_then_quantize)
    attempt(rank, "DDP(model, init_sync=False) on identical weights", no_init_sync)
    dist.destroy_process_group()


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    print(f"torch {torch.__version__}", flush=True)
    try:
        from importlib.metadata import version

        print(f"torchao {version('torchao')}", flush=True)
    except Exception:  # pragma: no cover
        print("torchao not installed", flush=True)
        sys.exit(1)
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE)
