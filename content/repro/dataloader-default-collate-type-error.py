"""Reproduce "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class ...>".

default_collate knows how to batch tensors, numpy arrays, Python numbers,
strings, mappings and sequences. Anything else reaching it ends in a
TypeError naming the offending type. Two common shapes are run:

1. A dataset whose __getitem__ returns None for a sample it could not read
   (a missing file swallowed by a try/except), at the first position of a
   batch. In the main process (num_workers=0) the TypeError is raised
   directly (a None further down the batch fails inside torch.stack instead,
   with "expected Tensor as element N in argument 0, but got NoneType"):

       TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class 'NoneType'>

2. A dataset that returns an object default_collate does not know (here a
   small Record class standing in for a PIL image when ToTensor() is missing),
   read by one worker process. The worker's TypeError is re-raised in the main
   process under "Caught TypeError in DataLoader worker process 0." with the
   same last line naming the class.
"""
import traceback

import torch
from torch.utils.data import DataLoader, Dataset


class MaybeNoneDataset(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        if idx == 4:
            # e.g. an unreadable file that the dataset skipped; index 4 opens the
            # second batch, so None is the element default_collate inspects
            return None
        return torch.full((4,), float(idx))


class Record:
    """Stands in for any non-tensor object (PIL image, custom sample class)."""

    def __init__(self, idx):
        self.idx = idx


class ObjectDataset(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        return Record(idx), idx


def run(label, dataset, num_workers):
    print(f"== {label} (num_workers={num_workers})", flush=True)
    loader = DataLoader(dataset, batch_size=4, num_workers=num_workers)
    try:
        for step, _batch in enumerate(loader):
            print("step", step, "collated", flush=True)
    except TypeError:
        traceback.print_exc()
        return True
    return False


def main():
    failed = run("1. a sample is None", MaybeNoneDataset(), 0)
    failed = run("2. a sample holds an unknown object", ObjectDataset(), 1) or failed
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
