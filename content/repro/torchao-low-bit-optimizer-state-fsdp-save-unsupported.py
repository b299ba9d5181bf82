"""Reproduce saving a torchao low-bit optimizer's state under FSDP, on CPU.

Needs torchao next to torch (the project's torch venv, made by .ci/run, has
torchao 0.18.0; elsewhere: pip install torchao). Two gloo ranks train a tiny
model for one step with torchao's 8-bit or 4-bit AdamW, whose exp_avg and
exp_avg_sq are OptimState8bit / OptimState4bit tensor subclasses, then ask for
the optimizer state dict the way a checkpoint save does:

- FSDP1 (FullyShardedDataParallel), use_orig_params=False:
  FSDP.optim_state_dict() all-gathers each state into a buffer made with
  value.new_zeros(...), which the subclass does not implement:

      NotImplementedError: OptimState8bit dispatch: attempting to run unimplemented operator/function: func=<OpOverload(op='aten.new_zeros', overload='default')>, ...

- FSDP1, use_orig_params=True: the gathering concatenates the local states
  first, and aten.cat is missing too (shown with the 4-bit optimizer).
- FSDP2 (fully_shard): the states are DTensors wrapping the subclass, and
  get_optimizer_state_dict() (sharded and full) plus
  torch.distributed.checkpoint.save() work (torchao 0.7 added the operators
  DCP needs). With torchao 0.5 dcp.save() stops at aten.is_pinned instead,
  and the message has the short form of 0.4 and 0.5:

      NotImplementedError: OptimState8bit dispatch: attempting to run unimplemented operator/function: aten.is_pinned.default

Observed with torch 2.13.0+cpu and torchao 0.18.0 (FSDP1: new_zeros and cat;
FSDP2: saved) and torchao 0.5.0 (FSDP1: aten.new_zeros.default; FSDP2:
aten.is_pinned.default). With torchao 0.6.1 the new_zeros case ends in
"ValueError: too many values to unpack (expected 2)" raised while torchao
builds the message (fixed in 0.7.0). verify-repro records only the torch
version; the recorded run used torchao 0.18.0. 15 to 30 s, most of it
torch.compile of the step.
"""
import os
import socket
import tempfile
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.checkpoint.api import CheckpointException  # a BaseException

try:
    from torchao.optim import AdamW4bit, AdamW8bit  # torchao 0.10 and later
except ImportError:
    from torchao.prototype.low_bit_optim import AdamW4bit, AdamW8bit  # 0.4 to 0.10

WORLD_SIZE = 2


def tiny_model():
    torch.manual_seed(0)
    # no bias: each rank's flat shard is 8192 values, a multiple of the block
    # size (256 / 128), so torchao quantizes the state instead of keeping fp32
    return nn.Sequential(nn.Linear(128, 128, bias=False), nn.Linear(128, 128, bias=False))


def train_one_step(model, optim):
    model(torch.randn(4, 128)).sum().backward()
    optim.step()
    kinds = {type(getattr(v, "_local_tensor", v)).__name__
             for state in optim.state.values() for v in state.values()}
    return ", ".join(sorted(kinds))


def fsdp1(use_orig_params, optim_cls):
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    model = FSDP(tiny_model(), device_id=torch.device("cpu"), use_orig_params=use_orig_params)
    optim = optim_cls(model.parameters(), lr=1e-3)
    kinds = train_one_step(model, optim)
    return kinds, lambda: FSDP.optim_state_dict(model, optim)


def fsdp2(ckpt_dir):
    import torch.distributed.checkpoint as dcp
    from torch.distributed.device_mesh import init_device_mesh
    try:
        from torch.distributed.fsdp import fully_shard  # 2.6 and later
    except ImportError:
        from torch.distributed._composable.fsdp import fully_shard
    mesh = init_device_mesh("cpu", (WORLD_SIZE,))
    model = tiny_model()
    for layer in model:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optim = AdamW8bit(model.parameters(), lr=1e-3)
    kinds = train_one_step(model, optim)

    def save():
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict
        sharded = get_optimizer_state_dict(model, optim)
        dcp.save({"optim": sharded}, checkpoint_id=ckpt_dir)
        get_optimizer_state_dict(model, optim, options=StateDictOptions(full_state_dict=True, cpu_offload=True))

    return kinds, save


def run(rank, port, ckpt_dir):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    cases = [
        ("FSDP1 use_orig_params=False, AdamW8bit", lambda: fsdp1(False, AdamW8bit)),
        ("FSDP1 use_orig_params=True, AdamW4bit", lambda: fsdp1(True, AdamW4bit)),
        ("FSDP2 fully_shard, AdamW8bit, get_optimizer_state_dict + dcp.save", lambda: fsdp2(ckpt_dir)),
    ]
    for name, build in cases:
        kinds, save = build()
        try:
            save()
            outcome = "optimizer state saved"
        except (Exception, CheckpointException):  # the last line a failed save prints
            outcome = traceback.format_exc().rstrip().splitlines()[-1]
        if rank == 0:
            print(f"{name} (state: {kinds}):", flush=True)
            print(outcome, flush=True)
        dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    import torchao
    print("torch", torch.__version__, "torchao", torchao.__version__, flush=True)
    with tempfile.TemporaryDirectory() as ckpt_dir:
        mp.spawn(run, args=(free_port(), ckpt_dir), nprocs=WORLD_SIZE, join=True)
