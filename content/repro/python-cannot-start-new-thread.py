"""Reproduce RuntimeError: can't start new thread from a leaked ThreadPoolExecutor per step.

A child process gets a small RLIMIT_NPROC (on Linux it counts the threads of its real
user ID) and then runs a "training loop" whose every step creates a new executor and
submits a polling task that never finishes, the way a per-step poller leaks threads.
Root is exempt from RLIMIT_NPROC, so when run as root the child first drops to the
unprivileged uid/gid 65534. Linux only; finishes in about a second.
"""
import concurrent.futures
import concurrent.futures.thread  # imported before dropping privileges, as the stdlib may be unreadable afterwards
import os
import resource
import sys
import threading
import traceback

EXTRA_THREADS = 8  # threads the loop may add before the limit is reached


def tasks_of_uid(uid):
    count = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                if os.stat(f"/proc/{pid}/task/{tid}").st_uid == uid:
                    count += 1
        except OSError:
            pass
    return count


def leaky_loop():
    stop = threading.Event()
    for step in range(100):
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)  # a new pool every step, never shut down
        pool.submit(stop.wait)  # the "poll" never returns, so its worker thread never exits
        status = open("/proc/self/status").read()
        threads = [line for line in status.splitlines() if line.startswith("Threads:")][0]
        print(f"step {step}: {threads}", flush=True)
    stop.set()


def child():
    if os.getuid() == 0:
        os.setgid(65534)
        os.setuid(65534)
    limit = tasks_of_uid(os.getuid()) + EXTRA_THREADS
    resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
    print(f"RLIMIT_NPROC set to {limit}", flush=True)
    try:
        leaky_loop()
    except RuntimeError:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)
    pid = os.fork()
    if pid == 0:
        child()
    _, status = os.waitpid(pid, 0)
    print(f"child exit status {os.waitstatus_to_exitcode(status)}")
