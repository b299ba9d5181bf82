"""Reproduce a distributed checkpoint (DCP) that no longer fits the model.

A small language model's state_dict is saved with
torch.distributed.checkpoint (DCP, the format FSDP/FSDP2 jobs write, one
file per rank plus a .metadata file with every tensor's global shape) into
a temporary directory. The model is then rebuilt with a larger vocabulary
(1003 rows instead of 1000, as after adding tokens) and DCP load is asked
to fill it from the old checkpoint. The load planner compares the saved
global shape with the current one and fails:

    ValueError: Size mismatch between saved torch.Size([1000, 32]) and current: torch.Size([1003, 32]) for model.embed.weight

(wrapped in torch.distributed.checkpoint.api.CheckpointException).

This runs in one process without a process group (DCP then warns that it
assumes a single process); the shape check is the same planner code that
runs on every rank of a sharded job. Observed with torch 2.13.0+cpu: the
2-rank gloo variant (FSDP2 fully_shard on a CPU mesh) cannot be used in a
torch-only environment, because DCP's gather_object over gloo calls
tensor.numpy() and fails with "RuntimeError: Numpy is not available".
"""
import os
import tempfile

import torch
import torch.distributed.checkpoint as dcp


class TinyLM(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, 32)
        self.body = torch.nn.Linear(32, 32)

    def forward(self, x):
        return self.body(self.embed(x))


def main():
    with tempfile.TemporaryDirectory() as ckpt_dir:
        dcp.save({"model": TinyLM(1000).state_dict()}, checkpoint_id=ckpt_dir)
        print("saved DCP checkpoint:", sorted(os.listdir(ckpt_dir)), flush=True)
        state = {"model": TinyLM(1003).state_dict()}  # vocabulary grew
        dcp.load(state, checkpoint_id=ckpt_dir)


if __name__ == "__main__":
    main()
