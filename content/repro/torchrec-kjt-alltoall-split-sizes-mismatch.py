"""Reproduce, with plain torch.distributed on CPU (gloo), the two errors that
TorchRec's KeyedJaggedTensor all-to-all (KJTAllToAll in
torchrec/distributed/dist_data.py) runs into when a KJT's lengths or split
sizes are corrupt. TorchRec itself is not needed: the script performs the same
two steps its input distribution performs, on a world of 2 processes.

Step A (SplitsAllToAllAwaitable): every rank sends, to every other rank, how
many values of its KJT belong to that rank (the sum of the lengths of the
features routed there) and receives the matching counts from its peers.
Step B (KJTAllToAllTensorsAwaitable): every rank allocates
torch.empty(sum(received counts)) and calls
dist.all_to_all_single(output, values, output_split_sizes=received,
input_split_sizes=sent).

1. Lengths that disagree with values. Each rank's KJT has lengths that add
   up to fewer values than the values tensor holds (what an index-dedup path
   produces when IDs lie outside a table's range). Step A succeeds; step B
   raises on every rank
       RuntimeError: Split sizes doesn't match total dim 0 size
2. Garbage counts. One rank's lengths hold a huge value and the other's a
   negative one (uninitialised or overflowed memory). Step A carries the
   garbage to the peer, whose allocation in step B fails with
       RuntimeError: Trying to create tensor with negative dimension -N: [-N]
   or
       RuntimeError: Storage size calculation overflowed with sizes=[N]
3. The same exchange with consistent lengths succeeds on both ranks.
"""
import os
import socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def say(text):
    # one write per message, so that the two ranks' lines do not interleave
    os.write(1, (text + "\n").encode())


def kjt_all_to_all(lengths, values, world):
    # Features 0 and 1 go to rank 0, features 2 and 3 to rank 1; batch size 1,
    # so lengths[i] is the number of values of feature i.
    per_dest = lengths.view(world, -1).sum(dim=1)            # values sent to each rank
    recv = torch.empty(world, dtype=per_dest.dtype)
    dist.all_to_all_single(recv, per_dest)                    # step A: exchange the counts
    input_split = per_dest.tolist()
    output_split = recv.tolist()
    output = torch.empty(sum(output_split), dtype=values.dtype)  # step B: allocate ...
    dist.all_to_all_single(                                   # ... and send the values
        output, values, output_split_sizes=output_split, input_split_sizes=input_split
    )
    return output


def expect_failure(rank, part, lengths, values, world):
    """Run one exchange that should fail on this rank and print its first error line."""
    try:
        kjt_all_to_all(lengths, values, world)
        say(f"rank {rank}: part {part} passed (unexpected)")
    except RuntimeError as e:
        say(f"rank {rank}: part {part} failed:\nRuntimeError: {str(e).splitlines()[0]}")
    dist.barrier()


def worker(rank, world, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=30))

    # 1. lengths add up to 5 values, the values tensor holds 6
    lengths = torch.tensor([1, 2, 1, 1], dtype=torch.int64)
    values = torch.arange(6, dtype=torch.int64) + 100 * rank
    expect_failure(rank, 1, lengths, values, world)

    # 2. a garbage length on each rank, in the features that go to the peer
    garbage = [2**61 + 7, -2147483641][rank]
    lengths = torch.tensor([1, 1, 1, 1], dtype=torch.int64)
    lengths[2 if rank == 0 else 0] = garbage
    values = torch.arange(4, dtype=torch.int64)
    expect_failure(rank, 2, lengths, values, world)

    # 3. consistent lengths and values
    lengths = torch.tensor([1, 2, 1, 1], dtype=torch.int64)
    values = torch.arange(5, dtype=torch.int64) + 100 * rank
    out = kjt_all_to_all(lengths, values, world)
    say(f"rank {rank}: part 3: received {out.tolist()}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2, free_port()), nprocs=2, join=True)
