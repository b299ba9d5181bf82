"""Reproduce RendezvousClosedError: a node restarted into a rendezvous that is closed.

Run without arguments, the script starts two torchrun agents ("nodes") on
127.0.0.1 that share one c10d rendezvous (same --rdzv-id and endpoint,
--nnodes=2, --max-restarts=0), the way two pods or two Slurm nodes would:

1. Node A hosts the rendezvous store; its worker just sleeps for a while.
2. Node B joins; its worker fails with exit code 1. With no restarts left,
   B's agent gives up, and on its way out it shuts the rendezvous down,
   which marks it closed for every node of this run id.
3. Node B is started again with the same arguments (a pod or a node
   restarted by its scheduler). It reaches the rendezvous, finds it closed
   and its agent fails at once with:
       torch.distributed.elastic.rendezvous.api.RendezvousClosedError

No collective is ever issued, so no backend is needed. The script exits
non-zero when the restarted node failed as expected.
"""
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(port, role):
    cmd = [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes=2", "--nproc-per-node=1",
        "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}",
        "--rdzv-id=repro-closed", "--max-restarts=0", "--monitor-interval=0.5",
        os.path.abspath(__file__), "--worker", role,
    ]
    print(f"== node {role}: " + " ".join(cmd), flush=True)
    return subprocess.Popen(cmd)


def main():
    port = free_port()
    node_a = torchrun(port, "a")
    time.sleep(3)  # let node A create the store and start waiting
    node_b = torchrun(port, "b")
    rc_b = node_b.wait(timeout=40)
    print(f"== node b exited with {rc_b} (its worker failed, the rendezvous is now closed)", flush=True)
    node_b_again = torchrun(port, "b-restarted")
    rc_again = node_b_again.wait(timeout=40)
    print(f"== restarted node b exited with {rc_again}", flush=True)
    # Node A's worker finishes, but its agent then waits at the exit barrier
    # for node B, which will never come back; stop it here.
    time.sleep(2)
    node_a.kill()
    node_a.wait(timeout=20)
    print("== node a stopped", flush=True)
    sys.exit(1 if rc_again else 0)


def worker(role):
    rank = os.environ.get("RANK")
    print(f"worker of node {role} started as rank {rank}", flush=True)
    if role == "a":
        time.sleep(8)
        return
    time.sleep(1)
    sys.exit(1)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(sys.argv[sys.argv.index("--worker") + 1])
    else:
        main()
