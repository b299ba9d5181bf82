"""Reproduce gloo's "Timed out waiting <N>ms for recv/send operation to complete".

Run without arguments, the script starts two worker processes (ranks 0 and 1)
on 127.0.0.1 and a free port, with a gloo process-group timeout of 3 s
(1800000 ms, 30 minutes, is the default). After one successful all_reduce,
rank 1 stalls for 6 s (standing in for slow evaluation, a checkpoint save on
one rank, a stuck data loader or a rank that took a different code path),
while rank 0 enters the next collective, then a send whose receiver is late:

    RuntimeError: [.../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:NNN] Timed out waiting 3000ms for recv operation to complete

(scenario 1, an all_reduce) and

    RuntimeError: [.../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:NNN] Timed out waiting 3000ms for send operation to complete

(scenario 2, a large point-to-point send). On timing out, rank 0 closes its
connections, so when rank 1 finally arrives its collective fails with
"Connection closed by peer": the late rank sees the collateral message.
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


def worker(rank, op):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=2,
                            timeout=timedelta(seconds=3))
    t = torch.ones(4)
    dist.all_reduce(t)
    print(f"rank {rank}: first all_reduce ok", flush=True)
    if rank == 1:
        time.sleep(6)  # longer than the 3 s process-group timeout
        try:
            dist.barrier()
        except RuntimeError as exc:
            print(f"rank 1 (late): {exc}", flush=True)
        return
    if op == "allreduce":
        dist.all_reduce(t)
    else:
        dist.send(torch.ones(10_000_000), dst=1)  # 40 MB: cannot complete without a receiver


def run(op):
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(rank), op], env=env)
             for rank in range(2)]
    codes = [p.wait(timeout=40) for p in procs]
    print(f"== {op}: exit codes {codes}", flush=True)
    return any(codes)


def main():
    print("== 1. all_reduce while rank 1 is late", flush=True)
    failed1 = run("allreduce")
    print("== 2. send while rank 1 is late", flush=True)
    failed2 = run("send")
    sys.exit(1 if (failed1 or failed2) else 0)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        i = sys.argv.index("--worker")
        worker(int(sys.argv[i + 1]), sys.argv[i + 2])
    else:
        main()
