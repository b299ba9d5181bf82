"""Reproduce torch.set_num_interop_threads() refusing a second setting.

Everything runs on CPU in a few seconds. Each part runs in a fresh child
process, because the inter-op setting can only be made once per process.

1. Called twice (a library sets it at import, the training script sets it
   again), even with the same value: the second call raises
       RuntimeError: Error: cannot set number of interop threads after
       parallel work has started or set_num_interop_threads called
2. Called after a TorchScript function ran torch.jit.fork, which created the
   inter-op thread pool: the first and only call raises the same error.
3. A DataLoader worker_init_fn calls it in a worker forked from a parent that
   had already set it: the worker inherits the setting, the call raises, and
   the DataLoader re-raises it in the main process as
   "Caught RuntimeError in DataLoader worker process 0".
4. The fix: set it once, first thing in the process, and make later calls
   compare with torch.get_num_interop_threads() instead of setting again.
"""
import multiprocessing as mp
import traceback

import torch


def part1():
    torch.set_num_interop_threads(4)  # e.g. done by an imported library
    try:
        torch.set_num_interop_threads(4)  # the script sets the same value again
    except RuntimeError:
        traceback.print_exc()


@torch.jit.script
def _double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@torch.jit.script
def _forked(x: torch.Tensor) -> torch.Tensor:
    fut = torch.jit.fork(_double, x)
    return torch.jit.wait(fut)


def part2():
    print("part 2: interop threads before:", torch.get_num_interop_threads(), flush=True)
    _forked(torch.ones(3))  # TorchScript fork runs on the inter-op pool and creates it
    try:
        torch.set_num_interop_threads(2)
    except RuntimeError:
        traceback.print_exc()


def _init_worker(worker_id):
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)


def part3():
    torch.set_num_interop_threads(2)  # parent process, before the loader starts
    ds = torch.utils.data.TensorDataset(torch.arange(8))
    loader = torch.utils.data.DataLoader(
        ds, batch_size=4, num_workers=1, worker_init_fn=_init_worker,
        multiprocessing_context="fork")
    try:
        for _ in loader:
            pass
    except RuntimeError:
        traceback.print_exc()


def _set_interop_once(n):
    # Safe helper: set only if nothing has set or used the pool yet.
    try:
        torch.set_num_interop_threads(n)
    except RuntimeError:
        if torch.get_num_interop_threads() != n:
            print(f"part 4: interop threads already fixed at {torch.get_num_interop_threads()}, wanted {n}", flush=True)


def part4():
    torch.set_num_interop_threads(2)
    _set_interop_once(2)
    _set_interop_once(3)
    print("part 4: interop threads now", torch.get_num_interop_threads(), flush=True)


def run(part):
    p = mp.get_context("spawn").Process(target=part)
    p.start()
    p.join()


if __name__ == "__main__":
    print("torch", torch.__version__, flush=True)
    for part in (part1, part2, part3, part4):
        run(part)
