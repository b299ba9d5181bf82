"""Reproduce a process whose rank is not smaller than the world size it was given.

Everything runs on CPU with gloo on 127.0.0.1, on free ports.

1. Three processes join a job that declares world_size=2, with ranks 0, 1
   and 2 (a surplus worker, or a node whose ranks were counted past the
   end). PyTorch itself does not compare rank with world size; gloo's
   Context constructor does, so the rank-2 process stops with
       RuntimeError: [enforce fail at .../gloo/context.cc:23] rank < size. 2 vs 2
   while ranks 0 and 1 form a complete world of two and carry on. (Under
   NCCL the same process gets "NCCL WARN Invalid rank requested : 2/2" from
   ncclCommInitRank instead; that needs GPUs and is not run here.)
2. torchrun with the static rendezvous: --nnodes=2 and --node-rank 0 on one
   "node", --node-rank 2 on the other (node ranks counted 0, 2 instead of
   0, 1). torchrun does not check the node rank against --nnodes; the
   rank-assignment step waits for a node 1 that never comes and for ranks
   it never writes, and both agents fail after the rendezvous timeout
   (5 s here, 600 s by default): node rank 2 with
       DistStoreError: wait timeout after 5000ms, keys: /none/torchelastic/assigned_ranks/2
   and node rank 0 with
       DistStoreError: wait timeout after 5000ms, keys: /none/torchelastic/role_info/0, /none/torchelastic/role_info/1
3. The pre-flight check from the entry's fix rejects the same numbers
   before any process group is created.
"""
import datetime
import os
import socket
import subprocess
import sys
import time
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_identity(rank, world_size, local_rank=None, local_world_size=None):
    """Fail fast, with the numbers, before init_process_group."""
    if world_size < 1:
        raise SystemExit(f"WORLD_SIZE={world_size}: must be at least 1")
    if not 0 <= rank < world_size:
        raise SystemExit(f"RANK={rank} is outside 0..{world_size - 1} (WORLD_SIZE={world_size}); "
                         "the launch line counts more processes than it declares")
    if local_rank is not None and local_world_size is not None and not 0 <= local_rank < local_world_size:
        raise SystemExit(f"LOCAL_RANK={local_rank} is outside 0..{local_world_size - 1}")


def worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    try:
        dist.init_process_group("gloo", rank=rank, world_size=world_size,
                                timeout=datetime.timedelta(seconds=20))
    except RuntimeError:
        print(f"== rank {rank} of world_size {world_size}: init_process_group failed", flush=True)
        traceback.print_exc()
        sys.stderr.flush()
        return
    t = torch.ones(1)
    dist.all_reduce(t)
    print(f"== rank {rank}/{world_size}: all_reduce -> {t.item()} (the valid ranks formed a world)", flush=True)
    time.sleep(4)  # keep rank 0's store up until the surplus process has connected
    dist.destroy_process_group()


def part1():
    print("== 1. world_size=2, ranks 0, 1, 2 (gloo)", flush=True)
    port = free_port()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(r, 2, port)) for r in (2, 0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(40)


def part2():
    print("== 2. torchrun static rendezvous, --nnodes=2, node ranks 0 and 2", flush=True)
    port = free_port()
    common = [sys.executable, "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=1",
              "--master-addr=127.0.0.1", f"--master-port={port}", "--rdzv-conf=timeout=5",
              "--max-restarts=0", os.path.abspath(__file__), "--worker"]
    agents = [subprocess.Popen(common[:3] + [f"--node-rank={n}"] + common[3:], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True) for n in (0, 2)]
    for n, a in zip((0, 2), agents):
        out, _ = a.communicate(timeout=60)
        last = [line for line in out.splitlines() if line.strip()][-1:]
        print(f"== agent --node-rank={n} exited with {a.returncode}; its last line:", flush=True)
        print(last[0] if last else "", flush=True)


def part3():
    print("== 3. the pre-flight check on the same numbers", flush=True)
    for rank, world in ((2, 2), (1, 2)):
        try:
            check_identity(rank, world)
            print(f"== RANK={rank} WORLD_SIZE={world}: ok", flush=True)
        except SystemExit as e:
            print(f"== refused: {e}", flush=True)


def torchrun_worker():
    check_identity(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
    dist.destroy_process_group()


if __name__ == "__main__":
    if "--worker" in sys.argv:
        torchrun_worker()
    else:
        part1()
        part2()
        part3()
        sys.exit(1)
