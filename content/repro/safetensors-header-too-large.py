"""Reproduce loading a Git LFS pointer file as if it were a checkpoint.

When a model repository is cloned without Git LFS (or `git lfs pull` never
ran, or a CI cache stored only the pointers), every large file in the
working tree is a ~130-byte text stub:

    version https://git-lfs.github.com/spec/v1
    oid sha256:<64 hex digits>
    size <bytes>

safetensors reads the first 8 bytes as a little-endian header length;
"version " is about 2.3e18, far above its 100 MB limit, hence
"Error while deserializing header: HeaderTooLarge" ("header too large" from
safetensors 0.6). safetensors is not installed in the reproduction
environment, so this script shows the torch.load side of the same mistake:
the stub is not a zip archive, so torch.load falls back to the legacy pickle
reader, which sees the byte 'v' (118) as its first opcode:

    weights_only=True (default since PyTorch 2.6): ... Unsupported operand 118
    weights_only=False:                            invalid load key, 'v'.

CPU only, a second or two.
"""
import os
import tempfile
import traceback

import torch

POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 438064459\n"
)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pytorch_model.bin")
        with open(path, "w") as f:
            f.write(POINTER)
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
        print(f"file size {size} bytes, first 8 bytes {head!r} = header length "
              f"{int.from_bytes(head, 'little')} if read as safetensors", flush=True)
        for weights_only in (True, False):
            print(f"--- torch.load(weights_only={weights_only})", flush=True)
            try:
                torch.load(path, map_location="cpu", weights_only=weights_only)
            except Exception:
                traceback.print_exc()


if __name__ == "__main__":
    main()
