"""Call FSDP1-wrapped modules directly, outside the FSDP wrapper's forward.

Everything runs on CPU: two processes, gloo on 127.0.0.1 with a free port.
Each model is wrapped as a single FSDP unit, so all of its parameters live in
the root FlatParameter, which is what `accelerator.unwrap_model(model)` or
`model.module` leaves sharded.

1. use_orig_params=True: the module's parameters are this rank's 1-D slice.
   A Linear with bias fails with "mat2 must be a matrix, got 1-D tensor",
   a Linear without bias on a 3-D input with "size mismatch, got input (...),
   mat (...), vec (...)", a Conv2d with "weight should have at least three
   dimensions".
2. use_orig_params=False: the original parameters are views into a freed
   unsharded buffer; after a training step a direct call fails with
   "setStorage: ... are out of bounds for storage of size 0".
3. The same direct calls inside FSDP.summon_full_params(..., writeback=False),
   entered on every rank, succeed.
"""
import os
import socket
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(rank, label, fn):
    try:
        fn()
        print(f"[rank{rank}] {label}: OK", flush=True)
    except RuntimeError:
        if rank == 0:
            traceback.print_exc()
        else:
            print(f"[rank{rank}] {label}: failed", flush=True)


def worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    cpu = torch.device("cpu")

    # 1. use_orig_params=True: 1-D shards in place of the weights
    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    head = nn.Linear(8, 16, bias=False)
    conv = nn.Sequential(nn.Conv2d(3, 4, 3))
    f_mlp = FSDP(mlp, device_id=cpu, use_orig_params=True)
    f_head = FSDP(head, device_id=cpu, use_orig_params=True)
    f_conv = FSDP(conv, device_id=cpu, use_orig_params=True)
    f_mlp(torch.randn(2, 8)).sum().backward()  # a normal training step works
    print(f"[rank{rank}] use_orig_params=True, shape of mlp[0].weight outside forward: "
          f"{tuple(mlp[0].weight.shape)}", flush=True)
    attempt(rank, "unwrapped Linear", lambda: f_mlp.module(torch.randn(2, 8)))
    attempt(rank, "unwrapped Linear without bias", lambda: f_head.module(torch.randn(2, 5, 8)))
    attempt(rank, "unwrapped Conv2d", lambda: f_conv.module(torch.randn(1, 3, 8, 8)))

    # 2. use_orig_params=False: views into freed storage
    mlp2 = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    f_mlp2 = FSDP(mlp2, device_id=cpu, use_orig_params=False)
    f_mlp2(torch.randn(2, 8)).sum().backward()
    attempt(rank, "unwrapped Linear, use_orig_params=False", lambda: f_mlp2.module(torch.randn(2, 8)))

    # 3. the fix: gather the full parameters on every rank for the direct call
    with torch.no_grad():
        for label, wrapped, x in (("mlp", f_mlp, torch.randn(2, 8)),
                                  ("conv", f_conv, torch.randn(1, 3, 8, 8)),
                                  ("mlp2", f_mlp2, torch.randn(2, 8))):
            with FSDP.summon_full_params(wrapped, writeback=False):
                out = wrapped.module(x)
            print(f"[rank{rank}] summon_full_params + unwrapped {label}: output shape {tuple(out.shape)}",
                  flush=True)

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2, free_port()), nprocs=2, join=True)
