"""Reproduce ShardedTensor's cross-rank metadata checks (init_from_local_shards).

Everything runs on CPU: three processes in a gloo world on 127.0.0.1.

1. TorchRec 0.5.0 arithmetic for a row-wise sharded managed-collision table
   of 1000 rows on 3 ranks. Row-wise sharding gives ceil(1000 / 3) = 334 rows
   to each rank and the remainder (332) to the last one. Each rank then
   derives the global size as its own row count x world size (and the offset
   as its own row count x rank), so ranks 0 and 1 pass 1002 and rank 2 passes
   996. The all-gathered metadata disagree and every rank raises
       ValueError: ShardedTensor global_size property does not match from
       different ranks! Found global_size=torch.Size([1002]) on rank:0, and
       global_size=torch.Size([996]) on rank:2.
   (1b does the same for a 2-D weight of 1000 x 8.)
2. The same shards with the global size and offsets taken from an
   all_gather of the real row counts (what TorchRec 0.6.0 and later do)
   build a ShardedTensor of 1000 rows. On PyTorch 2.8 and later, passing
   None for the sharded dimension (2b) lets PyTorch sum the gathered row
   counts itself and rewrite the offsets.
3. The sibling checks in the same function: one rank holding a float16
   shard while the others hold float32, then one rank whose shard does not
   require grad.
4. The per-rank checks that run before any communication: a shard tensor
   whose size differs from its ShardMetadata (refused by Shard itself), and
   two local shards of different dtypes, then of different requires_grad.
   Every rank makes the same mistake here, so all of them fail before the
   collective instead of leaving the others waiting.
5. Every rank passes an empty shard list.
"""
import math
import os
import socket
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed._shard.sharded_tensor import Shard, init_from_local_shards
from torch.distributed._shard.sharding_spec import ShardMetadata

ROWS, DIM = 1000, 8


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rw_rows(rows, world):
    """Row-wise shard sizes as TorchRec's planner computes them (ceil blocks, short tail)."""
    block = math.ceil(rows / world)
    return [max(0, min(block, rows - block * r)) for r in range(world)]


def attempt(label, rank, fn):
    try:
        st = fn()
        print(f"{label}: rank {rank}: built ShardedTensor of size {tuple(st.metadata().size)}", flush=True)
    except ValueError:
        if rank == 0:
            traceback.print_exc()
        else:
            print(f"{label}: rank {rank} raised the same ValueError", flush=True)


def shard(tensor, offsets, rank):
    return Shard(tensor, ShardMetadata(shard_offsets=offsets, shard_sizes=list(tensor.size()),
                                       placement=f"rank:{rank}/cpu"))


def worker(rank, world, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    mine = rw_rows(ROWS, world)[rank]
    buf = torch.zeros(mine, dtype=torch.int64)

    # 1. global size and offset from the local row count alone (TorchRec 0.5.0)
    attempt("part 1", rank, lambda: init_from_local_shards(
        [shard(buf, [mine * rank], rank)], mine * world))
    # 1b. the same arithmetic for a 2-D embedding weight (rows x DIM)
    attempt("part 1b", rank, lambda: init_from_local_shards(
        [shard(torch.zeros(mine, DIM), [mine * rank, 0], rank)], mine * world, DIM))

    # 2. global size and offsets from the gathered row counts (TorchRec 0.6.0+)
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(sizes, torch.tensor([mine]))
    cum = torch.cumsum(torch.cat(sizes), 0).tolist()
    attempt("part 2", rank, lambda: init_from_local_shards(
        [shard(buf, [cum[rank] - mine], rank)], cum[-1]))

    # 2b. PyTorch 2.8+: None for the sharded dimension lets PyTorch derive it
    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 8):
        attempt("part 2b", rank, lambda: init_from_local_shards(
            [shard(torch.zeros(mine, DIM), [0, 0], rank)], None, DIM))

    # 3. same global size everywhere, but dtype / requires_grad differ on one rank
    offset = sum(rw_rows(ROWS, world)[:rank])
    dtype = torch.float16 if rank == world - 1 else torch.float32
    w = torch.zeros(mine, DIM, dtype=dtype)
    attempt("part 3a", rank, lambda: init_from_local_shards([shard(w, [offset, 0], rank)], ROWS, DIM))
    w = torch.zeros(mine, DIM, requires_grad=(rank != 1))
    attempt("part 3b", rank, lambda: init_from_local_shards([shard(w, [offset, 0], rank)], ROWS, DIM))

    # 4. per-rank checks (raised before the all_gather)
    w = torch.zeros(mine, DIM)
    attempt("part 4a", rank, lambda: init_from_local_shards(
        [Shard(w, ShardMetadata(shard_offsets=[offset, 0], shard_sizes=[mine + 2, DIM],
                                placement=f"rank:{rank}/cpu"))], ROWS, DIM))
    half = mine // 2
    pieces = [shard(torch.zeros(half, DIM), [offset, 0], rank),
              shard(torch.zeros(mine - half, DIM, dtype=torch.bfloat16), [offset + half, 0], rank)]
    attempt("part 4b", rank, lambda: init_from_local_shards(pieces, ROWS, DIM))
    pieces = [shard(torch.zeros(half, DIM, requires_grad=True), [offset, 0], rank),
              shard(torch.zeros(mine - half, DIM), [offset + half, 0], rank)]
    attempt("part 4c", rank, lambda: init_from_local_shards(pieces, ROWS, DIM))

    # 5. no rank holds a shard at all
    attempt("part 5", rank, lambda: init_from_local_shards([], ROWS, DIM))

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    print("torch", torch.__version__, "rows per rank", rw_rows(ROWS, 3), flush=True)
    mp.spawn(worker, args=(3, free_port()), nprocs=3, join=True)
