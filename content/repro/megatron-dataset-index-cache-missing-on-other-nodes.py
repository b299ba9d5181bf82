"""Reproduce the Megatron-style dataset index cache missing on another node.

Megatron-LM, Megatron-DeepSpeed and GPT-NeoX build the GPT dataset index
mappings (document, sample and shuffle index, saved with numpy.save) on one
rank, make every other rank wait in a collective, and then let every rank open
the files with numpy.load(..., mmap_mode="r"). That only works when the cache
folder is one file system that every node sees.

Two gloo processes on this machine stand for two nodes. Each one changes into
its own folder (node0/, node1/) before touching the data, so the relative path
"data/..." is the same string on both but points at node-local storage, as on
a cluster whose data folder is a local disk on each node. The protocol of the
frameworks is replayed with their file names (not their code):

1. Megatron-DeepSpeed (since July 2023) and legacy Megatron-LM 23.06: rank 0 writes
   data/index-cache/<md5>_doc_idx.npy (and _sample_idx, _shuffle_idx), an
   all_reduce of a success count is the barrier, then everyone loads.
2. Megatron Core (core_v0.7.0 and later): rank 0 writes
   <prefix>/cache/GPTDataset_indices/<md5>-GPTDataset-train-document_index.npy
   (and sample_index, shuffle_index, description.txt) and keeps the arrays it
   built, barrier, then the other ranks find no cache, do not build (only
   rank 0 builds) and load.
3. GPT-NeoX and Megatron-LM up to 23.04: rank 0 writes
   <prefix>_train_indexmap_<N>ns_<L>sl_<seed>s_doc_idx.npy next to the data.

Rank 1 ("the other node") fails each time with
    FileNotFoundError: [Errno 2] No such file or directory: '<path>'
Then two fixes are shown: one cache folder that both nodes see (what
--data-cache-path on shared storage gives), and one builder per node (what
GPT-NeoX's use_shared_fs: false does). Observed with torch 2.13.0+cpu.
"""
import hashlib
import os
import socket
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD = 2
SEQ, SAMPLES, SEED = 16, 64, 1234


def build_arrays():
    rng = np.random.RandomState(SEED)
    doc_idx = rng.permutation(np.arange(20, dtype=np.int32))
    sample_idx = np.stack([np.arange(SAMPLES + 1, dtype=np.int32), np.zeros(SAMPLES + 1, dtype=np.int32)], axis=1)
    shuffle_idx = rng.permutation(np.arange(SAMPLES, dtype=np.uint32))
    return doc_idx, sample_idx, shuffle_idx


def save_all(paths):
    for path, array in zip(paths, build_arrays()):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        np.save(path, array, allow_pickle=True)


def load_all(rank, paths):
    try:
        for path in paths:
            np.load(path, allow_pickle=True, mmap_mode="r")
        print(f"rank {rank}: loaded {len(paths)} index files", flush=True)
    except OSError as exc:
        print(f"rank {rank}: np.load failed:\n{type(exc).__name__}: {exc}", flush=True)


def wait_for_rank0():
    # the frameworks' "barrier": an all_reduce of 1 (or of a success flag) per rank
    dist.all_reduce(torch.ones(1))


def scenario_deepspeed_style(rank):
    prefix = "data/corpus_text_document"
    desc = f"GPT Dataset\n\nData prefix {prefix}\nDataset name train\nNumber of samples {SAMPLES}\n"
    desc_hash = hashlib.md5(desc.encode("utf-8")).hexdigest()
    cache = os.path.join(os.path.dirname(prefix), "index-cache")
    paths = [os.path.join(cache, f"{desc_hash}_{kind}_idx.npy") for kind in ("doc", "sample", "shuffle")]
    if rank == 0 and not all(map(os.path.isfile, paths)):
        print(" > WARNING: could not find index map files, building the indices on rank 0 ...", flush=True)
        save_all(paths)
    wait_for_rank0()
    load_all(rank, paths)


def scenario_core_style(rank, cache=None):
    prefix = "data/corpus_text_document"
    cache = cache or os.path.join(prefix, "cache", "GPTDataset_indices")
    desc_hash = hashlib.md5(f"GPTDataset {prefix} train {SAMPLES} {SEQ} {SEED}".encode()).hexdigest()
    base = os.path.join(cache, f"{desc_hash}-GPTDataset-train-")
    paths = [base + f"{kind}_index.npy" for kind in ("document", "sample", "shuffle")]
    cache_hit = all(map(os.path.isfile, paths + [base + "description.txt"]))
    built = rank == 0 and not cache_hit
    if built:
        print("Build and save the GPTDataset train indices", flush=True)
        save_all(paths)
        with open(base + "description.txt", "w") as f:
            f.write("GPTDataset\n")
    dist.barrier()  # BlendedMegatronDatasetBuilder: rank 0 first, barrier, then the others
    if built:  # from core_v0.5.0 the builder keeps the arrays it computed
        print(f"rank {rank}: uses the indices it built", flush=True)
    else:
        load_all(rank, paths)


def scenario_neox_style(rank, builder_per_node=False):
    prefix = "data/corpus_text_document"
    name = f"{prefix}_train_indexmap_{SAMPLES}ns_{SEQ}sl_{SEED}s"
    paths = [f"{name}_{kind}_idx.npy" for kind in ("doc", "sample", "shuffle")]
    builds = builder_per_node or rank == 0  # every process is local rank 0 of its "node" here
    if builds and not all(map(os.path.isfile, paths)):
        if rank == 0:  # print_rank_0: a builder on another node builds silently
            print(" > WARNING: could not find index map files, building the indices on rank 0 ...", flush=True)
        save_all(paths)
    wait_for_rank0()
    load_all(rank, paths)


def worker(rank, port, root):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    node_dir = os.path.join(root, f"node{rank}")      # node-local storage of this "node"
    shared_dir = os.path.join(root, "shared")         # storage both "nodes" mount
    os.makedirs(node_dir, exist_ok=True)
    os.makedirs(shared_dir, exist_ok=True)

    os.chdir(node_dir)
    steps = [
        ("1. Megatron-DeepSpeed / legacy Megatron-LM 23.06 names, node-local data folder", scenario_deepspeed_style),
        ("2. Megatron Core names, default cache under the node-local data prefix", scenario_core_style),
        ("3. GPT-NeoX / Megatron-LM <= 23.04 names, next to the node-local data", scenario_neox_style),
        ("fix A: a cache folder on storage every node sees (--data-cache-path)",
         lambda r: scenario_core_style(r, cache=os.path.join(shared_dir, "index-cache"))),
        ("fix B: one builder per node (GPT-NeoX use_shared_fs: false)",
         lambda r: scenario_neox_style(r, builder_per_node=True)),
    ]
    for title, scenario in steps:
        if rank == 0:
            print(f"== {title}", flush=True)
        dist.barrier()
        scenario(rank)
        dist.barrier()
    dist.destroy_process_group()


def main():
    print(f"torch {torch.__version__}, numpy {np.__version__}", flush=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as root:  # fresh "nodes" on every run: a cache left from the last run hides the failure
        mp.spawn(worker, args=(port, root), nprocs=WORLD, join=True)


if __name__ == "__main__":
    main()
