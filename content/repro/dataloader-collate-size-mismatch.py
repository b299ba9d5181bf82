"""Reproduce the default_collate size errors for samples of different shapes.

`DataLoader` builds a batch by calling `default_collate` on the list of samples.
Tensors (and NumPy arrays, converted first) are joined with `torch.stack`,
which needs every sample to have exactly the same shape; sequences (lists,
tuples) must all have the same length before they are transposed. Three cases:

1. Images of different widths, `num_workers=0`: the error comes straight from
   the main process:

       RuntimeError: stack expects each tensor to be equal size, but got [3, 32, 40] at entry 0 and [3, 32, 41] at entry 1

2. The same dataset with workers: the worker catches the error and the main
   process re-raises it as "Caught RuntimeError in DataLoader worker process 0."
   with the original traceback, ending in the same "stack expects" line.

3. Samples holding Python lists of token ids with different lengths:

       RuntimeError: each element in list of batch should be of equal size

4. The fix for case 1 and 3: a collate_fn that pads to the longest sample of
   the batch (pad_sequence) and returns the true lengths, so the batch builds.
"""
import traceback

import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset


class VariableWidthImages(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        return torch.zeros(3, 32, 40 + idx), idx % 2  # (image, label)


class VariableLengthTokens(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        return {"input_ids": list(range(5 + idx)), "label": idx % 2}


def first_batch(label, dataset, **kwargs):
    print(f"== {label}", flush=True)
    try:
        batch = next(iter(DataLoader(dataset, batch_size=4, **kwargs)))
    except RuntimeError:
        traceback.print_exc()
        return None
    return batch


def pad_collate(samples):
    ids = [torch.tensor(s["input_ids"]) for s in samples]
    return {
        "input_ids": pad_sequence(ids, batch_first=True, padding_value=0),
        "lengths": torch.tensor([len(t) for t in ids]),
        "label": torch.tensor([s["label"] for s in samples]),
    }


def main():
    failures = 0
    failures += first_batch("1. images of different widths, main process", VariableWidthImages()) is None
    failures += first_batch("2. same, two workers", VariableWidthImages(), num_workers=2) is None
    failures += first_batch("3. lists of different lengths", VariableLengthTokens()) is None
    batch = first_batch("4. padding collate_fn", VariableLengthTokens(), collate_fn=pad_collate)
    print("padded input_ids", tuple(batch["input_ids"].shape), "lengths", batch["lengths"].tolist(), flush=True)
    if failures:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
