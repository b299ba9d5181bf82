"""Reproduce torch.load refusing a checkpoint under weights_only=True.

A training checkpoint is saved the common way: the model's state_dict plus
the run's argparse.Namespace (hyperparameters). From PyTorch 2.6 on,
torch.load defaults to weights_only=True, whose restricted unpickler only
accepts tensors, plain containers, primitive types and a short list of torch
types, so loading the file without arguments fails with

    _pickle.UnpicklingError: Weights only load failed. ...
    WeightsUnpickler error: Unsupported global: GLOBAL argparse.Namespace was not an allowed global by default. ...

The script then shows the two ways to load it while keeping
weights_only=True: list the offending globals with
torch.serialization.get_unsafe_globals_in_checkpoint (2.6+) and allowlist
them with the torch.serialization.safe_globals context manager (2.5+).
CPU only, no process group, a few seconds.
"""
import argparse
import os
import tempfile
import traceback

import torch


def main():
    model = torch.nn.Linear(8, 2)
    args = argparse.Namespace(lr=3e-4, batch_size=32)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ckpt.pt")
        torch.save({"model": model.state_dict(), "args": args, "step": 100}, path)
        print(f"torch {torch.__version__}: loading with the default weights_only...", flush=True)
        try:
            torch.load(path, map_location="cpu")
            print("loaded without error (weights_only default is False in this release)")
        except Exception:
            traceback.print_exc()
        print("globals that need allowlisting:",
              torch.serialization.get_unsafe_globals_in_checkpoint(path), flush=True)
        with torch.serialization.safe_globals([argparse.Namespace]):
            ckpt = torch.load(path, map_location="cpu", weights_only=True)
        print("loaded with safe_globals:", sorted(ckpt), "step", ckpt["step"], flush=True)


if __name__ == "__main__":
    main()
