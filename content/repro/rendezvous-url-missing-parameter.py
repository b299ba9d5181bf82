"""Reproduce the rendezvous-URL errors of init_process_group.

A launch script builds init_method from shell variables, for example WeNet's
recipes once did ``init_method=file://$(readlink -f $INIT_FILE)``. When the
variable or the command substitution comes out empty, the URL is just
``file://`` and PyTorch's file:// rendezvous handler stops at once:

    ValueError: Error initializing torch.distributed using file:// rendezvous: path missing

The same handler family (torch/distributed/rendezvous.py) refuses a tcp://
URL without a port, a file:// or tcp:// URL without a rank or world size,
and (a bare assertion up to 2.9, "hostname cannot be None" from 2.10) a tcp://
URL without a host, and an empty init_method (no scheme at all) ends in
"No rendezvous handler for ://". The script shows each one in a single process, then runs
two gloo processes with a complete file:// URL (absolute path, rank and
world_size given), which succeeds.
"""
import os
import socket
import sys
import tempfile
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(label, init_method, **kwargs):
    print(f"== {label}: init_method={init_method!r} {kwargs}", flush=True)
    try:
        dist.init_process_group("gloo", init_method=init_method,
                                timeout=timedelta(seconds=10), **kwargs)
    except (ValueError, AssertionError, RuntimeError):
        traceback.print_exc()
        sys.stderr.flush()
    else:
        dist.destroy_process_group()
        print("   (no error)", flush=True)


def worker(rank, world_size, init_method):
    dist.init_process_group("gloo", init_method=init_method, rank=rank,
                            world_size=world_size, timeout=timedelta(seconds=30))
    t = torch.ones(1)
    dist.all_reduce(t)
    print(f"== rank {dist.get_rank()}/{dist.get_world_size()} all_reduce -> {t.item()}",
          flush=True)
    dist.destroy_process_group()


def main():
    init_file = ""  # the shell variable that came out empty
    attempt("empty path variable", "file://" + init_file, rank=0, world_size=1)
    attempt("relative name after file:// (taken as a host, no path)", "file://ddp_init",
            rank=0, world_size=1)
    with tempfile.TemporaryDirectory() as d:
        attempt("file:// path but no rank", "file://" + os.path.join(d, "ddp_init"),
                world_size=1)
    attempt("whole URL empty (no scheme)", "", rank=0, world_size=1)
    attempt("tcp:// without a port", "tcp://127.0.0.1", rank=0, world_size=1)
    port = free_port()
    attempt("tcp:// without rank and world_size", f"tcp://127.0.0.1:{port}")
    attempt("tcp:// with rank but no world_size", f"tcp://127.0.0.1:{port}", rank=0)
    attempt("tcp:// without a host", f"tcp://:{port}", rank=0, world_size=1)

    with tempfile.TemporaryDirectory() as d:
        good = "file://" + os.path.abspath(os.path.join(d, "ddp_init"))
        print(f"== complete URL, 2 processes: {good}", flush=True)
        mp.spawn(worker, args=(2, good), nprocs=2, join=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
