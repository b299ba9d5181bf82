"""Reproduce "Distributed package doesn't have NCCL built in".

A CPU-only PyTorch wheel (like the Windows and macOS wheels) is built without
NCCL. The script sets up a one-process env:// rendezvous on 127.0.0.1 and asks
for backend="nccl", which fails inside init_process_group with:

    RuntimeError: Distributed package doesn't have NCCL built in

Then it shows the fallback: the same rendezvous with backend="gloo" works and
an all_reduce runs. On a build that does have NCCL (a Linux CUDA wheel) the
script says so and does not try to reproduce anything.
"""
import os
import socket
import sys
import traceback
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    warnings.simplefilter("always")
    print(f"== torch {torch.__version__}: is_nccl_available()={dist.is_nccl_available()}, "
          f"is_gloo_available()={dist.is_gloo_available()}", flush=True)
    if dist.is_nccl_available():
        print("== this build has NCCL; nothing to reproduce", flush=True)
        return 0
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
                      RANK="0", WORLD_SIZE="1")

    print("== 1. init_process_group(backend='nccl') on a build without NCCL", flush=True)
    try:
        dist.init_process_group("nccl", timeout=timedelta(seconds=20))
    except Exception:
        traceback.print_exc()
        sys.stderr.flush()

    print("== 2. same rendezvous with backend='gloo'", flush=True)
    os.environ["MASTER_PORT"] = str(free_port())
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    t = torch.ones(2)
    dist.all_reduce(t)
    print(f"== gloo all_reduce ok: {t.tolist()}, backend={dist.get_backend()}", flush=True)
    dist.destroy_process_group()
    return 1


if __name__ == "__main__":
    sys.exit(main())
