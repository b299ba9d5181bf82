"""Reproduce "offset overflow while concatenating arrays" in Dataset.map.

Requires: Hugging Face datasets and pyarrow (checked with datasets 5.2.0 and
pyarrow 26.0.1, CPU only). Needs about 6 GB of free RAM: the dataset is
built in memory (Dataset.from_dict), so it has no cache file and map keeps
its output in an in-memory Arrow buffer instead of writing a cache-*.arrow;
HF_DATASETS_CACHE only points at a temporary folder removed at the end.
torch is not used.

A batched map returns one list<string> column whose values add up to about
2.2 GiB in a single batch. pa.array() splits the Python list into two Arrow
chunks (a chunk cannot address more than 2 GiB with 32-bit offsets), and
ArrowWriter._write_table then calls Table.combine_chunks(), which has to
concatenate the two list<string> chunks into one and overflows the 32-bit
offsets of the string child. pyarrow >= 18 appends a hint naming the
large_* type to cast to; older releases print the bare message.

Then the same map with a smaller batch_size (so each batch stays far below
2 GiB) succeeds, which is the usual fix.
"""
import os
import shutil
import tempfile

tmp = tempfile.mkdtemp(prefix="repro-arrow-offset-")
os.environ["HF_DATASETS_CACHE"] = tmp

import datasets  # noqa: E402
import pyarrow as pa  # noqa: E402

datasets.disable_progress_bars()
print(f"datasets {datasets.__version__}, pyarrow {pa.__version__}", flush=True)

CHUNK = "x" * (1 << 20)  # 1 MiB of text, the same object reused for every row
ROWS = 2200  # 2200 MiB > 2 GiB in one batch


def make_chunks(batch):
    return {"chunks": [[CHUNK] for _ in batch["i"]]}


ds = datasets.Dataset.from_dict({"i": list(range(ROWS))})
try:
    try:
        ds.map(make_chunks, batched=True, batch_size=ROWS, writer_batch_size=ROWS)
        print("map with batch_size=2200 finished (not expected)", flush=True)
    except Exception as e:  # pyarrow.lib.ArrowInvalid
        print(f"{type(e).__module__}.{type(e).__name__}: {e}", flush=True)

    out = ds.map(make_chunks, batched=True, batch_size=100, writer_batch_size=100)
    print(f"map with batch_size=100 finished: {out.num_rows} rows, column type {out.features['chunks']}", flush=True)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
