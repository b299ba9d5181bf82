"""Reproduce two nodes preparing the same Hugging Face datasets cache folder at once.

Needs the `datasets` package next to torch (torch itself is not used). Runs offline on
the CPU in a few seconds.

`DatasetBuilder.download_and_prepare` writes a new dataset into `<output_dir>.incomplete`
(the same name for every process, derived from the cache folder and the config hash) and
renames it to `<output_dir>` at the end; the split shards are written as
`<name>-<split>-00000-00000-of-NNNNN.arrow` and then renamed inside that folder. The only
thing that keeps a second process out is a file lock (`<output_dir>_builder.lock`, taken
with flock through the `filelock` package). Two processes on one machine always exclude each
other; processes on different nodes only do if the shared filesystem makes that lock
visible cluster-wide. Here two processes share one cache folder and the builder's lock is
replaced by a no-op, which is what a lock that does not reach across nodes amounts to.
Events fix the order in which the two meet, so the run is deterministic:

1. Both "nodes" find no finished dataset and write the same shard into the same
   `.incomplete` folder. Node 0 renames it first; node 1's rename has no source:
       FileNotFoundError: [Errno 2] No such file or directory: '...incomplete/json-train-00000-00000-of-NNNNN.arrow'
   Leaving the `incomplete_dir` context, node 1 deletes the `.incomplete` folder while node 0
   is writing `dataset_info.json` into it, and the deletion ends with
       OSError: [Errno 39] Directory not empty: '....incomplete'
   Node 0 then moves a folder whose shard node 1 has deleted, and reading the split fails
   in pyarrow with "Failed to open local file '.../json-train.arrow'".
   (Node 0 waits until node 1's deletion has failed before it moves the folder; without that
   wait node 0 can move it first, and node 1's deletion ends with
       FileNotFoundError: [Errno 2] No such file or directory: '....incomplete'
   instead, which is what happened in about one run in three before the wait was added.)
2. The other order: node 1 renames its shard first, node 0 then writes and renames the same
   shard, writes dataset_info.json and moves the folder into place, and node 1, which was
   about to write its own dataset_info.json into the `.incomplete` folder, finds it gone:
       FileNotFoundError: [Errno 2] No such file or directory: '....incomplete/dataset_info.json'
   (node 0 succeeds here; its own shard is the one in the finished folder).
3. The fix: one process prepares (or the lock really excludes), the other waits and then
   finds the finished dataset ("Found cached dataset").
"""
import json
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


class NoLock:
    """Stands for a lock file that the other node's process does not see."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def node(rank, data_file, cache_dir, ev, unlocked, order="rmtree"):
    import datasets
    import datasets.builder as builder_mod
    from datasets import load_dataset

    datasets.disable_progress_bars()
    if unlocked and order == "info":
        builder_mod.FileLock = NoLock
        real_rename = builder_mod.DatasetBuilder._rename
        real_save_info = builder_mod.DatasetBuilder._save_info
        real_prepare_split = builder_mod.ArrowBasedBuilder._prepare_split

        def _prepare_split(self, *args, **kwargs):
            if rank == 0:
                ev["b_renamed"].wait(30)  # node 1 has written and renamed its shard
            return real_prepare_split(self, *args, **kwargs)

        def _rename(self, src, dst):
            real_rename(self, src, dst)
            if rank == 1:
                ev["b_renamed"].set()

        def _save_info(self):
            if rank == 1:
                ev["a_done"].wait(30)  # node 0 has finished and moved the folder into place
            real_save_info(self)

        builder_mod.ArrowBasedBuilder._prepare_split = _prepare_split
        builder_mod.DatasetBuilder._rename = _rename
        builder_mod.DatasetBuilder._save_info = _save_info
    elif unlocked:
        builder_mod.FileLock = NoLock
        real_rename = builder_mod.DatasetBuilder._rename
        real_save_info = builder_mod.DatasetBuilder._save_info
        real_rmdir = os.rmdir

        def _rename(self, src, dst):
            if rank == 0:
                ev["both_wrote"].wait(30)
                real_rename(self, src, dst)
                ev["renamed"].set()
            else:
                ev["both_wrote"].set()
                ev["renamed"].wait(30)
                real_rename(self, src, dst)

        def _save_info(self):
            if rank == 0:
                ev["go_write_info"].wait(30)  # node 1 is in the middle of deleting the folder
                real_save_info(self)
                ev["info_written"].set()
                ev["rmdir_done"].wait(30)  # move the folder only after node 1's rmdir has failed
            else:
                real_save_info(self)

        def rmdir(path, *args, **kwargs):
            if rank == 1 and str(path).endswith(".incomplete"):
                ev["go_write_info"].set()
                ev["info_written"].wait(30)
                try:
                    return real_rmdir(path, *args, **kwargs)
                finally:
                    ev["rmdir_done"].set()
            return real_rmdir(path, *args, **kwargs)

        builder_mod.DatasetBuilder._rename = _rename
        builder_mod.DatasetBuilder._save_info = _save_info
        os.rmdir = rmdir
    try:
        ds = load_dataset("json", data_files=data_file, split="train", cache_dir=cache_dir)
        print(f"[node{rank}] ok: {ds.num_rows} rows", flush=True)
    except OSError:
        if unlocked and rank == 0 and order == "rmtree":
            ev["node1_reported"].wait(30)  # keep the two tracebacks apart
        sys.stdout.write(f"[node{rank}] load_dataset failed:\n")
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
    finally:
        if rank == 0:
            ev["a_done"].set()
        if rank == 1:
            ev["node1_reported"].set()


def run(title, data_file, cache_dir, unlocked, order="rmtree"):
    print(f"== {title}", flush=True)
    ctx = mp.get_context("spawn")
    ev = {k: ctx.Event() for k in ("both_wrote", "renamed", "go_write_info", "info_written", "rmdir_done",
                                   "node1_reported", "b_renamed", "a_done")}
    procs = [ctx.Process(target=node, args=(r, data_file, cache_dir, ev, unlocked, order)) for r in (0, 1)]
    procs[0].start()
    procs[1].start()
    for p in procs:
        p.join()


if __name__ == "__main__":
    root = tempfile.mkdtemp(prefix="hf-prepare-race-")
    try:
        data_file = os.path.join(root, "train.jsonl")
        with open(data_file, "w") as f:
            for i in range(200):
                f.write(json.dumps({"text": f"example {i}"}) + "\n")
        run("1. two nodes prepare one shared cache folder, lock not shared", data_file,
            os.path.join(root, "shared-cache-1"), unlocked=True)
        run("2. the other order: the folder is moved into place while node 1 is about to write dataset_info.json",
            data_file, os.path.join(root, "shared-cache-2"), unlocked=True, order="info")
        run("3. the lock excludes (or one process prepares first): the second finds the finished dataset",
            data_file, os.path.join(root, "shared-cache-3"), unlocked=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)
