"""Reproduce Hugging Face datasets refusing a training-data folder that is not there.

Needs `datasets` next to torch (the torch environment of this project has both).
Nothing is downloaded: the Hub is switched off with HF_HUB_OFFLINE and
HF_DATASETS_OFFLINE, and every path is under one scratch folder, so the lines
printed are the same on every Linux machine. Runs on the CPU in a few seconds;
checked with datasets 5.2.0.

Cases (each prints the last line of the exception, as a traceback ends):
1. load_dataset() on an absolute folder that does not exist.
2. load_dataset() on a relative path with a leading './' (resolved against the
   current working directory, which is the usual way this goes wrong).
3. load_dataset("json", data_files=...) naming a file in the missing folder.
4. load_dataset("json", data_dir=...) on the missing folder.
5. load_dataset() on a folder that exists but holds no data file.
6. load_from_disk() on a folder that does not exist.
7. The fix: the folder is created with a JSON Lines file; the same calls load it
   and a torch DataLoader yields a batch.
"""
import os
import shutil
import sys
import tempfile
import traceback

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
scratch = os.path.join(tempfile.gettempdir(), "training-data-directory-not-found-repro")
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
os.environ["HF_HOME"] = os.path.join(scratch, "hf-home")
os.environ["HF_DATASETS_CACHE"] = os.path.join(scratch, "hf-cache")

import datasets  # noqa: E402
import torch  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

datasets.disable_progress_bars()
print(f"datasets {datasets.__version__}, torch {torch.__version__}, python {sys.version.split()[0]}", flush=True)

os.chdir(scratch)
missing = os.path.join(scratch, "data", "train")
empty = os.path.join(scratch, "empty")
os.makedirs(empty)


def case(title, call):
    print(f"\n=== {title}", flush=True)
    try:
        result = call()
        print(f"loaded: {result}", flush=True)
        return result
    except Exception as err:
        print("".join(traceback.format_exception_only(type(err), err)).rstrip(), flush=True)
        return None


case("1. load_dataset(<absolute missing folder>)", lambda: datasets.load_dataset(missing))
case("2. load_dataset('./data/train') from the wrong working directory", lambda: datasets.load_dataset("./data/train"))
case("3. load_dataset('json', data_files=<file in the missing folder>)",
     lambda: datasets.load_dataset("json", data_files={"train": os.path.join(missing, "train.jsonl")}))
case("4. load_dataset('json', data_dir=<missing folder>)", lambda: datasets.load_dataset("json", data_dir=missing))
case("5. load_dataset(<existing folder with no data file>)", lambda: datasets.load_dataset(empty))
case("6. load_from_disk(<missing folder>)", lambda: datasets.load_from_disk(missing))

print("\n=== 7. fix: create the folder with a data file, then load it again", flush=True)
os.makedirs(missing)
with open(os.path.join(missing, "train.jsonl"), "w") as f:
    for i in range(4):
        f.write(f'{{"text": "example {i}", "label": {i % 2}}}\n')
ds = case("7a. load_dataset(<folder>)", lambda: datasets.load_dataset(missing, split="train"))
case("7b. load_dataset('json', data_dir=<folder>)", lambda: datasets.load_dataset("json", data_dir=missing, split="train"))
if ds is not None:
    batch = next(iter(DataLoader(ds.with_format("torch", columns=["label"]), batch_size=2)))
    print(f"rows: {len(ds)}, first batch labels: {batch['label'].tolist()}", flush=True)
shutil.rmtree(scratch, ignore_errors=True)
