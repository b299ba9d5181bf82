"""Reproduce torch.utils.checkpoint's recompute mismatch errors on CPU.

Non-reentrant activation checkpointing (use_reentrant=False) throws away the
activations of a block in the forward pass and runs the block again during
backward. It then checks that the recomputation saved the same number of
tensors, with the same shapes, dtypes and devices, as the original forward.
A block whose behaviour depends on something other than its inputs and the
torch RNG breaks that check:

1. the number of tokens kept is drawn with Python's `random` module, which
   checkpoint does not save and restore:
       torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than during the forward pass.
2. a global flag read inside the block changes between forward and backward:
       torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: A different number of tensors was saved during the original forward and recomputation.
3. the same block as 1 drawing from the torch RNG instead, which checkpoint
   does restore (preserve_rng_state=True): backward succeeds.
4. the flag flipped the other way (the recomputation saves more tensors) with
   early stop switched off, so the recomputation runs to the end:
       torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: trying to save more tensors during recomputation than during the original forward pass.
5. case 2 again with debug=True, which wraps the error in an operator log:
       torch.utils.checkpoint.CheckpointError:  An error happened while unpacking tensors; dumping logs of latest computation
        ERROR: Detected non-determinism while running activation checkpointing
"""
import random
import traceback

import torch
from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop

CONFIG = {"extra_layer": True}


def keep_random_tokens_python(x):
    n = random.randint(2, x.shape[0])          # not restored by checkpoint
    return torch.sin(x[:n]).sum(0)


def keep_random_tokens_torch(x):
    n = int(torch.randint(2, x.shape[0] + 1, ()))   # torch RNG: restored
    return torch.sin(x[:n]).sum(0)


def block_with_global_flag(x):
    h = torch.sin(x)
    if CONFIG["extra_layer"]:
        h = torch.cos(h)
    return h


def run(title, fn, between=None, early_stop=True, debug=False):
    print(f"== {title}", flush=True)
    x = torch.randn(16, 8, requires_grad=True)
    with set_checkpoint_early_stop(early_stop):
        out = checkpoint(fn, x, use_reentrant=False, debug=debug)
    if between:
        between()
    try:
        out.sum().backward()
        print("backward OK", flush=True)
    except torch.utils.checkpoint.CheckpointError:
        traceback.print_exc()


def main():
    random.seed(0)
    torch.manual_seed(0)
    run("1. shape drawn with Python random", keep_random_tokens_python)
    run("2. global flag flipped before backward", block_with_global_flag,
        between=lambda: CONFIG.update(extra_layer=False))
    run("3. shape drawn with the torch RNG (restored by checkpoint)", keep_random_tokens_torch)
    CONFIG.update(extra_layer=False)
    run("4. flag flipped on before backward, early stop off", block_with_global_flag,
        between=lambda: CONFIG.update(extra_layer=True), early_stop=False)
    CONFIG.update(extra_layer=True)
    run("5. case 2 with debug=True", block_with_global_flag,
        between=lambda: CONFIG.update(extra_layer=False), debug=True)


if __name__ == "__main__":
    main()
