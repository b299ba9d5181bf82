"""Reproduce "No backend type associated with device type cpu".

A process group only has backends for the device types it was created with.
`init_process_group("nccl")` registers NCCL for "cuda" and nothing for "cpu",
so a collective on a CPU tensor finds no backend. This CPU-only script cannot
create an NCCL group, so it builds a group with the same shape: the composite
backend string "cuda:gloo" registers a backend for "cuda" only (as "nccl" does),
then calls all_reduce on a CPU tensor in one process (world size 1; the lookup
fails before any communication):

    RuntimeError: No backend type associated with device type cpu

It then shows the two fixes that work without a GPU: a composite string that
also names a CPU backend ("cpu:gloo,cuda:gloo"; on GPU machines
"cpu:gloo,cuda:nccl"), and a separate gloo group for CPU-side collectives.
"""
import os
import socket

import torch
import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def init(backend):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_port())
    dist.init_process_group(backend, rank=0, world_size=1)


def main():
    print(f"torch {torch.__version__}", flush=True)

    print("== 1. group with a backend for 'cuda' only, CPU tensor", flush=True)
    init("cuda:gloo")
    try:
        dist.all_reduce(torch.ones(4))
        print("no error", flush=True)
    except RuntimeError as exc:
        print(f"{type(exc).__name__}: {exc}", flush=True)
    dist.destroy_process_group()

    print("== 2. composite backend naming cpu too", flush=True)
    init("cpu:gloo,cuda:gloo")
    t = torch.ones(4)
    dist.all_reduce(t)
    print(f"all_reduce on cpu ok: {t.tolist()}", flush=True)
    dist.destroy_process_group()

    print("== 3. separate gloo group for CPU tensors", flush=True)
    init("cuda:gloo")
    cpu_group = dist.new_group(backend="gloo")
    t = torch.ones(4)
    dist.all_reduce(t, group=cpu_group)
    print(f"all_reduce on cpu via gloo group ok: {t.tolist()}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
