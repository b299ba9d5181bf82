"""Reproduce "DataLoader worker (pid(s) N) exited unexpectedly" without a signal.

A worker process that ends through a plain exit (a library calling exit(),
os._exit, a C extension aborting the process with an exit status) leaves no
Python traceback behind: the exception that would normally be pickled back to
the main process never exists. Two cases are run:

1. The worker leaves with exit status 1 while the DataLoader is iterated in
   the main thread. PyTorch's SIGCHLD handler notices the dead child first:

       RuntimeError: DataLoader worker (pid N) exited unexpectedly with exit code 1. Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace.

   and the DataLoader re-raises it, chained, as

       RuntimeError: DataLoader worker (pid(s) N) exited unexpectedly

2. The same worker exit while the DataLoader is iterated in a second thread
   (a prefetch thread, a web server handler): no SIGCHLD handler can be
   installed there, so only the periodic liveness check (every 5 s) sees the
   dead worker and the generic "(pid(s) N) exited unexpectedly" error is all
   that is printed. Windows behaves like this case for every failure.
"""
import os
import threading
import traceback

import torch
from torch.utils.data import DataLoader, Dataset


class ExitingDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, idx):
        if idx == 5:
            os._exit(1)  # stands in for native code calling exit(1) in the worker
        return torch.full((4,), float(idx))


def iterate(label):
    loader = DataLoader(ExitingDataset(), batch_size=4, num_workers=1)
    try:
        for step, batch in enumerate(loader):
            print(label, "step", step, batch[:, 0].tolist(), flush=True)
    except RuntimeError:
        traceback.print_exc()
        return True
    return False


def main():
    print("== 1. worker exits with status 1, loader in the main thread", flush=True)
    failed_main = iterate("main")

    print("== 2. same exit, loader iterated in a non-main thread", flush=True)
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("failed", iterate("thread")))
    thread.start()
    thread.join()
    if failed_main or result.get("failed"):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
