"""Reproduce "AssertionError: can only test a child process" from _MultiProcessingDataLoaderIter.__del__.

A multi-process DataLoader iterator owns multiprocessing.Process handles for its
workers, and multiprocessing only lets the process that started a Process join
it or ask whether it is alive. A process created by fork receives a copy of the
whole heap, iterators included. When the copy is finalised in the child,
__del__ -> _shutdown_workers runs there: it sets the worker "done" event (a
multiprocessing Event shared with the parent's workers), queues stop signals,
then fails in Process.join ("can only join a child process", hidden because
the default unraisable hook prints only the last exception) and in
Process.is_alive ("can only test a child process", the line users see).

Four cases, all on CPU with the default fork start method (Linux):

1. Harmless: an iterator abandoned mid-epoch in a reference cycle is still
   uncollected when a second DataLoader forks its workers. Each worker's
   garbage collector finalises its copy and prints the message once; the
   second loader still returns every batch, and the parent later shuts the
   abandoned iterator down normally.
2. Harmful: a child made with os.fork() drops its copy of an iterator the
   parent is still using. The shared done event is now set, the parent's
   workers stop producing batches, and the parent waits forever (here it
   stops after DataLoader(timeout=5) with "DataLoader timed out after 5 seconds").
3. Harmful: an os.fork() child that ends through normal interpreter exit
   (SystemExit). Unwinding the stack frees the child's copy first (the same
   message as in case 2); then multiprocessing's own atexit function still
   counts the parent's workers among its children, terminates them and fails
   with "can only join a child process". The parent reports
   "DataLoader worker (pid N) is killed by signal: Terminated."
4. Harmful: a child started by multiprocessing (fork) that releases the live
   iterator. Its stop signals reach the parent's workers, which exit; the
   parent fails with "_workers_done_event state does not match shutdown flag".
"""
import gc
import multiprocessing as mp
import os
import sys
import time
import traceback

import torch
from torch.utils.data import DataLoader, TensorDataset

DATA = TensorDataset(torch.arange(64, dtype=torch.float32))
EXPECTED = float(sum(range(64)))
LIVE = {}  # iterators a child process may release (case 4)


def collect_in_worker(worker_id):
    # Stands in for the cyclic collection a busy worker runs sooner or later.
    gc.collect()


class Holder:
    """Keeps an iterator inside a reference cycle, as frames, tracebacks and trainer objects do."""

    def __init__(self, it):
        self.it = it
        self.me = self


def total(batches):
    return float(sum(b[0].sum() for b in batches))


def case_1_abandoned_iterator():
    print("== 1. abandoned iterator collected inside the workers of the next DataLoader", flush=True)
    gc.disable()
    holder = Holder(iter(DataLoader(DATA, batch_size=4, num_workers=2)))
    next(holder.it)
    del holder  # garbage now, but only the cyclic collector can free it
    second = DataLoader(DATA, batch_size=4, num_workers=2, worker_init_fn=collect_in_worker)
    result = total(second)
    print(f"second loader sum {result} (expected {EXPECTED}): result unaffected = {result == EXPECTED}", flush=True)
    gc.enable()
    gc.collect()  # the parent shuts the abandoned iterator down without any error
    print("parent collected the abandoned iterator cleanly", flush=True)


def case_2_fork_drops_live_iterator():
    print("== 2. os.fork() child drops a live iterator the parent keeps using", flush=True)
    it = iter(DataLoader(DATA, batch_size=4, num_workers=2, timeout=5))
    next(it)
    pid = os.fork()
    if pid == 0:
        del it  # __del__ runs in the child
        os._exit(0)
    os.waitpid(pid, 0)
    try:
        print("parent read", 1 + sum(1 for _ in it), "batches", flush=True)
    except RuntimeError:
        traceback.print_exc()
    del it


def case_3_fork_child_exits_normally():
    print("== 3. os.fork() child leaves through normal interpreter exit", flush=True)
    it = iter(DataLoader(DATA, batch_size=4, num_workers=2))
    next(it)
    pid = os.fork()
    if pid == 0:
        raise SystemExit(0)  # atexit handlers run in the child
    try:
        os.waitpid(pid, 0)
        time.sleep(0.5)
        print("parent read", 1 + sum(1 for _ in it), "batches", flush=True)
    except RuntimeError:
        traceback.print_exc()
    finally:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    del it


def release_live_iterators():
    LIVE.clear()  # the child's copy of the iterator is finalised here
    time.sleep(1)


def case_4_mp_child_releases_live_iterator():
    print("== 4. multiprocessing (fork) child releases a live iterator", flush=True)
    LIVE["train"] = iter(DataLoader(DATA, batch_size=4, num_workers=2))
    next(LIVE["train"])
    child = mp.get_context("fork").Process(target=release_live_iterators)
    child.start()
    child.join()
    try:
        print("parent read", 1 + sum(1 for _ in LIVE["train"]), "batches", flush=True)
    except (RuntimeError, AssertionError):
        traceback.print_exc()
    LIVE.clear()


def main():
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}, start method {mp.get_start_method()}", flush=True)
    case_1_abandoned_iterator()
    case_2_fork_drops_live_iterator()
    case_3_fork_child_exits_normally()
    case_4_mp_child_releases_live_iterator()


if __name__ == "__main__":
    main()
