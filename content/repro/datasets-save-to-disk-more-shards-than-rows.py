"""Reproduce "IndexError: Index N out of range for dataset of size N." from
Dataset.save_to_disk when it is asked to write more shards than the dataset
has rows.

Requires: Hugging Face datasets (checked with 5.2.0, CPU only); torch is not
used. Everything is written under a temporary folder removed at the end.

save_to_disk splits the dataset with Dataset.shard(num_shards, index,
contiguous=True). With more shards than rows, every index at or past the row
count gets the empty range [len, len), and Dataset.select -> _select_contiguous
refuses its start index, which equals the dataset size.

1. An explicit num_shards larger than the row count: save_to_disk writes one
   file per row, then fails on the next shard and leaves the partial files.
2. A DatasetDict made by train_test_split saved with num_proc: the small test
   split is an indices mapping over the whole table, so the clamp that
   datasets >= 4.5.0 applies (min(len(self.data), num_shards)) compares with
   the table's row count, not the split's, and num_proc still wins.
3. The fixes: clamp num_shards to len(ds), or flatten_indices() first.
"""
import os
import shutil
import sys
import tempfile
import traceback

import datasets
from datasets import Dataset


def show(tag, fn):
    try:
        fn()
        print(f"{tag}: finished", flush=True)
    except Exception:
        print(f"{tag}: failed", flush=True)
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()


def main():
    datasets.disable_progress_bars()
    print(f"datasets {datasets.__version__}", flush=True)
    tmp = tempfile.mkdtemp(prefix="repro-save-shards-")
    try:
        tiny = Dataset.from_dict({"x": list(range(3))})
        path1 = os.path.join(tmp, "tiny")
        show("save_to_disk(num_shards=8) on 3 rows", lambda: tiny.save_to_disk(path1, num_shards=8))
        print("left on disk:", sorted(os.listdir(path1)), flush=True)

        splits = Dataset.from_dict({"x": list(range(100))}).train_test_split(test_size=2, seed=0)
        print({k: (len(v), len(v.data)) for k, v in splits.items()}, "(rows, table rows)", flush=True)
        path2 = os.path.join(tmp, "splits")
        show("DatasetDict.save_to_disk(num_proc=4)", lambda: splits.save_to_disk(path2, num_proc=4))

        path3 = os.path.join(tmp, "fixed")
        show(
            "clamped num_shards",
            lambda: tiny.save_to_disk(path3, num_shards=min(8, len(tiny))),
        )
        print("written:", sorted(f for f in os.listdir(path3) if f.endswith(".arrow")), flush=True)
        path4 = os.path.join(tmp, "flat")
        flat = datasets.DatasetDict({k: v.flatten_indices() for k, v in splits.items()})
        show("flatten_indices + save_to_disk(num_proc=4)", lambda: flat.save_to_disk(path4, num_proc=4))
        print("test split files:", sorted(f for f in os.listdir(os.path.join(path4, "test")) if f.endswith(".arrow")), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
