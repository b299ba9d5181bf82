"""Kineto's "External init callback must run in same thread as registerClient" line.

PyTorch registers its Kineto client when libtorch is loaded, on the thread that imported torch.
Kineto itself is set up lazily, the first time a profiler is started in the process. If that
first start happens on another thread (here a plain threading.Thread, as in a Ray Train worker,
which runs the training function in its own thread), libkineto prints the ERROR line to stderr
and skips the client's init callback. The profile is still collected: the script prints the
number of events recorded on both threads.

One process on the CPU, no process group, a few seconds (checked with torch 2.13.0+cpu).
"""
import sys
import threading

import torch
from torch.profiler import ProfilerActivity, profile


def profiled_step(where):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.mm(torch.randn(64, 64), torch.randn(64, 64))
    names = {e.name for e in prof.events()}
    print(f"--- {where}: {len(prof.events())} events, aten::mm recorded: {'aten::mm' in names}",
          flush=True)


print(f"torch {torch.__version__}", flush=True)

# 1. First profiler start of the process on a worker thread: Kineto prints the ERROR line once.
worker = threading.Thread(target=profiled_step, args=("first start on a worker thread",))
worker.start()
worker.join()
sys.stderr.flush()

# 2. Later starts (any thread) do not print it again: Kineto is initialised once per process.
profiled_step("second start on the main thread")
