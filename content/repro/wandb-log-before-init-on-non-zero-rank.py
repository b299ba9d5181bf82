"""W&B run created on rank 0 only, wandb.log / wandb.config called on every rank.

Needs wandb next to PyTorch (checked with wandb 0.17.9, 0.19.11 and 0.31.0, torch 2.13.0 CPU);
wandb is not part of the torch environment, so put it on PYTHONPATH, e.g.
`pip install --target /tmp/wandb-pkgs wandb` and `PYTHONPATH=/tmp/wandb-pkgs`.
Two processes on the CPU with the gloo backend, offline W&B mode (no network, no API key),
a few seconds.

Rank 0 calls wandb.init(mode="offline"); rank 1 does not. Then each rank:
1. calls wandb.log({...}): rank 1 raises "You must call wandb.init() before wandb.log()";
2. calls wandb.config.update({...}): rank 1 raises "... before wandb.config.update";
3. calls wandb.run.log({...}): wandb.run is None on rank 1, an AttributeError;
4. the fix: the same calls guarded by `if rank == 0` run on both ranks without error.
"""
import os
import socket
import sys
import tempfile
import traceback

import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, port, wandb_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WANDB_SILENT="true",
                      WANDB_DIR=wandb_dir, WANDB_MODE="offline")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    import wandb

    run = wandb.init(project="repro", mode="offline") if rank == 0 else None
    cases = [
        ("wandb.log", lambda: wandb.log({"loss": 0.5})),
        ("wandb.config.update", lambda: wandb.config.update({"lr": 1e-4})),
        ("wandb.run.log", lambda: wandb.run.log({"loss": 0.5})),
    ]
    for name, call in cases:
        try:
            call()
            print(f"[rank {rank}] {name}: ok", flush=True)
        except Exception:
            print(f"[rank {rank}] {name} raised:", flush=True)
            sys.stdout.write("".join(traceback.format_exc().splitlines(True)[-1:]))
            sys.stdout.flush()
        dist.barrier()

    # The fix: only the rank that owns the run talks to W&B.
    if rank == 0:
        run.log({"loss": 0.25})
        run.finish()
    print(f"[rank {rank}] guarded logging: ok", flush=True)
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    import torch
    import wandb

    print(f"torch {torch.__version__}, wandb {wandb.__version__}", flush=True)
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(worker, args=(2, free_port(), d), nprocs=2, join=True)
