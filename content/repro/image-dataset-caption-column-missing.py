"""Reproduce what is behind a diffusers training script stopping on a dataset
without the caption (or image) column it was told to read.

Needs only `datasets` and Pillow (the /.venv-torch environment has both; torch
is imported just to report its version). Nothing is downloaded: small PNG files
are written to a scratch folder and loaded with the `imagefolder` builder, the
way the scripts load `--train_data_dir`. The diffusers example scripts load a
text encoder, VAE and UNet from the Hub before they read the dataset, so this
script does not run them, and it does not copy their column check either: it
prints the column names that check compares `--caption_column` and
`--image_column` with, and the errors `datasets` itself raises when code skips
the check. The scripts' own messages are cited at their v0.40.0 source.

Cases:
1. The columns imagefolder gives each folder (printed first): images only -> ['image'];
   class subfolders -> ['image', 'label']; a metadata.jsonl with "caption"
   -> ['image', 'caption']. None of them has the default caption column
   `text`, which is what the scripts refuse.
2. Code that skips the check and indexes the dataset: datasets 4.0 and later
   raise "ValueError: Column 'text' doesn't exist." (their Column object);
   older releases, and a dataset formatted as arrow/pandas/polars in any
   release (2b), raise datasets' KeyError "Column text not in the dataset.
   Current columns in the dataset: [...]".
   2c: the same lookup by "caption" in a dataset whose captions are under
   "text" raises "ValueError: Column 'caption' doesn't exist.".
3. The same inside a with_transform/map function: the batch object raises a
   bare KeyError: 'text'.
4. The fixes: read the column the dataset has (`caption`), or write the
   metadata.jsonl with a "text" field; both yield captions.
5. The column exists but one row has no caption (null in metadata.jsonl): the
   value read is None, which the scripts' caption loop refuses.
"""
import json
import os
import shutil
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
scratch = tempfile.mkdtemp(prefix="caption-column-")
os.environ["HF_HOME"] = os.path.join(scratch, "hf-home")
os.environ["HF_DATASETS_CACHE"] = os.path.join(scratch, "hf-cache")
warnings.simplefilter("ignore")

import datasets  # noqa: E402
from datasets import load_dataset  # noqa: E402
from PIL import Image  # noqa: E402

try:
    import torch  # noqa: E402

    torch_version = torch.__version__
except ImportError:
    torch_version = "absent"

datasets.disable_progress_bars()
datasets.logging.set_verbosity_error()
print(f"datasets {datasets.__version__}, torch {torch_version}, python {sys.version.split()[0]}", flush=True)


def write_images(folder, names):
    os.makedirs(folder, exist_ok=True)
    for i, name in enumerate(names):
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Image.new("RGB", (8, 8), (40 * i, 0, 0)).save(path)


def write_metadata(folder, rows):
    with open(os.path.join(folder, "metadata.jsonl"), "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def load_train_data_dir(train_data_dir):
    # what train_text_to_image.py does with --train_data_dir
    data_files = {"train": os.path.join(train_data_dir, "**")}
    return load_dataset("imagefolder", data_files=data_files, cache_dir=os.environ["HF_DATASETS_CACHE"])


def case(title, fn):
    print(f"\n=== {title}", flush=True)
    try:
        result = fn()
        print(f"ok: {result}", flush=True)
    except Exception:
        traceback.print_exc(limit=-1, file=sys.stdout)
        sys.stdout.flush()


plain = os.path.join(scratch, "plain")
write_images(plain, ["a.png", "b.png"])
classes = os.path.join(scratch, "classes")
write_images(classes, ["cat/a.png", "dog/b.png"])
captioned = os.path.join(scratch, "captioned")
write_images(captioned, ["a.png", "b.png"])
write_metadata(captioned, [{"file_name": "a.png", "caption": "a red square"}, {"file_name": "b.png", "caption": "a dark square"}])
fixed = os.path.join(scratch, "fixed")
write_images(fixed, ["a.png", "b.png"])
write_metadata(fixed, [{"file_name": "a.png", "text": "a red square"}, {"file_name": "b.png", "text": "a dark square"}])

holes = os.path.join(scratch, "holes")
write_images(holes, ["a.png", "b.png"])
write_metadata(holes, [{"file_name": "a.png", "text": "a red square"}, {"file_name": "b.png", "text": None}])

ds_plain = load_train_data_dir(plain)
ds_classes = load_train_data_dir(classes)
ds_captioned = load_train_data_dir(captioned)
ds_fixed = load_train_data_dir(fixed)
for name, ds in [("plain", ds_plain), ("classes", ds_classes), ("captioned", ds_captioned), ("fixed", ds_fixed)]:
    print(f"{name}: {ds['train'].column_names}", flush=True)

case("2. no check, dataset['train']['text']", lambda: ds_captioned["train"]["text"])
case("2b. the same on an arrow-formatted dataset", lambda: ds_captioned["train"].with_format("arrow")["text"])
case("2c. no check, dataset['train']['caption'] on a dataset whose captions are under 'text'",
     lambda: ds_fixed["train"]["caption"])


def preprocess_train(examples):
    return {"captions": list(examples["text"])}


case("3. no check, examples['text'] inside with_transform", lambda: ds_captioned["train"].with_transform(preprocess_train)[0])
case("4a. fix: read the column the dataset has, caption", lambda: list(ds_captioned["train"]["caption"]))
case("4b. fix: metadata.jsonl with a 'text' field", lambda: list(ds_fixed["train"]["text"]))
ds_holes = load_train_data_dir(holes)
case("5. a 'text' column with a missing caption (null)", lambda: list(ds_holes["train"]["text"]))
shutil.rmtree(scratch, ignore_errors=True)
