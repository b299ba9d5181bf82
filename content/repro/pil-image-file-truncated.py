"""Reproduce "OSError: image file is truncated (N bytes not processed)" in a DataLoader worker.

Needs Pillow next to torch (`pip install pillow`, or PYTHONPATH pointing at a
site-packages that holds PIL). Everything runs on the CPU in a few seconds.

A folder of small images is written to a scratch directory and one of them is
cut in half, as an interrupted download or copy leaves it. Image.open() only
reads the header, so listing and opening the files succeeds; the pixel data is
decoded later, in ImageFile.load(), when the sample is converted. Five parts run:

1. Pillow alone, three ways a file can be cut:
   - a JPEG cut in its scan data:  OSError: image file is truncated (N bytes not processed)
   - a PNG cut inside its chunks:  OSError: image file is truncated
   - a JPEG cut inside its header: OSError: Truncated File Read   (raised by Image.open, Pillow 8.2+)
   verify() is called on the cut JPEG as well: it returns without complaint,
   because only the PNG plugin checks anything in verify().
2. The same cut JPEG in an ImageFolder-style dataset read by one worker
   process: the first batches are fine, then the batch that contains the file
   fails and the main process re-raises the worker's error as
   "OSError: Caught OSError in DataLoader worker process 0." with the Pillow
   line at the end of the Original Traceback.
3. A scan that calls load() on every file and prints the one that fails.
4. ImageFile.LOAD_TRUNCATED_IMAGES = True: the cut JPEG now loads without an
   error, and the missing lower half comes back as flat grey pixels.
5. The flag is a module global of the process that sets it. Set inside main()
   as here, it reaches fork-started workers but not "spawn" ones, which import
   PIL afresh: the same loader fails again unless a worker_init_fn sets it.
"""
import gc
import io
import os
import shutil
import sys
import tempfile
import traceback

import torch
from torch.utils.data import DataLoader, Dataset

try:
    from PIL import Image, ImageFile
except ImportError:
    sys.exit("this reproduction needs Pillow: pip install pillow")

SIZE = 64


def make_image(seed):
    # a smooth gradient plus a per-image offset: compresses to a few KiB
    img = Image.new("RGB", (SIZE, SIZE))
    img.putdata([((x * 4 + seed * 17) % 256, (y * 4) % 256, (x + y + seed * 31) % 256)
                 for y in range(SIZE) for x in range(SIZE)])
    return img


def encoded(img, fmt):
    buf = io.BytesIO()
    img.save(buf, fmt, quality=90) if fmt == "JPEG" else img.save(buf, fmt)
    return buf.getvalue()


class FolderDataset(Dataset):
    """What torchvision's ImageFolder loader does: open, then convert('RGB')."""

    def __init__(self, root):
        self.paths = sorted(os.path.join(root, n) for n in os.listdir(root))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        with open(self.paths[idx], "rb") as f:
            img = Image.open(f).convert("RGB")  # the decode (and the error) happens here
        data = torch.frombuffer(bytearray(img.tobytes()), dtype=torch.uint8)
        return data.view(SIZE, SIZE, 3).permute(2, 0, 1).float() / 255


def allow_truncated(_worker_id):
    ImageFile.LOAD_TRUNCATED_IMAGES = True


def read_all(data_dir, **kwargs):
    loader = DataLoader(FolderDataset(data_dir), batch_size=4, num_workers=1, **kwargs)
    return sum(len(batch) for batch in loader)


def show(label, fn):
    print(f"-- {label}", flush=True)
    try:
        fn()
        print("   no error", flush=True)
    except OSError:
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()


def main(root):
    print("torch", torch.__version__, "Pillow", Image.__version__, flush=True)
    data_dir = os.path.join(root, "train")
    os.makedirs(data_dir)
    for i in range(16):
        with open(os.path.join(data_dir, f"img_{i:03d}.jpg"), "wb") as f:
            f.write(encoded(make_image(i), "JPEG"))
    bad = os.path.join(data_dir, "img_013.jpg")
    full = open(bad, "rb").read()
    with open(bad, "wb") as f:  # an interrupted download: only the first half arrived
        f.write(full[: len(full) // 2])
    png = encoded(make_image(3), "PNG")

    print("== 1. Pillow alone", flush=True)
    show(f"JPEG cut to {len(full) // 2} of {len(full)} bytes: Image.open(...).load()",
         lambda: Image.open(bad).load())
    show("the same JPEG: Image.open(...).verify()", lambda: Image.open(bad).verify())
    show(f"PNG cut to {len(png) // 2} of {len(png)} bytes: Image.open(...).load()",
         lambda: Image.open(io.BytesIO(png[: len(png) // 2])).load())
    show("JPEG cut to its first 100 bytes: Image.open(...)",
         lambda: Image.open(io.BytesIO(full[:100])))

    print("== 2. DataLoader, num_workers=1, batch_size=4", flush=True)
    loader = DataLoader(FolderDataset(data_dir), batch_size=4, num_workers=1)
    failed = False
    try:
        for step, batch in enumerate(loader):
            print(f"step {step}: batch {tuple(batch.shape)} ok", flush=True)
    except OSError:
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        failed = True
    # the failed iterator is still alive in a reference cycle with its traceback;
    # collect it here so that a fork-started worker in part 5 does not inherit it
    del loader
    gc.collect()

    print("== 3. scan: load() every file", flush=True)
    for path in FolderDataset(data_dir).paths:
        try:
            with Image.open(path) as im:
                im.load()
        except OSError as exc:
            print(f"BAD {path}: {exc}", flush=True)

    print("== 4. ImageFile.LOAD_TRUNCATED_IMAGES = True", flush=True)
    ImageFile.LOAD_TRUNCATED_IMAGES = True
    with Image.open(bad) as im:
        im = im.convert("RGB")
    bottom = [im.getpixel((x, SIZE - 1)) for x in range(SIZE)]
    print(f"loaded {im.size}; distinct colours in the last row: {sorted(set(bottom))}", flush=True)

    print("== 5. the flag and worker start methods", flush=True)
    show("fork workers, flag set in the parent",
         lambda: print("   read", read_all(data_dir, multiprocessing_context="fork"), "samples"))
    show("spawn workers, flag set in the parent only",
         lambda: print("   read", read_all(data_dir, multiprocessing_context="spawn"), "samples"))
    show("spawn workers, flag set by worker_init_fn",
         lambda: print("   read", read_all(data_dir, multiprocessing_context="spawn",
                                           worker_init_fn=allow_truncated), "samples"))

    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    scratch = tempfile.mkdtemp(prefix="truncated-")
    try:
        main(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
