"""Megatron-Bridge's evaluation split meets a validation loader that yields single micro batches.

Needs the megatron-bridge package installed next to PyTorch (checked with the 0.3.1
wheel from PyPI installed with --no-deps, torch 2.13.0+cpu, Python 3.11.7). Importing
`megatron.bridge` pulls in the whole model stack, so the script loads only the two
installed modules that matter, by file path: data/samplers.py (the loader builder and
its samplers) and data/finetuning.py (prepare_finetuning_batch and
split_batch_into_microbatches; data/batch_utils.py in 0.6.0). Both need only torch.

A toy fine-tuning dataset of dict samples stands in for SQuAD. For one data-parallel
rank of eight (the samplers only compute indices, no process group is needed):

1. The loader the in-training validation of v0.2.0-v0.2.2 uses (and of v0.3.0+ for
   GPTDatasetConfig): "cyclic", micro batch 1. Evaluation asks for
   global 128 // (micro 1 x DP 8) = 16 pieces of its first batch and the split prints
       ValueError: Batch size 1 is not divisible by num_microbatches 16. Cannot split evenly into microbatches.
2. The same with micro batch 2, global batch 8 on one rank: 8 // (2 x 1) = 4 pieces of
   a 2-row batch.
3. The loader for a "batch" dataset: the rank's whole share of the global batch, 16 rows,
   splits into 16 micro batches of one row.

The script exits 0.
"""
import importlib.metadata
import importlib.util
import traceback

import torch


def load(dist, *candidates):
    """Load one module of an installed distribution from its file, without its package __init__."""
    for rel in candidates:
        path = dist.locate_file(rel)
        if path.exists():
            spec = importlib.util.spec_from_file_location(rel.replace("/", ".")[:-3], path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise SystemExit(f"none of {candidates} in megatron-bridge {dist.version}")


dist = importlib.metadata.distribution("megatron-bridge")
print(f"megatron-bridge {dist.version}, torch {torch.__version__}", flush=True)
samplers = load(dist, "megatron/bridge/data/samplers.py")
split = load(dist, "megatron/bridge/data/batch_utils.py", "megatron/bridge/data/finetuning.py")


class ToySFT(torch.utils.data.Dataset):
    def __len__(self):
        return 1024

    def __getitem__(self, i):
        return {"tokens": torch.full((12,), i), "labels": torch.full((12,), i), "loss_mask": torch.ones(12)}


def evaluate_once(loader_type, global_batch, micro_batch, dp_size):
    loader = samplers.build_pretraining_data_loader(
        ToySFT(), 0, loader_type, micro_batch, 0, True,
        pin_memory=False, data_parallel_rank=0, data_parallel_size=dp_size, global_batch_size=global_batch,
    )
    num_microbatches = global_batch // (micro_batch * dp_size)  # what evaluate() computes
    print(f"--- {loader_type!r} loader, global {global_batch}, micro {micro_batch}, DP {dp_size}: "
          f"evaluation asks for {num_microbatches} microbatches", flush=True)
    try:
        pieces, seq_len = split.prepare_finetuning_batch(iter(loader), num_microbatches, default_seq_length=12)
        pieces = list(pieces)
        print(f"ok: {len(pieces)} microbatches of {pieces[0]['tokens'].shape[0]} row(s), seq length {seq_len}",
              flush=True)
    except ValueError:
        print(traceback.format_exc(), end="", flush=True)


evaluate_once("cyclic", 128, 1, 8)
evaluate_once("cyclic", 8, 2, 1)
evaluate_once("batch", 128, 1, 8)
