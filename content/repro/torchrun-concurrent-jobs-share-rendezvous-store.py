"""Reproduce two torchrun jobs that share one c10d rendezvous endpoint.

Run without arguments, the script starts pairs of single-node torchrun "jobs"
on 127.0.0.1 that were meant to be independent but are given the same
--rdzv-endpoint (as a copied launch script or a hard-coded port would do).
The second job's agent cannot bind the port, silently becomes a client of the
first job's store, and from then on the two jobs are coupled:

1. Same endpoint, default run id ("none"), --nnodes=1:2, started together:
   both agents form ONE rendezvous; each job's worker sees WORLD_SIZE=2 and
   job B's worker becomes rank 1 of job A's world.
2. Same endpoint and run id, job A already running: job B's agent waits for
   the next round, and job A's agent logs (LOGLEVEL=INFO)
       [default] Detected 1 new nodes from group_rank=0; will restart worker group
   and kills its healthy worker to re-form the group with the foreign node.
3. Same endpoint, DIFFERENT run ids: both jobs run, each in its own world,
   but job B's rendezvous lives in job A's store. When job A finishes, its
   agent takes the store down and job B is torn down with
       The node '...' has failed to shutdown the rendezvous 'job-b' due to
       an error of type RendezvousConnectionError.

Workers only print their environment and sleep; no collective is issued.
Output lines are passed through unchanged; "== job X: agent pid N" tells which
job's agent printed a line (the pid after the timestamp).
Every process the script starts is stopped by its own process group id.
"""
import os
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.abspath(__file__)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(tag, port, nnodes, sleep, run_id=None, extra=(), loglevel="WARNING"):
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nnodes={nnodes}", "--nproc-per-node=1",
           "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}", "--monitor-interval=0.5", *extra]
    if run_id:
        cmd.append(f"--rdzv-id={run_id}")
    cmd += [HERE, "--worker", tag, str(sleep)]
    print(f"== job {tag}: torchrun " + " ".join(cmd[3:-3]) + " ...", flush=True)
    env = dict(os.environ, LOGLEVEL=loglevel)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True, bufsize=1)
    print(f"== job {tag}: agent pid {proc.pid}", flush=True)
    proc.seen = []
    proc.event = threading.Event()

    def pump():
        for line in proc.stdout:
            line = line.rstrip("\n")
            if "launcher/api.py" in line or line.startswith("frame #"):
                continue  # launch banner and C++ frames: noise here
            print(line, flush=True)  # as torchrun printed it; agent lines carry the agent's pid
            proc.seen.append(line)
            proc.event.set()

    proc.pump = threading.Thread(target=pump, daemon=True)
    proc.pump.start()
    return proc


def wait_for(proc, text, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any(text in line for line in proc.seen):
            return True
        proc.event.wait(0.2)
        proc.event.clear()
    return False


def stop(*procs):
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the group of this torchrun and its worker only
            except ProcessLookupError:
                pass
        p.wait(timeout=20)
        p.pump.join(timeout=5)


def part1():
    print("\n=== 1: same endpoint, default run id, both jobs started together", flush=True)
    port = free_port()
    a = torchrun("A1", port, "1:2", 2)
    time.sleep(2)
    b = torchrun("B1", port, "1:2", 2)
    a.wait(timeout=40)
    b.wait(timeout=40)
    stop(a, b)


def part2():
    print("\n=== 2: same endpoint and run id, job B started while job A trains", flush=True)
    port = free_port()
    a = torchrun("A2", port, "1:2", 30, extra=["--rdzv-conf=last_call_timeout=1"], loglevel="INFO")
    wait_for(a, "worker A2 started", 30)
    b = torchrun("B2", port, "1:2", 30, extra=["--rdzv-conf=last_call_timeout=1"], loglevel="INFO")
    found = wait_for(a, "new nodes from group_rank=", 20)
    time.sleep(1)
    stop(a, b)  # the re-formed group would otherwise wait for the store timeout
    print(f"== job A2 restarted its worker for job B's agent: {found}", flush=True)
    return found


def part3():
    print("\n=== 3: same endpoint, different run ids; job A ends first", flush=True)
    port = free_port()
    a = torchrun("A3", port, "1", 4, run_id="job-a")
    wait_for(a, "worker A3 started", 30)
    b = torchrun("B3", port, "1", 30, run_id="job-b")
    rc_a = a.wait(timeout=40)
    try:
        rc_b = b.wait(timeout=30)
    except subprocess.TimeoutExpired:
        rc_b = None
    stop(a, b)
    print(f"== job A3 exited with {rc_a}; job B3 (worker meant to run 30 s) exited with {rc_b}", flush=True)
    return rc_b not in (0, None)


def worker(tag, sleep):
    env = os.environ
    print(f"worker {tag} started: RANK={env['RANK']} WORLD_SIZE={env['WORLD_SIZE']} "
          f"GROUP_RANK={env['GROUP_RANK']} TORCHELASTIC_RUN_ID={env['TORCHELASTIC_RUN_ID']}", flush=True)
    time.sleep(sleep)
    print(f"worker {tag} finished", flush=True)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        i = sys.argv.index("--worker")
        worker(sys.argv[i + 1], float(sys.argv[i + 2]))
    else:
        part1()
        restarted = part2()
        torn_down = part3()
        sys.exit(1 if (restarted and torn_down) else 0)
