"""Reproduce DCP async staging failing with KeyError: <class 'type'> on CPU (gloo, 1 rank).

The failure needs a DefaultStager that is reused across saves, as torchtitan's
async_with_pinned_mem mode does (one stager kept for the whole run and passed to
torch.distributed.checkpoint.async_save as async_stager).

In PyTorch 2.11.0, 2.12.0 and 2.12.1, DefaultStager._stage ends with
`self._state_dict_stager.close()`, and StateDictStager.close() empties the deep-copy
dispatch table. The next stage() of the same stager then copies every dict through its
pickle reduction, whose arguments include the class `dict`; for a class object the
stager indexes the (now empty) table with `type` and raises KeyError: <class 'type'>.
2.13.0 removed that close() from _stage, so this script patches it back in (the same
two lines) to show the released 2.11/2.12 behaviour with the torch installed here.

1. Reused stager with the 2.11/2.12 close-after-stage: first save works, second fails.
2. The same with a fresh DefaultStager for every save: both saves work.
"""
import os
import tempfile
import traceback

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions


def released_2_12_stage(self, state_dict, **kwargs):
    # torch/distributed/checkpoint/staging.py DefaultStager._stage at v2.12.0 (CPU branch)
    state_dict = self._state_dict_stager.stage(state_dict, non_blocking=False)
    self._state_dict_stager.close()
    return state_dict


def make_stager():
    # torchtitan uses StagingOptions(True, True, True, True); without CUDA pinning is
    # skipped and non-blocking copies need an accelerator, so only async staging (a
    # background thread) is kept here (shared memory is left off as well).
    return DefaultStager(
        StagingOptions(
            use_pinned_memory=False,
            use_shared_memory=False,
            use_async_staging=True,
            use_non_blocking_copy=False,
        )
    )


def save_twice(root, reuse_stager):
    model = torch.nn.Linear(4, 4)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
    stager = None
    for step in (10, 20):
        if stager is None or not reuse_stager:
            stager = make_stager()
        state = {"model": model.state_dict(), "optimizer": opt.state_dict()}
        resp = dcp.async_save(
            state,
            checkpoint_id=os.path.join(root, f"step-{step}"),
            async_stager=stager,
        )
        try:
            resp.staging_completion.result()
            resp.upload_completion.result()
            print(f"step {step}: checkpoint saved", flush=True)
        except Exception:
            print(f"step {step}: checkpoint failed", flush=True)
            traceback.print_exc()
        if not reuse_stager:
            stager.close()
    if reuse_stager:
        stager.close()


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    dist.init_process_group("gloo", rank=0, world_size=1)
    original, DefaultStager._stage = DefaultStager._stage, released_2_12_stage
    try:
        with tempfile.TemporaryDirectory() as root:
            for folder, reuse, title in (("reused", True, "1. reused stager, PyTorch 2.11/2.12 _stage (close after every stage)"),
                                         ("fresh", False, "2. fresh stager for every save, same 2.11/2.12 _stage")):
                print(f"== {title}", flush=True)
                save_twice(os.path.join(root, folder), reuse_stager=reuse)
    finally:
        DefaultStager._stage = original
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
