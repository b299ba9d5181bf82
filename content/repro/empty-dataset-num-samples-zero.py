"""Reproduce "ValueError: num_samples should be a positive integer value, but got num_samples=0".

A dataset that finds no files (wrong root, wrong extension filter, a
per-rank shard that came out empty) has length 0. Three cases are run:

1. DataLoader(..., shuffle=True) builds a RandomSampler, which checks its
   length when it is constructed, so the DataLoader constructor itself raises:

       ValueError: num_samples should be a positive integer value, but got num_samples=0

2. The same empty dataset with shuffle=False gets a SequentialSampler, which
   does not check: the loader is created, yields no batches, and the "epoch"
   ends at once. Only code that divides by the number of steps notices.

3. WeightedRandomSampler with num_samples=0 (for example computed from an empty
   label list) raises the same ValueError.
"""
import traceback

import torch
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler


class FolderDataset(Dataset):
    """Lists files with a given suffix; an empty list is not an error here."""

    def __init__(self, files, suffix=".png"):
        self.files = [f for f in files if f.endswith(suffix)]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        return torch.zeros(3)


def main():
    files = ["a.jpg", "b.jpg", "c.jpg"]  # the data are .jpg, the filter wants .png
    ds = FolderDataset(files)
    print("dataset length:", len(ds), flush=True)
    failed = False

    print("== 1. shuffle=True", flush=True)
    try:
        DataLoader(ds, batch_size=2, shuffle=True)
    except ValueError:
        traceback.print_exc()
        failed = True

    print("== 2. shuffle=False", flush=True)
    loader = DataLoader(ds, batch_size=2, shuffle=False)
    print("batches in one epoch:", sum(1 for _ in loader), flush=True)

    print("== 3. WeightedRandomSampler(num_samples=0)", flush=True)
    try:
        WeightedRandomSampler(torch.ones(4), num_samples=0)
    except ValueError:
        traceback.print_exc()
        failed = True

    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
