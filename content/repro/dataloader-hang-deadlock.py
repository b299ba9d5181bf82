"""Reproduce a DataLoader hang surfaced by the DataLoader timeout.

The dataset's __getitem__ blocks forever on the first sample in the worker
(standing in for a worker deadlocked on a lock inherited across fork, a
stuck network filesystem read, or a blocking queue). Without a timeout the
training loop would wait forever in next(iter(loader)); with
DataLoader(timeout=3) the main process gives up after 3 seconds:

    RuntimeError: DataLoader timed out after 3 seconds
"""
import threading

import torch
from torch.utils.data import DataLoader, Dataset


class StuckDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, idx):
        # Wait on an event nobody will ever set: the worker blocks forever.
        threading.Event().wait()
        return torch.zeros(4)


def main():
    loader = DataLoader(StuckDataset(), batch_size=4, num_workers=1, timeout=3)
    for step, batch in enumerate(loader):
        print("step", step, batch.shape, flush=True)


if __name__ == "__main__":
    main()
