"""Megatron-Core's context-parallel batch split meets a sequence length that 2 x CP does not divide.

Needs the megatron-core package importable next to PyTorch (checked with the 0.16.1 wheel
from PyPI installed with `pip install --no-deps --target DIR` and DIR on PYTHONPATH, torch
2.13.0+cpu, Python 3.11; the 0.17 and later wheels require Python 3.12). From 0.16.0
`megatron.core.utils.get_batch_on_this_cp_rank` accepts the context-parallel process group
as an argument, so the real function runs on CPU with gloo and without
`initialize_model_parallel`.

Four processes on gloo form one CP group of 4 and two CP groups of 2 ({0, 1}, {2, 3}).
Each case builds a Megatron-style batch (tokens, labels, loss_mask, position_ids of shape
[micro_batch, seq_len], or only the 4-D attention mask that NeMo's data step passes to a
middle pipeline stage) and hands it to the split, which views every tensor as
[..., 2*CP, seq_len // (2*CP), ...]:

1. CP=2, seq_len 1022 (a multiple of 2 but not of 4): on every rank
       RuntimeError: shape '[1, 4, 255]' is invalid for input of size 1022
2. CP=4, seq_len 4100 (a multiple of CP=4 but not of 2*CP=8):
       RuntimeError: shape '[2, 8, 512]' is invalid for input of size 8200
3. CP=2, only an attention mask [1, 1, 1022, 1022] (the other keys None):
       RuntimeError: shape '[1, 1, 4, 255, 1022]' is invalid for input of size 1044484
4. CP=2, seq_len 1024 (padded to a multiple of 4): the split works and each rank keeps
   1024 / 2 = 512 tokens, two chunks of 256 (rank 0 chunks 0 and 3, rank 1 chunks 1 and 2).

For cases 1-3 rank 0 also prints the last frame of the traceback, whose source line is the
first line of the split's multi-line view call (Python 3.11 adds a caret line under it):
       File ".../megatron/core/utils.py", line 2025, in get_batch_on_this_cp_rank
           val = val.view(
                 ^^^^^^^^^
That source line is what the entry's signature matches; the RuntimeError line itself is
PyTorch's generic view size check, which any failing view prints.

The script exits 0.
"""
import inspect
import os
import socket
import sys
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

try:
    import megatron.core
    from megatron.core.utils import get_batch_on_this_cp_rank
except ImportError:
    sys.exit("this reproduction needs megatron-core (pip install --no-deps megatron-core==0.16.1)")

PARAMS = inspect.signature(get_batch_on_this_cp_rank).parameters
if "cp_group" not in PARAMS:
    sys.exit(f"megatron-core {megatron.core.__version__}: get_batch_on_this_cp_rank takes no cp_group "
             "(before 0.16.0); use 0.16.x")
if "is_hybrid_cp" in PARAMS:
    sys.exit(f"megatron-core {megatron.core.__version__}: this script was written for the 0.16.x signature")


def make_batch(micro_batch, seq_len, mask_only):
    if mask_only:
        mask = torch.ones(micro_batch, 1, seq_len, seq_len, dtype=torch.bool).tril_()
        return {"tokens": None, "labels": None, "loss_mask": None, "attention_mask": mask,
                "position_ids": None}
    tokens = torch.randint(0, 32000, (micro_batch, seq_len))
    return {"tokens": tokens, "labels": tokens.roll(-1, dims=1), "loss_mask": torch.ones(micro_batch, seq_len),
            "attention_mask": None, "position_ids": torch.arange(seq_len).expand(micro_batch, -1).clone()}


def run_case(rank, group, cp, micro_batch, seq_len, mask_only):
    batch = make_batch(micro_batch, seq_len, mask_only)
    try:
        out = get_batch_on_this_cp_rank(batch, cp_group=group)
        local = {k: list(v.shape) for k, v in out.items() if isinstance(v, torch.Tensor)}
        chunk = seq_len // (2 * cp)
        owned = sorted({int(p) // chunk for p in out["position_ids"][0]})
        return f"split ok, local shapes {local}, owns chunks {owned}"
    except RuntimeError as exc:
        if rank == 0:
            traceback.print_exc(limit=-1)
            sys.stderr.flush()
        return f"{type(exc).__name__}: {exc}"


def worker(rank, world, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        # CP=4: the whole world; CP=2: two CP groups, ranks {0, 1} and {2, 3}
        pairs = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        for label, cp, micro_batch, seq_len, mask_only in CASES:
            group = dist.group.WORLD if cp == world else pairs[rank // 2]
            if rank == 0:
                print(f"--- {label}", flush=True)
            dist.barrier()
            result = run_case(rank, group, cp, micro_batch, seq_len, mask_only)
            results = [None] * world
            dist.all_gather_object(results, result)
            if rank == 0:
                for r, line in enumerate(results):
                    print(f"rank {r} (CP rank {r % cp}): {line}", flush=True)
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CASES = [
    ("CP=2, seq_len 1022 (not a multiple of 2*CP=4)", 2, 1, 1022, False),
    ("CP=4, seq_len 4100 (a multiple of CP but not of 2*CP=8), micro batch 2", 4, 2, 4100, False),
    ("CP=2, intermediate pipeline stage: only the attention mask, seq_len 1022", 2, 1, 1022, True),
    ("CP=2, seq_len 1024 (padded to a multiple of 2*CP)", 2, 1, 1024, False),
]

if __name__ == "__main__":
    print(f"megatron-core {megatron.core.__version__}, torch {torch.__version__}", flush=True)
    mp.spawn(worker, args=(4, free_port()), nprocs=4, join=True)
