"""Reproduce a WebDataset load in Hugging Face datasets that resolves no tar file for a split.

Needs the `datasets` package next to torch (`pip install datasets`, or PYTHONPATH
pointing at a site-packages that holds it). Everything runs offline on the CPU
in a few seconds; torch itself is not used.

Two small WebDataset shards (train-00000.tar, train-00001.tar) are written to a
scratch folder. Then:

1. `load_dataset("webdataset", data_files={"train": ".../train-*.tar",
   "validation": ".../val-*.tar"}, streaming=True)`: the validation glob
   matches nothing. DataFilesList.from_patterns drops a glob that matches
   nothing without a word, so the builder gets an empty list for that split,
   and WebDataset._split_generators fails on `tar_paths[0]` (IndexError) while
   inferring the features, before any sample is read.
2. The same with only a misspelled train glob (the non-streaming path fails
   the same way, in download_and_prepare).
3. An empty list computed in user code (a per-process share of a shard list
   with more processes than shards): {"train": []} ends the same way, while a
   bare [] is refused earlier by load_dataset ("Empty 'data_files'").
4. The order matters: the features are inferred from the LAST split in
   data_files. With the empty split first, the load succeeds and the empty
   split silently yields no example; passing `features=` also skips the
   inference, and the empty split again yields nothing, without an error.
   Without streaming, the same empty split is written with 0 examples and
   only building it as a Dataset fails ('Instruction "validation" corresponds
   to no data!'); asking for split="train" alone succeeds.
5. A local dataset folder whose README.md `configs` point the validation split
   at a folder with no tar: the per-split format inference stops first, with
   "Couldn't infer the same data file format for all splits" and (None, {})
   for validation.
6. The neighbours: a non-glob path that does not exist (FileNotFoundError
   "Unable to find"), a dataset folder with no data file (EmptyDatasetError), a
   folder whose data_files patterns all match nothing (DataFilesNotFoundError)
   and a builder created without data_files ("At least one data file must be
   specified").
7. The pre-flight check that catches all of the above: count the files each
   pattern resolves to before calling load_dataset.
"""
import atexit
import glob
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
scratch = tempfile.mkdtemp(prefix="wds-empty-")
atexit.register(shutil.rmtree, scratch, ignore_errors=True)
os.environ["HF_HOME"] = os.path.join(scratch, "hf-home")
os.environ["HF_DATASETS_CACHE"] = os.path.join(scratch, "hf-cache")

import datasets  # noqa: E402
import fsspec  # noqa: E402
from datasets import Features, Value, load_dataset  # noqa: E402
from datasets.packaged_modules.webdataset.webdataset import WebDataset  # noqa: E402

print(f"datasets {datasets.__version__}, python {sys.version.split()[0]}")


def write_shards(folder, prefix, n_shards=2, n_samples=3):
    os.makedirs(folder, exist_ok=True)
    for s in range(n_shards):
        with tarfile.open(os.path.join(folder, f"{prefix}-{s:05d}.tar"), "w") as tf:
            for i in range(n_samples):
                for ext, data in (("txt", f"caption {s}-{i}".encode()), ("json", json.dumps({"i": i}).encode())):
                    info = tarfile.TarInfo(f"{s:03d}{i:05d}.{ext}")
                    info.size = len(data)
                    tf.addfile(info, io.BytesIO(data))


shards = os.path.join(scratch, "shards")
write_shards(shards, "train")
train_glob = os.path.join(shards, "train-*.tar")
val_glob = os.path.join(shards, "val-*.tar")  # nothing matches


def attempt(title, fn):
    print(f"\n=== {title}")
    try:
        result = fn()
        print(f"no error: {result}")
    except Exception:
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()


def count(ds):
    return sum(1 for _ in ds)


# 1. a split whose glob matches nothing, streaming
attempt("1. validation glob matches nothing (streaming=True)",
        lambda: load_dataset("webdataset", data_files={"train": train_glob, "validation": val_glob},
                             split="train", streaming=True))

# 2. a misspelled train glob, streaming and not
misspelled = os.path.join(shards, "trian-*.tar")
attempt("2a. misspelled train glob (streaming=True)",
        lambda: load_dataset("webdataset", data_files={"train": misspelled}, split="train", streaming=True))
