"""Reproduce a rooted collective given a source/destination rank outside its group.

Four CPU processes (gloo, started with torch.multiprocessing.spawn) are laid
out as tensor parallel 2 x data parallel 2, the way Megatron-style code does
it: data-parallel groups {0, 2} and {1, 3}. Each rank then broadcasts over its
own data-parallel group from `src=0`, the pattern DeepSpeed's zero.Init used
before v0.9.3. `src` is a *global* rank, and global rank 0 is not a member of
{1, 3}, so ranks 1 and 3 fail at once (PyTorch 2.2 and later):

    ValueError: Global rank 0 is not part of group <torch.distributed.distributed_c10d.ProcessGroup object at 0x...>

Ranks 0 and 2 complete their broadcast. `reduce(dst=0)` fails the same way,
and `dist.get_global_rank(group, 2)` on a two-member group raises
`ValueError: Group rank 2 is not part of group <...>`.
The fix, asking the group for its first member's global rank
(`dist.get_global_rank(group, 0)` or `dist.get_process_group_ranks(group)[0]`),
then works on every rank. The process group timeout is 10 s.
"""
import os
import socket
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 4
TP = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(rank, what, fn):
    try:
        fn()
        print(f"rank {rank}: {what}: ok", flush=True)
    except Exception as e:  # print the line Python would end the traceback with
        print(f"rank {rank}: {what}: failed", flush=True)
        print("".join(traceback.format_exception_only(type(e), e)).strip(), flush=True)


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=10))
    try:
        # Every rank creates every data-parallel group, in the same order.
        dp_group = None
        for first in range(TP):
            ranks = list(range(first, WORLD_SIZE, TP))  # [0, 2] and [1, 3]
            g = dist.new_group(ranks)
            if rank in ranks:
                dp_group = g
        members = dist.get_process_group_ranks(dp_group)
        print(f"rank {rank}: data-parallel group {members}", flush=True)

        t = torch.full((4,), float(rank))
        attempt(rank, "broadcast(src=0, group=dp_group)",
                lambda: dist.broadcast(t, src=0, group=dp_group))
        dist.barrier()
        attempt(rank, "reduce(dst=0, group=dp_group)",
                lambda: dist.reduce(t, dst=0, group=dp_group))
        dist.barrier()

        # The reverse lookup refuses a group rank the group does not have.
        attempt(rank, "get_global_rank(dp_group, 2)",
                lambda: dist.get_global_rank(dp_group, 2))

        # The fix: name the group's first member by its global rank.
        src = dist.get_global_rank(dp_group, 0)
        t = torch.full((4,), float(rank))
        attempt(rank, f"broadcast(src=dist.get_global_rank(dp_group, 0)={src})",
                lambda: dist.broadcast(t, src=src, group=dp_group))
        print(f"rank {rank}: after fixed broadcast t[0] = {t[0].item():.0f} (expected {members[0]})", flush=True)
        dist.barrier()
    finally:
        dist.destroy_process_group()


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
