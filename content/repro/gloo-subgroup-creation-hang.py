"""Reproduce a gloo subgroup whose creation blocks until the store wait times out.

Run without arguments, the script starts two worker processes (ranks 0 and 1)
on 127.0.0.1 and a free port, with a gloo world group and 3 s timeouts
(1800000 ms, 30 minutes, is the default). Only rank 0 creates a one-rank
helper group first, as code written `if rank in ranks: new_group(ranks)`
does; then both ranks create the pair group [0, 1]. Subgroups are named
from a per-process counter, so rank 0 calls the pair group "2" while rank 1
calls it "1", and rank 0's gloo connection set-up waits for a store key that
rank 1 never writes:

    torch.distributed.DistStoreError: wait timeout after 3000ms, keys: /default_pg/0//2//cpu//0/1

Scenario "missing" shows the plainer form: rank 1 never calls new_group at
all, and rank 0 waits for the same kind of key under group name "1".
"""
import os
import socket
import subprocess
import sys
import time
from datetime import timedelta


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, scenario):
    import torch.distributed as dist

    timeout = timedelta(seconds=3)
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=timeout)
    try:
        if scenario == "order":
            if rank == 0:  # only the member calls it: the counters now differ
                dist.new_group([0], backend="gloo", timeout=timeout)
            dist.new_group([0, 1], backend="gloo", timeout=timeout)
            print(f"rank {rank}: pair group created", flush=True)
        else:
            if rank == 0:
                dist.new_group([0, 1], backend="gloo", timeout=timeout)
                print("rank 0: pair group created", flush=True)
            else:
                time.sleep(8)  # rank 1 skips new_group and stays alive
    except Exception as exc:  # noqa: BLE001 - print what the rank raised
        print(f"rank {rank}: {type(exc).__module__}.{type(exc).__name__}: {exc}", flush=True)
    os._exit(0)  # skip destroy_process_group: the peer may be gone


def main():
    if len(sys.argv) == 4:
        worker(int(sys.argv[1]), sys.argv[3])
        return
    for scenario in ("order", "missing"):
        print(f"--- scenario {scenario}", flush=True)
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
        procs = [subprocess.Popen([sys.executable, __file__, str(r), "2", scenario], env=env)
                 for r in range(2)]
        for p in procs:
            p.wait(timeout=50)


if __name__ == "__main__":
    main()
