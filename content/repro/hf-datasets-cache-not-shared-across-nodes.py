"""Reproduce a processed Hugging Face datasets cache that lives on one node's local disk.

Needs the `datasets` package next to torch. Runs offline on the CPU in a few seconds:
two processes (gloo) stand for the first process of node 0 and of node 1.

A `datasets.Dataset` that was loaded or mapped with caching on is backed by memory-mapped
Arrow files (the builder's shards and the `cache-<fingerprint>.arrow` files that `map`,
`filter`, `shuffle` ... write next to them). Pickling such a dataset (torch.distributed
object collectives, Ray/submitit arguments, torch.save of a Python object) stores only the
paths of those files and the transforms to replay; unpickling re-opens them by path.

1. Rank 0 loads a JSON file with `load_dataset` into its node-local cache folder and maps
   it (writing `cache-<fingerprint>.arrow`), then hands the Dataset to rank 1 with
   `broadcast_object_list`. On one machine both ranks see the same disk, so before the
   broadcast the script moves rank 0's cache folder aside: rank 1 then stands where a process
   on another node stands, and unpickling fails in pyarrow:
       FileNotFoundError: [Errno 2] Failed to open local file '.../cache-<fp>.arrow'. Detail: [errno 2] No such file or directory
2. The same with the dataset `load_dataset` returned, before any `map`: the file that
   cannot be opened is then the builder's shard (`.../<config hash>/json-train.arrow`).
   The cache file's path handed over as a string (`Dataset.from_file(path)`) fails the same way,
   and so does a dataset mapped with `num_proc=2`, whose results are the files
   `cache-<fp>_00000_of_00002.arrow` and `cache-<fp>_00001_of_00002.arrow`.
3. What rank 1 does when it runs the same pipeline itself with its own node-local cache:
   `map` finds no cache file there and recomputes (no error, only duplicated work).
4. The fix: the cache folder on storage both ranks read (here one shared folder); the same
   broadcast now opens the files on rank 1.
"""
import json
import os
import shutil
import sys
import tempfile
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402


def tokenize(batch):
    return {"n_chars": [len(t) for t in batch["text"]]}


def build(data_file, cache_dir, mapped=True):
    from datasets import load_dataset

    ds = load_dataset("json", data_files=data_file, split="train", cache_dir=cache_dir)
    return ds.map(tokenize, batched=True) if mapped else ds


def report(rank, title):
    sys.stdout.write(f"[rank{rank}] {title} failed:\n")
    traceback.print_exc(file=sys.stdout)
    sys.stdout.flush()


def hand_over(rank, obj, what):
    """Broadcast rank 0's object and return it; where unpickling fails, report it and return None."""
    box = [obj if rank == 0 else None]
    try:
        dist.broadcast_object_list(box, src=0)
    except OSError:
        report(rank, what)
        box = [None]
    dist.barrier()
    return box[0]


def worker(rank, world, root, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    import datasets

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    data_file = os.path.join(root, "shared", "train.jsonl")
    local_cache = os.path.join(root, f"node{rank}-local", "hf-datasets-cache")  # this node's own disk
    shared_cache = os.path.join(root, "shared", "hf-datasets-cache")

    # 1. rank 0 prepares on its node-local disk and broadcasts the Dataset object
    if rank == 0:
        print("== 1. Dataset prepared on node 0's local disk, broadcast to node 1", flush=True)
        raw = build(data_file, local_cache, mapped=False)
        ds = build(data_file, local_cache)
        ds_np = raw.map(tokenize, batched=True, batch_size=16, num_proc=2)  # new fingerprint, written as cache-<fp>_0000i_of_00002.arrow
        print(f"[rank0] mapped dataset is backed by {[f['filename'] for f in ds.cache_files]}", flush=True)
        cache_path = ds.cache_files[0]["filename"]
        os.rename(local_cache, local_cache + ".hidden")  # node 1 has no such folder
    got = hand_over(rank, ds if rank == 0 else None, "unpickling the broadcast Dataset")
    if got is not None:
        print(f"[rank{rank}] got a dataset with {got.num_rows} rows", flush=True)

    # 2. the unmapped dataset, then the cache file's path handed over as a string
    if rank == 0:
        print("== 2. the dataset load_dataset returned (no map yet), then a path string", flush=True)
    hand_over(rank, raw if rank == 0 else None, "unpickling the broadcast (unmapped) Dataset")
    paths = [cache_path if rank == 0 else None]
    dist.broadcast_object_list(paths, src=0)
    if rank == 1:
        try:
            datasets.Dataset.from_file(paths[0])
        except OSError:
            report(rank, "Dataset.from_file")
    dist.barrier()
    if rank == 0:
        print("== 2b. a dataset mapped with num_proc=2 (one cache file per worker)", flush=True)
    hand_over(rank, ds_np if rank == 0 else None, "unpickling the broadcast Dataset mapped with num_proc=2")
    if rank == 0:
        os.rename(local_cache + ".hidden", local_cache)
    dist.barrier()

    # 3. rank 1 runs the pipeline itself against its own node-local cache: recomputed, no error
    if rank == 1:
        print("== 3. node 1 runs load_dataset + map itself on its own local disk", flush=True)
        ds1 = build(data_file, local_cache)
        print(f"[rank1] ok, recomputed into {os.path.dirname(ds1.cache_files[0]['filename'])}", flush=True)
    dist.barrier()

    # 4. the fix: the cache on storage every node reads
    if rank == 0:
        print("== 4. cache folder on shared storage", flush=True)
    got = hand_over(rank, build(data_file, shared_cache) if rank == 0 else None, "unpickling the shared-cache Dataset")
    if got is not None:
        print(f"[rank{rank}] ok: {got.num_rows} rows, n_chars[0]={got[0]['n_chars']}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    root = tempfile.mkdtemp(prefix="hf-cache-not-shared-")
    try:
        os.makedirs(os.path.join(root, "shared"))
        with open(os.path.join(root, "shared", "train.jsonl"), "w") as f:
            for i in range(64):
                f.write(json.dumps({"text": "example " * (i % 7 + 1)}) + "\n")
        mp.spawn(worker, args=(2, root, 29641), nprocs=2, join=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