attempt("2b. misspelled train glob (streaming=False)",
        lambda: load_dataset("webdataset", data_files={"train": misspelled}, split="train"))

# 3. an empty list computed in user code: 2 shards shared among 4 processes
all_shards = sorted(glob.glob(train_glob))
world_size = 4
for rank in (0, 3):
    mine = all_shards[rank::world_size]
    print(f"\nrank {rank} of {world_size} gets {len(mine)} shard(s)")
    attempt(f"3. rank {rank}: data_files={{'train': <its share>}}",
            lambda mine=mine: count(load_dataset("webdataset", data_files={"train": mine}, split="train", streaming=True)))
attempt("3b. rank 3: data_files=<its share> as a bare list",
        lambda: load_dataset("webdataset", data_files=all_shards[3::world_size], split="train", streaming=True))

# 4. the empty split first, or known features: no error, an empty split
attempt("4a. empty validation split first, train last",
        lambda: {split: count(ds) for split, ds in load_dataset(
            "webdataset", data_files={"validation": val_glob, "train": train_glob}, streaming=True).items()})
features = Features({"txt": Value("string"), "json": {"i": Value("int64")},
                     "__key__": Value("string"), "__url__": Value("string")})
attempt("4b. features= given, validation glob matches nothing",
        lambda: {split: count(ds) for split, ds in load_dataset(
            "webdataset", data_files={"train": train_glob, "validation": val_glob}, features=features,
            streaming=True).items()})

attempt("4c. features= given, not streaming, all splits",
        lambda: load_dataset("webdataset", data_files={"train": train_glob, "validation": val_glob},
                             features=features))
attempt("4d. features= given, not streaming, split='train'",
        lambda: load_dataset("webdataset", data_files={"train": train_glob, "validation": val_glob},
                             features=features, split="train").num_rows)

# 5. a dataset folder whose card points a split at a folder without tar files
repo = os.path.join(scratch, "my-wds-repo")
write_shards(os.path.join(repo, "train"), "shard")
with open(os.path.join(repo, "README.md"), "w") as f:
    f.write("---\nconfigs:\n- config_name: default\n  data_files:\n"
            "  - split: train\n    path: train/*.tar\n  - split: validation\n    path: validation/*.tar\n---\n")
attempt("5. README configs: validation/*.tar matches nothing",
        lambda: load_dataset(repo, split="train", streaming=True))

# 6. the neighbours
attempt("6a. a plain path (no glob) that does not exist",
        lambda: load_dataset("webdataset", data_files={"train": os.path.join(shards, "train-00009.tar")},
                             split="train", streaming=True))
os.makedirs(os.path.join(scratch, "empty"), exist_ok=True)
attempt("6b. data_dir with no data file",
        lambda: load_dataset(os.path.join(scratch, "empty"), streaming=True))
attempt("6c. data_files of a dataset folder where no split matches",
        lambda: load_dataset(repo, data_files={"train": "shards-v2/*.tar"}, split="train", streaming=True))
attempt("6d. the WebDataset builder created without data_files",
        lambda: WebDataset(cache_dir=os.path.join(scratch, "b")).as_streaming_dataset())


# 7. pre-flight: resolve every pattern before load_dataset
def resolve(patterns):
    out = {}
    for split, pats in patterns.items():
        pats = [pats] if isinstance(pats, str) else list(pats)
        files = []
        for p in pats:
            fs, path = fsspec.core.url_to_fs(p)
            files += fs.glob(path) if glob.has_magic(path) else ([path] if fs.exists(path) else [])
        out[split] = files
    return out


print("\n=== 7. pre-flight check")
patterns = {"train": train_glob, "validation": val_glob}
resolved = resolve(patterns)
for split, files in resolved.items():
    print(f"{split}: {len(files)} tar file(s)")
empty = [split for split, files in resolved.items() if not files]
if empty:
    print(f"refusing to load: no tar file for split(s) {empty}")
patterns = {k: v for k, v in patterns.items() if k not in empty}
ds = load_dataset("webdataset", data_files=patterns, split="train", streaming=True)
print(f"after dropping the empty split: {count(ds)} train samples")
