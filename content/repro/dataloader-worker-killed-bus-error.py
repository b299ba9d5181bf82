"""Reproduce a DataLoader worker killed by SIGBUS.

In real runs the bus error comes from touching a page of a shared-memory
(/dev/shm) file that could not be backed because /dev/shm is full (Docker's
64 MB default). Here the worker sends itself SIGBUS from __getitem__, which
goes through the same path: the worker's SIGBUS handler installed by
PyTorch prints

    ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).

and the main process, noticing the dead worker, raises

    RuntimeError: DataLoader worker (pid N) is killed by signal: Bus error. ...
"""
import os
import signal

import torch
from torch.utils.data import DataLoader, Dataset


class BusErrorDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, idx):
        if idx == 5:
            os.kill(os.getpid(), signal.SIGBUS)
        return torch.full((4,), float(idx))


def main():
    loader = DataLoader(BusErrorDataset(), batch_size=4, num_workers=1, timeout=20)
    for step, batch in enumerate(loader):
        print("step", step, batch[:, 0].tolist(), flush=True)


if __name__ == "__main__":
    main()
