"""Reproduce a DataLoader worker killed by SIGKILL (the host OOM killer).

When a node runs out of RAM the kernel OOM killer (or a cgroup memory limit
in a container) picks the largest process, often a DataLoader worker that
holds copies of the dataset, and sends it SIGKILL. This script does not use
up memory: the worker sends itself SIGKILL from __getitem__, which the main
process cannot tell apart from an OOM kill:

    RuntimeError: DataLoader worker (pid N) is killed by signal: Killed.

The kernel's own "Out of memory: Killed process N (python)" line goes to the
kernel log (dmesg), not to the program's output, so it is not reproduced.
"""
import os
import signal

import torch
from torch.utils.data import DataLoader, Dataset


class OOMKilledDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, idx):
        if idx == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.full((4,), float(idx))


def main():
    loader = DataLoader(OOMKilledDataset(), batch_size=4, num_workers=1, timeout=20)
    for step, batch in enumerate(loader):
        print("step", step, batch[:, 0].tolist(), flush=True)


if __name__ == "__main__":
    main()
