"""Reproduce a checkpoint save that fails because the file system is full.

/dev/full is the Linux device on which every write fails with ENOSPC
("No space left on device"), exactly the error a full disk or a full
partition returns, so no root, no mount and no real disk filling is needed.
Two saves are tried, as training code does them:

1. torch.save(obj, "/dev/full"): a path, written by PyTorch's C++ zip
   writer. Up to 2.9 the failed write is reported as
   "PytorchStreamWriter failed writing file data/N: file write failed";
   from 2.10 the writer's stream throws, so the first message is the C++
   library's "basic_ios::clear: iostream error". In both cases the context
   manager then tries to finish the archive and fails again with
   "unexpected pos N vs M".
2. torch.save(obj, f) with f an open Python file: the write error is
   Python's "OSError: [Errno 28] No space left on device", again followed
   by "unexpected pos N vs M".

Observed with torch 2.13.0+cpu: the same two messages (the same
inline_container.cc line, other byte counts in "unexpected pos") come out
when the target is a regular file on a 1 MiB tmpfs that fills up during the
save, so /dev/full is a faithful stand-in for a full disk here. A quota
(EDQUOT, "Disk quota exceeded") fails the same way with that text instead.
"""
import os
import stat
import sys

import torch


def show(exc):
    # Print the exception and the one it happened during, as the traceback would.
    chain = []
    while exc is not None:
        chain.append(exc)
        exc = exc.__context__
    for e in reversed(chain):
        print(f"{type(e).__name__}: {e}", flush=True)


def main():
    if not os.path.exists("/dev/full") or not stat.S_ISCHR(os.stat("/dev/full").st_mode):
        sys.exit("/dev/full is not a character device here (Linux only); nothing to reproduce")
    state = {"model": torch.nn.Linear(256, 256).state_dict(), "step": 1000}

    print("torch.save to a path on a full device:", flush=True)
    try:
        torch.save(state, "/dev/full")
    except Exception as exc:  # noqa: BLE001 - print whatever this release raises
        show(exc)

    print("torch.save to an open file on a full device:", flush=True)
    try:
        with open("/dev/full", "wb") as f:
            torch.save(state, f)
    except Exception as exc:  # noqa: BLE001
        show(exc)


if __name__ == "__main__":
    main()
