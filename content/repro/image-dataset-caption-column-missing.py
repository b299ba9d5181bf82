"""Reproduce a diffusers training script stopping on a dataset without the
caption (or image) column it was told to read.

Needs only `datasets` and Pillow (the /.venv-torch environment has both; torch
is imported just to report its version). Nothing is downloaded: small PNG files
are written to a scratch folder and loaded with the `imagefolder` builder,
exactly as the scripts do for `--train_data_dir`. The diffusers example scripts
themselves load a text encoder, VAE and UNet from the Hub before they read the
dataset, so this script does not run them; it runs their column check, copied
line for line from huggingface/diffusers v0.40.0:

- examples/text_to_image/train_text_to_image.py (the same block is in
  train_text_to_image_lora.py, the SDXL variants and the Flax script):
  "--caption_column' value '...' needs to be one of: ..."
- examples/dreambooth/train_dreambooth_lora_flux.py (and the other DreamBooth,
  ControlNet and Flux control scripts): "`--caption_column` value '...' not
  found in dataset columns. Dataset columns are: ..."

Cases:
1. A folder of images without metadata.jsonl: the only column is `image`, so
   the default --caption_column text is refused.
2. Class subfolders: imagefolder adds a `label` column, still no captions.
3. metadata.jsonl whose captions are under "caption": the default `text` is
   refused; the message lists `caption`.
4. --image_column given a name the dataset does not have.
5. The DreamBooth/Flux wording for case 3.
6. Code that skips the check and indexes the dataset: datasets 4.0 and later
   raise "ValueError: Column 'text' doesn't exist." (their Column object);
   older releases, and a dataset formatted as arrow/pandas/polars in any
   release (6b), raise datasets' KeyError "Column text not in the dataset.
   Current columns in the dataset: [...]".
   6c: the same lookup by "caption" in a dataset whose captions are under
   "text" raises "ValueError: Column 'caption' doesn't exist.".
7. The same inside a with_transform/map function: the batch object raises a
   bare KeyError: 'text'.
8. The fixes: --caption_column caption, and a metadata.jsonl with a "text"
   field; both pass the check and yield captions.
9. The column exists but one row has no caption (null in metadata.jsonl): the
   scripts' caption loop (tokenize_captions, copied without the tokenizer call)
   refuses the None.
"""
import json
import os
import random
import shutil
import sys
import tempfile
import traceback
import types
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
scratch = tempfile.mkdtemp(prefix="caption-column-")
os.environ["HF_HOME"] = os.path.join(scratch, "hf-home")
os.environ["HF_DATASETS_CACHE"] = os.path.join(scratch, "hf-cache")
warnings.simplefilter("ignore")

import datasets  # noqa: E402
import numpy as np  # noqa: E402
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


def text_to_image_check(dataset, args, dataset_name_mapping=None):
    # copied from examples/text_to_image/train_text_to_image.py at diffusers v0.40.0
    column_names = dataset["train"].column_names
    dataset_columns = (dataset_name_mapping or {}).get(args.dataset_name, None)
    if args.image_column is None:
        image_column = dataset_columns[0] if dataset_columns is not None else column_names[0]
    else:
        image_column = args.image_column
        if image_column not in column_names:
            raise ValueError(
                f"--image_column' value '{args.image_column}' needs to be one of: {', '.join(column_names)}"
            )
    if args.caption_column is None:
        caption_column = dataset_columns[1] if dataset_columns is not None else column_names[1]
    else:
        caption_column = args.caption_column
        if caption_column not in column_names:
            raise ValueError(
                f"--caption_column' value '{args.caption_column}' needs to be one of: {', '.join(column_names)}"
            )
    return image_column, caption_column


def dreambooth_check(dataset, args):
    # copied from examples/dreambooth/train_dreambooth_lora_flux.py at diffusers v0.40.0 (DreamBoothDataset)
    column_names = dataset["train"].column_names
    if args.image_column is None:
        image_column = column_names[0]
    else:
        image_column = args.image_column
        if image_column not in column_names:
            raise ValueError(
                f"`--image_column` value '{args.image_column}' not found in dataset columns. Dataset columns are: {', '.join(column_names)}"
            )
    if args.caption_column is not None and args.caption_column not in column_names:
        raise ValueError(
            f"`--caption_column` value '{args.caption_column}' not found in dataset columns. Dataset columns are: {', '.join(column_names)}"
        )
    return image_column, args.caption_column


def caption_loop(examples, caption_column, is_train=True):
    # the type check of tokenize_captions in examples/text_to_image/train_text_to_image.py at v0.40.0
    captions = []
    for caption in examples[caption_column]:
        if isinstance(caption, str):
            captions.append(caption)
        elif isinstance(caption, (list, np.ndarray)):
            # take a random caption if there are multiple
            captions.append(random.choice(caption) if is_train else caption[0])
        else:
            raise ValueError(
                f"Caption column `{caption_column}` should contain either strings or lists of strings."
            )
    return captions


def cli(**overrides):
    # the scripts' defaults: --image_column image, --caption_column text (DreamBooth: caption None)
    base = dict(dataset_name=None, image_column="image", caption_column="text")
    base.update(overrides)
    return types.SimpleNamespace(**base)


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

case("1. images only, default --caption_column text", lambda: text_to_image_check(ds_plain, cli()))
case("2. class subfolders, default --caption_column text", lambda: text_to_image_check(ds_classes, cli()))
case("3. metadata.jsonl with 'caption', default --caption_column text", lambda: text_to_image_check(ds_captioned, cli()))
case("4. --image_column img", lambda: text_to_image_check(ds_captioned, cli(image_column="img", caption_column="caption")))
case("5. DreamBooth/Flux wording, --caption_column prompt", lambda: dreambooth_check(ds_captioned, cli(caption_column="prompt")))
case("6. no check, dataset['train']['text']", lambda: ds_captioned["train"]["text"])
case("6b. the same on an arrow-formatted dataset", lambda: ds_captioned["train"].with_format("arrow")["text"])
case("6c. no check, dataset['train']['caption'] on a dataset whose captions are under 'text'",
     lambda: ds_fixed["train"]["caption"])


def preprocess_train(examples):
    return {"captions": list(examples["text"])}


case("7. no check, examples['text'] inside with_transform", lambda: ds_captioned["train"].with_transform(preprocess_train)[0])
case("8a. fix: --caption_column caption",
     lambda: list(ds_captioned["train"][text_to_image_check(ds_captioned, cli(caption_column="caption"))[1]]))
case("8b. fix: metadata.jsonl with a 'text' field, defaults",
     lambda: list(ds_fixed["train"][text_to_image_check(ds_fixed, cli())[1]]))
ds_holes = load_train_data_dir(holes)
case("9. a 'text' column with a missing caption (null)",
     lambda: caption_loop(ds_holes["train"][:2], text_to_image_check(ds_holes, cli())[1]))
shutil.rmtree(scratch, ignore_errors=True)
