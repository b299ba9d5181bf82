"""Reproduce a truncated WebDataset shard ending a DataLoader run (tarfile.ReadError).

Needs the webdataset package next to torch (`pip install webdataset`, or
PYTHONPATH pointing at a site-packages that holds webdataset and braceexpand).
Everything runs on the CPU in a few seconds.

Three small shards are written with webdataset's TarWriter; one of them is cut
short, as an interrupted upload, copy or download leaves it. Five parts run:

1. The shards are read through a DataLoader with one worker and the default
   handler (reraise_exception). The good shard before the cut one is read, then
   the worker hits the end of the cut shard in the middle of a member and the
   main process re-raises its error as
   "tarfile.ReadError: Caught ReadError in DataLoader worker process 0."
   with, at the end of the Original Traceback, tarfile's "unexpected end of
   data" decorated by webdataset: " @ <stream>" appended to the message and the
   stream and URL appended to the exception's arguments.
2. The same pipeline with handler=wds.warn_and_continue: webdataset prints the
   exception as a UserWarning (repr of the ReadError), drops the rest of the
   cut shard and goes on with the next shard; the run finishes, with fewer
   samples than the shards hold.
3. A shard cut exactly at a member boundary: tarfile sees a clean end, so
   nothing is raised and the samples after the cut are lost without a word.
4. An empty shard and a shard that is not a tar at all (an HTML error page
   saved under the shard's name): tarfile.open fails at once, with
   'empty file' and 'invalid header'. A shard cut inside a member's header
   (after its pax extended header) fails with 'truncated header', and one cut
   inside the pax record itself with 'empty header' (Python 3.10 and later;
   3.8 and 3.9 say 'missing or bad subsequent header' for both).
5. A scan that reads every member of every shard and also checks for tar's
   end-of-archive marker (two zero blocks), which is what catches the cut of
   part 3.
"""
import gc
import os
import sys
import tarfile
import tempfile
import traceback
import warnings

import torch
from torch.utils.data import DataLoader

try:
    import webdataset as wds
except ImportError:
    sys.exit("this reproduction needs webdataset: pip install webdataset")

SAMPLES_PER_SHARD = 20


def write_shard(path):
    with wds.TarWriter(path) as sink:
        for i in range(SAMPLES_PER_SHARD):
            sink.write({"__key__": f"{os.path.basename(path)[:-4]}-{i:04d}",
                        "bin": os.urandom(3000),
                        "cls": str(i % 3).encode()})


def member_offsets(path):
    with tarfile.open(path) as tar:
        return [(m.name, m.offset, m.offset_data, m.size) for m in tar.getmembers()]


def read_all(urls, **kw):
    dataset = wds.WebDataset(urls, shardshuffle=False, **kw).to_tuple("bin", "cls")
    loader = DataLoader(dataset, batch_size=None, num_workers=1)
    n = 0
    try:
        for _ in loader:
            n += 1
        print(f"finished: {n} samples read")
    except Exception:
        print(f"failed after {n} samples:")
        traceback.print_exc(file=sys.stdout)
    finally:
        del loader
        gc.collect()
    return n


def scan(urls):
    bad = []
    for url in urls:
        try:
            with tarfile.open(url) as tar:
                for m in tar:
                    if m.isreg():
                        tar.extractfile(m).read()
            with open(url, "rb") as f:
                f.seek(0, 2)
                if f.tell() < 1024:
                    raise ValueError("shorter than the end-of-archive marker")
                f.seek(-1024, 2)
                if f.read() != bytes(1024):
                    raise ValueError("no end-of-archive marker: cut at a member boundary?")
        except Exception as e:
            bad.append(f"{url}: {type(e).__name__}: {e}")
    return bad


def main():
    print("torch", torch.__version__, "webdataset", getattr(wds, "__version__", "?"),
          "python", sys.version.split()[0])
    tmp = tempfile.mkdtemp(prefix="wds-corrupt-")
    shards = [os.path.join(tmp, f"shard-{i:03d}.tar") for i in range(3)]
    for p in shards:
        write_shard(p)

    # cut shard-001 in the middle of the data of its 6th member (sample 2's .bin)
    name, offset, offset_data, size = member_offsets(shards[1])[4]
    cut = offset_data + size // 2
    with open(shards[1], "r+b") as f:
        f.truncate(cut)
    print(f"\n== 1. shard-001.tar cut at byte {cut}, inside {name}; default handler")
    read_all(shards)

    print("\n== 2. same shards, handler=wds.warn_and_continue")
    with warnings.catch_warnings():
        warnings.simplefilter("always", UserWarning)
        warnings.simplefilter("ignore", ResourceWarning)
        n = read_all(shards, handler=wds.warn_and_continue)
    print(f"   {3 * SAMPLES_PER_SHARD} samples written, {n} read")

    # shard-002 cut exactly where its 11th member (sample 5) starts
    boundary = member_offsets(shards[2])[10][1]
    with open(shards[2], "r+b") as f:
        f.truncate(boundary)
    print(f"\n== 3. shard-002.tar cut at byte {boundary}, a member boundary; default handler")
    n = read_all([shards[0], shards[2]])
    print(f"   {2 * SAMPLES_PER_SHARD} samples written, {n} read, no error")

    empty = os.path.join(tmp, "shard-empty.tar")
    open(empty, "wb").close()
    html = os.path.join(tmp, "shard-html.tar")
    with open(html, "wb") as f:
        f.write(b"<html><body><h1>403 Forbidden</h1></body></html>\n" * 40)
    print("\n== 4a. an empty shard")
    read_all([empty])
    print("\n== 4b. an HTML page saved as a shard")
    read_all([html])

    # a shard cut inside the ustar header that follows a member's pax header
    torn = os.path.join(tmp, "shard-torn-header.tar")
    write_shard(torn)
    name, offset, offset_data, size = member_offsets(torn)[6]
    with open(torn, "r+b") as f:
        f.truncate(offset_data - 512 + 100)
    print(f"\n== 4c. a shard cut inside the header of {name}")
    read_all([torn])

    # a shard cut inside the pax record (extended header and its data block) of a member
    torn_pax = os.path.join(tmp, "shard-torn-pax.tar")
    write_shard(torn_pax)
    name, offset, offset_data, size = member_offsets(torn_pax)[6]
    with open(torn_pax, "r+b") as f:
        f.truncate(offset + 512 + 188)
    print(f"\n== 4d. a shard cut inside the pax record of {name}")
    read_all([torn_pax])

    print("\n== 5. scan")
    for line in scan(shards + [empty, html, torn, torn_pax]):
        print("BAD", line)


if __name__ == "__main__":
    main()
