"""Reproduce torchrun's elastic agent dying on SIGHUP when its terminal hangs up, even under nohup.

Linux only (needs bash, setsid and a pseudo-terminal); no GPU. Run without
arguments. For each mode the script opens a pseudo-terminal, starts an
interactive bash on it (standing in for an SSH login shell), types one
command line into it, waits until both workers have started, then closes the
terminal, which is what the kernel does when the SSH connection drops or
the terminal window is closed. bash gets SIGHUP and, before it exits,
sends SIGHUP to every job in its job table.

Modes (default: nohup setsid):

  nohup   nohup torchrun ... > LOG 2>&1 &
          nohup set SIGHUP to "ignore", but the elastic agent installs its
          own handler for SIGHUP when it starts the workers, so the signal
          bash forwards raises SignalException in the agent. The log shows

            W... torch/distributed/elastic/agent/server/api.py:NNN] Received 1 death signal, shutting down workers
            W... torch/distributed/elastic/multiprocessing/api.py:NNN] Sending process N closing signal SIGHUP
            ...
            torch.distributed.elastic.multiprocessing.api.SignalException: Process N got signal: 1

          and the workers stop before finishing.
  setsid  setsid torchrun ... > LOG 2>&1 < /dev/null &
          the job is in a new session, has no controlling terminal and is
          not in bash's job table: nothing is sent, the workers finish.
  disown  nohup torchrun ... > LOG 2>&1 & disown
          bash forgets the job, so it sends it nothing: the workers finish.
  sigs    nohup torchrun --signals-to-handle=SIGTERM,SIGINT,SIGQUIT ... &
          (torch 2.10 and later) the agent leaves SIGHUP alone, nohup's
          "ignore" stays in force in the agent and its workers: they finish.

Each worker also prints the SIGHUP disposition it inherited: 0 (default)
under plain nohup, because the agent's handler, not nohup's "ignore", was in
place when it started them; 1 (ignore) in the `sigs` mode.
"""
import os
import pty
import select
import signal
import socket
import sys
import tempfile
import time

STEPS = 8  # seconds a worker runs when nothing interrupts it


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker():
    rank = os.environ["RANK"]
    beats = os.environ["REPRO_BEAT_DIR"]
    print(f"rank {rank}: inherited SIGHUP disposition {int(signal.getsignal(signal.SIGHUP))}", flush=True)
    for step in range(STEPS):
        with open(os.path.join(beats, f"rank{rank}"), "w") as f:
            f.write(str(step))
        time.sleep(1)
    print(f"rank {rank}: finished all {STEPS} steps", flush=True)


def drain(fd, seconds):
    """Read (and drop) what bash writes to the terminal for a while."""
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                if not os.read(fd, 4096):
                    return
            except OSError:
                return


def command_line(mode, beats, log):
    extra = "--signals-to-handle=SIGTERM,SIGINT,SIGQUIT " if mode == "sigs" else ""
    torchrun = (f"{sys.executable} -m torch.distributed.run {extra}--nnodes=1 --nproc-per-node=2 "
                f"--master-addr=127.0.0.1 --master-port={free_port()} {os.path.abspath(__file__)} worker")
    env = f"REPRO_BEAT_DIR={beats}"
    return {
        "nohup": f"{env} nohup {torchrun} > {log} 2>&1 &",
        "setsid": f"{env} setsid {torchrun} > {log} 2>&1 < /dev/null &",
        "disown": f"{env} nohup {torchrun} > {log} 2>&1 & disown",
        "sigs": f"{env} nohup {torchrun} > {log} 2>&1 &",
    }[mode]


def run_in_terminal(mode, workdir):
    log = os.path.join(workdir, f"{mode}.log")
    beats = os.path.join(workdir, f"beats-{mode}")
    os.makedirs(beats)
    pid, fd = pty.fork()
    if pid == 0:  # child: an interactive shell on the new terminal
        os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
    drain(fd, 1.0)
    os.write(fd, (command_line(mode, beats, log) + "\n").encode())
    end = time.time() + 60
    while time.time() < end and len(os.listdir(beats)) < 2:
        drain(fd, 0.2)
    print(f"[{mode}] both workers running; closing the terminal (hangup)", flush=True)
    os.close(fd)
    os.waitpid(pid, 0)
    end = time.time() + STEPS + 45  # the agent may wait up to 30 s before SIGKILL
    text = ""
    while time.time() < end:
        with open(log) as f:
            text = f.read()
        if "SignalException" in text or text.count("finished all") == 2:
            break
        time.sleep(0.5)
    time.sleep(1)
    with open(log) as f:
        text = f.read()
    print(f"----- [{mode}] torchrun log -----\n{text}", flush=True)
    outcome = "workers finished" if text.count("finished all") == 2 else "job killed by the hangup"
    print(f"[{mode}] result: {outcome}", flush=True)


def main():
    with tempfile.TemporaryDirectory() as workdir:
        for mode in sys.argv[1:] or ["nohup", "setsid"]:
            run_in_terminal(mode, workdir)


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker()
    else:
        main()
