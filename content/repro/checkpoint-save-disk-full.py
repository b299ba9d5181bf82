"""Reproduce a checkpoint save that fails because the file system is full.

/dev/full is the Linux device on which every write fails with ENOSPC
("No space left on device"), exactly the error a full disk or a full
partition returns, so the first two saves need no root, no mount and no
real disk filling. Three saves are tried, as training code does them:

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
3. torch.save(obj, path) where the file cannot even be created because the
   file system has no free inode left. /dev/full cannot show this, so when
   running as root a 64 KiB tmpfs with 8 inodes is mounted in the scratch
   folder, its inodes are used up with empty files, and the save is tried
   there (unmounted afterwards). From 2.10 this prints "open file failed
   with strerror: No space left on device"; by the writer's source, 1.13 to
   2.9 report it as "File <path> cannot be opened." (not run here). Skipped
   when not root or when mounting is refused.

Observed with torch 2.13.0+cpu: the same two messages (the same
inline_container.cc line, other byte counts in "unexpected pos") come out
when the target is a regular file on a 1 MiB tmpfs that fills up during the
save, so /dev/full is a faithful stand-in for a full disk here. A quota
(EDQUOT, "Disk quota exceeded") fails the same way with that text instead.
"""
import errno
import os
import stat
import subprocess
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

    no_inodes_left(state)


def no_inodes_left(state):
    # A file system whose inodes are all used: creating the checkpoint file fails with ENOSPC.
    print("torch.save to a path on a file system with no free inodes:", flush=True)
    if os.geteuid() != 0:
        print("  skipped: mounting the small tmpfs needs root", flush=True)
        return
    mnt = os.path.abspath("tiny_fs")
    os.makedirs(mnt, exist_ok=True)
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,nr_inodes=8", "tmpfs", mnt],
                           capture_output=True, text=True, check=False)
    if mount.returncode != 0:
        print(f"  skipped: mount refused ({mount.stderr.strip()})", flush=True)
        return
    try:
        for i in range(100):
            try:
                open(os.path.join(mnt, f"filler_{i}"), "w").close()
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
        try:
            torch.save(state, os.path.join(mnt, "epoch_1.pt"))
            print("  saved", flush=True)
        except Exception as exc:  # noqa: BLE001
            show(exc)
    finally:
        subprocess.run(["umount", mnt], check=False)


if __name__ == "__main__":
    main()
