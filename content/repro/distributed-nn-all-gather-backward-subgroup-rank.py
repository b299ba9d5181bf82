"""Backward of torch.distributed.nn.functional.all_gather on a subgroup (gloo, CPU).

Four ranks, two subgroups of two ({0, 1} and {2, 3}), as in sequence
parallelism with a degree of 2 on a world of 4. Each rank gathers a small
tensor inside its own subgroup and back-propagates through the gather.

1. The autograd all_gather of torch.distributed.nn.functional. On the NCCL
   backend, PyTorch releases before 2.3 indexed the tuple of gradients (one
   per member of the subgroup) with the global rank and failed with
   IndexError: tuple index out of range; from 2.3 they use the group rank.
   That branch needs NCCL and cannot run here. On gloo the backward takes the
   other branch, an all-to-all emulated with scatter calls whose source is the
   group rank i passed where dist.scatter expects a global rank. With torch
   2.13 the subgroup {0, 1} gets through (its group ranks equal its global
   ranks) and the subgroup {2, 3} fails in backward with
   ValueError: Global rank 0 is not part of group ...

2. The workaround that works on every release and backend: aggregate the
   loss with torch.distributed.nn.functional.all_reduce on the subgroup.

3. Where it exists (torch 2.13), the functional-collectives gather with
   autograd, all_gather_single_autograd, on the same subgroup.

The process group timeout is 20 s so that nothing can hang for long.
"""
import os
import socket
import traceback
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 4
SP_SIZE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=20))
    groups = [dist.new_group(list(range(s, s + SP_SIZE))) for s in range(0, WORLD_SIZE, SP_SIZE)]
    group = groups[rank // SP_SIZE]
    group_rank = dist.get_rank(group=group)

    # 1. torch.distributed.nn.functional.all_gather (deprecated in 2.13, still shipped).
    import torch.distributed.nn.functional as dnnf

    x = torch.full((3,), float(rank), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        gathered = dnnf.all_gather(x, group=group)
    print(
        f"rank {rank}: group rank {group_rank}, {len(gathered)} gathered tensors; "
        f"indexing the gradient tuple with the global rank would ask for item {rank}",
        flush=True,
    )
    loss = sum((i + 1) * t.sum() for i, t in enumerate(gathered))
    try:
        loss.backward()
        print(f"rank {rank}: torch.distributed.nn all_gather backward ok, x.grad={x.grad.tolist()}", flush=True)
    except Exception:
        print(f"rank {rank}: torch.distributed.nn all_gather backward failed:", flush=True)
        traceback.print_exc()
    dist.barrier()

    # 2. Workaround on every release and backend: aggregate with an all-reduce
    #    (its backward is another all-reduce on the same group, no rank index).
    losses = torch.tensor([1.0 + rank], requires_grad=True)   # this rank's loss sum
    tokens = torch.tensor([10.0 + rank])                      # this rank's token count
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        total = dnnf.all_reduce(losses, group=group)
    dist.all_reduce(tokens, group=group)
    (total / tokens).sum().backward()
    print(f"rank {rank}: all_reduce aggregation backward ok, grad={losses.grad.tolist()}", flush=True)
    dist.barrier()

    # 3. The functional-collectives gather with autograd (torch 2.13 name).
    import torch.distributed._functional_collectives as fc

    if hasattr(fc, "all_gather_single_autograd"):
        y = torch.full((3,), float(rank), requires_grad=True)
        out = fc.all_gather_single_autograd(y, 0, group)
        loss3 = sum((i + 1) * t.sum() for i, t in enumerate(out.chunk(SP_SIZE)))
        loss3.backward()
        print(f"rank {rank}: all_gather_single_autograd backward ok, y.grad={y.grad.tolist()}", flush=True)

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    print("torch", torch.__version__, flush=True)
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)
