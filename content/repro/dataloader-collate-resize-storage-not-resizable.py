"""Reproduce "RuntimeError: Trying to resize storage that is not resizable" from default_collate.

Inside a DataLoader worker, default_collate does not let torch.stack allocate
the batch: it allocates a shared-memory storage sized to the sum of the
samples' element counts, views it with the shape len(batch) x (shape of the
FIRST sample), and stacks into that. Shared-memory storages cannot grow. When
the samples differ in size and the first one is bigger than their average
(here: the largest), the view needs
more room than the storage has and resize_ fails:

    RuntimeError: Trying to resize storage that is not resizable

The same data in the main process (num_workers=0) gives torch.stack's own,
clearer complaint ("stack expects each tensor to be equal size ..."), which is
also what workers print when the first sample is at or below the average
(for example the smallest).
A per-sample "boxes" field with a variable number of rows, as in object
detection, is used here.
"""
import traceback

import torch
from torch.utils.data import DataLoader, Dataset


class VariableBoxes(Dataset):
    """Sample i has 5 boxes when i is even, 3 when it is odd."""

    def __len__(self):
        return 8

    def __getitem__(self, idx):
        n = 5 if idx % 2 == 0 else 3
        return {"image": torch.zeros(3, 8, 8), "boxes": torch.zeros(n, 4)}


def run(num_workers):
    print(f"== num_workers={num_workers}", flush=True)
    loader = DataLoader(VariableBoxes(), batch_size=2, num_workers=num_workers)
    try:
        for step, batch in enumerate(loader):
            print("step", step, tuple(batch["boxes"].shape), flush=True)
    except RuntimeError:
        traceback.print_exc()
        return True
    return False


def main():
    failed = run(2)  # worker collate: shared-memory output, resize_ fails
    failed = run(0) or failed  # main-process collate: torch.stack's size check
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
