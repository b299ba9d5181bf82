"""Reproduce a DCP load that cannot read the checkpoint's .metadata file.

A small state dict is saved with torch.distributed.checkpoint (DCP, the
format FSDP/FSDP2 SHARDED_STATE_DICT saves, torchtitan and Accelerate
write: one `__<rank>_0.distcp` file per rank plus a `.metadata` file that
rank 0 writes last). It is then loaded back in three situations:

1. incomplete save: `.metadata` is removed after the save, as if the
   coordinator had died (or an async save had not finished) before its
   final write; the data files are all there;
2. wrong folder: the load is pointed at the parent of the DCP folder (the
   `checkpoint-N` folder instead of `checkpoint-N/pytorch_model_fsdp_0`);
3. damaged metadata: `.metadata` exists but is empty (a copy that stopped).

Each load fails in the planning step with a CheckpointException. Observed
with torch 2.13.0+cpu: the loader first logs "Global metadata is not found.
Falling back to rank local metadata." with the FileNotFoundError (or
EOFError) for `.metadata`, then "Rank local metadata is not found." with
one for `__0.metadata`, and the exception ends with
`AssertionError: metadata is None; global metadata read failed: ...`.
Releases up to 2.6.0 show the FileNotFoundError itself inside the
CheckpointException instead.

This runs in one process without a process group (DCP then warns that it
assumes a single process); with a process group every rank runs the same
read in the same step. A 2-rank gloo variant cannot run in a torch-only
environment: DCP's object collectives over gloo call tensor.numpy() and
fail with "RuntimeError: Numpy is not available" in torch 2.13.0+cpu
without NumPy.
"""
import os
import sys
import tempfile
import traceback

import torch
import torch.distributed.checkpoint as dcp


def state():
    return {"model": {"weight": torch.randn(8, 8), "bias": torch.zeros(8)}}


def try_load(label, checkpoint_id):
    print(f"--- {label}: dcp.load(checkpoint_id={checkpoint_id!r})", flush=True)
    target = {"model": {"weight": torch.empty(8, 8), "bias": torch.empty(8)}}
    try:
        dcp.load(target, checkpoint_id=checkpoint_id)
        print(f"--- {label}: load succeeded", flush=True)
    except BaseException:  # CheckpointException derives from BaseException
        sys.stderr.flush()
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()


def main():
    with tempfile.TemporaryDirectory() as root:
        ckpt = os.path.join(root, "checkpoint-10", "pytorch_model_fsdp_0")
        dcp.save(state(), checkpoint_id=ckpt)
        print("saved:", sorted(os.listdir(ckpt)), flush=True)
        try_load("complete checkpoint", ckpt)

        try_load("wrong folder (parent of the DCP folder)", os.path.dirname(ckpt))

        with open(os.path.join(ckpt, ".metadata"), "wb"):
            pass  # truncate to 0 bytes
        try_load("empty .metadata", ckpt)

        os.remove(os.path.join(ckpt, ".metadata"))
        print("left after an incomplete save:", sorted(os.listdir(ckpt)), flush=True)
        try_load("no .metadata", ckpt)


if __name__ == "__main__":
    main()
