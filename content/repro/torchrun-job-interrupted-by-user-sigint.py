"""Reproduce what torchrun prints when the user presses Ctrl-C (SIGINT) while a job runs.

Linux only; no GPU (gloo on CPU). Run without arguments; about 50 s in all.

Ctrl-C in a terminal makes the kernel send SIGINT to every process of the
terminal's foreground process group. The script stands in for that: it starts
`python -m torch.distributed.run` (torchrun) with two workers in a process
group of its own, waits until both workers are running, and then sends SIGINT
to that whole group with os.killpg(), which is what the terminal does.

Modes (default: running stuck):

  running  both workers are busy in Python code (a sleep loop). The elastic
           agent logs `Received 2 death signal, shutting down workers` and
           `Sending process N closing signal SIGINT` per worker, the workers
           end with a KeyboardInterrupt traceback within a second, and the
           agent ends with
             torch.distributed.elastic.multiprocessing.api.SignalException: Process N got signal: 2
  stuck    each worker waits to receive a tensor from the other, a deadlock:
           the job "looks stuck". A rank blocked inside a collective or
           point-to-point call cannot run Python's SIGINT handler, so the
           forwarded SIGINT does nothing; after its shutdown timeout (30 s)
           the agent logs
             Unable to shutdown process N via 2, forcefully exiting via 9
           and kills the workers with SIGKILL.
  twice    the stuck job again, with a second SIGINT one second after the
           first (pressing Ctrl-C twice): the agent gives up on SIGINT and
           sends `closing signal SIGTERM`, which ends the blocked workers at
           once (they have no SIGTERM handler).
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker():
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank, peer = dist.get_rank(), 1 - dist.get_rank()
    t = torch.ones(1)
    dist.all_reduce(t)
    with open(os.path.join(os.environ["REPRO_BEAT_DIR"], f"rank{rank}"), "w") as f:
        f.write("running")
    if os.environ["REPRO_MODE"] in ("stuck", "twice"):
        print(f"rank {rank}: waiting for a tensor from rank {peer} (never sent)", flush=True)
        dist.recv(torch.zeros(1), src=peer)
    for step in range(60):
        if step % 5 == 0:
            print(f"rank {rank}: step {step}", flush=True)
        time.sleep(1)
    print(f"rank {rank}: finished", flush=True)


def run(mode, workdir):
    beats = os.path.join(workdir, f"beats-{mode}")
    os.makedirs(beats)
    env = dict(os.environ, REPRO_MODE=mode, REPRO_BEAT_DIR=beats)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=2",
           "--master-addr=127.0.0.1", f"--master-port={free_port()}", os.path.abspath(__file__), "worker"]
    log_path = os.path.join(workdir, f"{mode}.log")
    with open(log_path, "w") as log:
        agent = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    end = time.time() + 60
    while time.time() < end and len(os.listdir(beats)) < 2 and agent.poll() is None:
        time.sleep(0.2)
    time.sleep(1)
    print(f"[{mode}] both workers running; sending SIGINT to the job's process group (Ctrl-C)", flush=True)
    sent = time.time()
    os.killpg(agent.pid, signal.SIGINT)
    if mode == "twice":
        time.sleep(1)
        print(f"[{mode}] sending a second SIGINT (Ctrl-C again)", flush=True)
        os.killpg(agent.pid, signal.SIGINT)
    try:
        agent.wait(75)
    except subprocess.TimeoutExpired:
        os.killpg(agent.pid, signal.SIGKILL)
        agent.wait()
    took = time.time() - sent
    with open(log_path) as f:
        print(f"----- [{mode}] torchrun log -----\n{f.read()}", flush=True)
    print(f"[{mode}] result: agent exit status {agent.returncode}, {took:.1f} s after the first SIGINT", flush=True)


def main():
    with tempfile.TemporaryDirectory() as workdir:
        for mode in sys.argv[1:] or ["running", "stuck"]:
            run(mode, workdir)


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker()
    else:
        main()
