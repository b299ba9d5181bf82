"""Reproduce a torn (partially written) checkpoint.

A model's state_dict (about 1 MB) is saved with torch.save into a temporary
directory, then the file is truncated to half its size, as happens when a
job is killed (preemption, OOM kill, full disk) while the checkpoint is
still being written. torch.load then fails because the zip container has
no central directory at its end:

    PytorchStreamReader failed reading zip archive: failed finding central directory

The model is made about 1 MB on purpose. Observed with torch 2.13.0+cpu: a
small checkpoint (an 18 KB Linear(64, 64) state_dict) cut to half its size,
or by its last 10 or 100 bytes, fails differently, with
"OSError: [Errno 22] Invalid argument", instead of the miniz message above.
"""
import os
import tempfile

import torch


def main():
    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 8))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ckpt.pt")
        torch.save(model.state_dict(), path)
        full = os.path.getsize(path)
        # Simulate the writer being killed half-way through the write.
        with open(path, "r+b") as f:
            f.truncate(full // 2)
        print(f"saved {full} bytes, truncated to {os.path.getsize(path)} bytes; loading...", flush=True)
        torch.load(path, map_location="cpu", weights_only=True)


if __name__ == "__main__":
    main()
