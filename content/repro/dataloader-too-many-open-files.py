"""Reproduce "Too many open files. Communication with the workers is no longer possible."

On Linux the default sharing strategy for CPU tensors is `file_descriptor`: a
worker puts each tensor of a batch into a shared-memory segment and passes the
segment to the main process as a file descriptor over a Unix socket. The main
process keeps one descriptor open for every received storage that is still
alive. A training or evaluation loop that keeps the batch tensors (appending
them to a list of predictions, indices or losses) therefore holds one
descriptor per kept tensor, until the per-process limit (`ulimit -n`) is
reached and the next descriptor cannot be received.

The script lowers the soft limit to 256 so that this happens within a second:

1. default strategy, batches kept in a list: the DataLoader's own check finds
   the process at its descriptor limit and raises

       RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase the limit using `ulimit -n` in the shell or change the sharing strategy by calling `torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code

2. same loop, but the kept values are copied out of the shared storage
   (`.tolist()` here, `.clone()` works too), so no descriptor stays open and
   the loop finishes under the same limit.
"""
import resource
import sys
import traceback

import torch
from torch.utils.data import DataLoader, Dataset


class DictDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return {"x": torch.zeros(4), "index": idx}


def open_fds():
    import os
    return len(os.listdir("/proc/self/fd"))


def main():
    if not sys.platform.startswith("linux"):
        print("this reproduction needs Linux (file_descriptor sharing strategy)")
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    print("sharing strategy:", torch.multiprocessing.get_sharing_strategy(), flush=True)

    print("== 1. keep every batch (tensors stay in shared memory)", flush=True)
    kept = []
    failed = False
    try:
        for batch in DataLoader(DictDataset(100_000), batch_size=2, num_workers=2):
            kept.append(batch)  # noqa: PERF402 - keeping the batches is the bug being shown
    except RuntimeError:
        traceback.print_exc()
        failed = True
    print(f"kept {len(kept)} batches, {open_fds()} descriptors open", flush=True)
    del kept

    print("== 2. keep plain Python values instead", flush=True)
    indices = []
    for batch in DataLoader(DictDataset(4_000), batch_size=2, num_workers=2):
        indices.extend(batch["index"].tolist())
    print(f"kept {len(indices)} indices, {open_fds()} descriptors open", flush=True)
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
