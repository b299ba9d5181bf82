"""Reproduce "environment variable RANK expected, but not set".

A training script that calls init_process_group() with the default env://
rendezvous is started with plain `python` instead of a launcher, so nobody
has set RANK, WORLD_SIZE, MASTER_ADDR or MASTER_PORT. The env:// handler in
torch/distributed/rendezvous.py reads them in that order and names the first
one missing:

    ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set

A script that reads a launcher variable itself, before init_process_group,
fails earlier and with Python's own error instead:

    KeyError: 'LOCAL_RANK'

The script first reads os.environ["LOCAL_RANK"] the way many training scripts
do, then clears the four variables, sets them one by one to show each
message, and finally starts the same training function under torchrun
(2 processes, gloo, 127.0.0.1), which sets them all (LOCAL_RANK included),
so it succeeds.
"""
import os
import socket
import subprocess
import sys
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist

VARS = ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train():
    local_rank = int(os.environ["LOCAL_RANK"])  # what many scripts do first; torchrun sets it
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    t = torch.ones(1)
    dist.all_reduce(t)
    print(f"== rank {dist.get_rank()}/{dist.get_world_size()} local_rank {local_rank} "
          f"all_reduce -> {t.item()}", flush=True)
    dist.destroy_process_group()


def main():
    for v in VARS + ["LOCAL_RANK"]:
        os.environ.pop(v, None)
    print("== plain python, the script reads os.environ['LOCAL_RANK'] itself", flush=True)
    try:
        int(os.environ["LOCAL_RANK"])
    except KeyError:
        traceback.print_exc()
        sys.stderr.flush()
    values = {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
              "MASTER_PORT": str(free_port())}
    for v in VARS:
        print(f"== plain python, set so far: {[k for k in VARS if k in os.environ]}", flush=True)
        try:
            dist.init_process_group("gloo", timeout=timedelta(seconds=10))
        except ValueError:
            traceback.print_exc()
            sys.stderr.flush()
        os.environ[v] = values[v]
    for v in VARS:
        os.environ.pop(v, None)

    print("== same code under torchrun --nproc-per-node=2 (it sets the variables)", flush=True)
    rc = subprocess.call([
        sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=2",
        "--master-addr=127.0.0.1", f"--master-port={free_port()}", "--max-restarts=0",
        os.path.abspath(__file__), "--worker",
    ], timeout=90)
    print(f"== torchrun exited with {rc}", flush=True)
    return 1


if __name__ == "__main__":
    if "--worker" in sys.argv:
        train()
    else:
        sys.exit(main())
