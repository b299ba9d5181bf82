"""Reproduce torchrun rendezvous failures (timeout, and no store to connect to).

Run without arguments, the script launches itself under
`python -m torch.distributed.run` (torchrun) with the c10d rendezvous
backend on 127.0.0.1 and a free port, in two scenarios:

1. --nnodes=2, but only this one node ever starts (the other node's job
   failed to schedule, or points at another endpoint). The rendezvous waits
   for the second node until join_timeout (5 s here, 600 s by default) and
   the agent fails with:
       torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError
2. The node is told it is not the rendezvous host (rdzv-conf is_host=false)
   and the endpoint has no store listening (the host node is down or the
   endpoint is wrong). The agent cannot reach the store and fails with:
       torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.

The worker function never runs in either case. The script exits non-zero
when at least one scenario failed as expected.
"""
import os
import socket
import subprocess
import sys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(extra):
    cmd = [
        sys.executable, "-m", "torch.distributed.run",
        "--nproc-per-node=1", "--rdzv-backend=c10d",
        f"--rdzv-endpoint=127.0.0.1:{free_port()}", "--rdzv-id=repro",
        "--max-restarts=0", "--monitor-interval=0.5",
        *extra,
        os.path.abspath(__file__), "--worker",
    ]
    print("launching:", " ".join(cmd), flush=True)
    return subprocess.call(cmd, timeout=40)


def main():
    print("== 1. --nnodes=2 but only one node joins", flush=True)
    rc1 = torchrun(["--nnodes=2", "--rdzv-conf=join_timeout=5"])
    print(f"== torchrun exited with {rc1}", flush=True)
    print("== 2. not the rendezvous host, and no store at the endpoint", flush=True)
    rc2 = torchrun(["--nnodes=1", "--rdzv-conf=is_host=false,read_timeout=5,join_timeout=5"])
    print(f"== torchrun exited with {rc2}", flush=True)
    sys.exit(1 if (rc1 or rc2) else 0)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        print("worker started (not expected)", flush=True)
    else:
        main()
