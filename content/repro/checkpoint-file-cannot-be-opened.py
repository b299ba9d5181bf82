"""Reproduce torch.save failing to open the checkpoint file for writing.

torch.save(obj, path) hands the path to PyTorch's C++ zip writer
(PyTorchStreamWriter), which opens it with truncation before anything is
written. It never creates folders. Four saves that training scripts get wrong
are tried, each in the scratch folder the script runs in:

1. into a checkpoint folder that was never created (a relative path, as in
   most training scripts): "Parent directory checkpoints does not exist."
   (1.12 and later);
2. onto a path that is an existing folder (the output folder passed where a
   file name was expected): from 2.10 "open file failed with strerror: Is a
   directory"; 1.12 to 2.9 say "File checkpoints cannot be opened." instead;
3. into a folder the process may not write to: "Permission denied". A
   folder with mode 0555 is used when not running as root; root ignores
   directory permissions, so as root the sysfs folder /sys is used instead,
   where nobody may create files;
4. with a file name longer than the file system allows (255 bytes on
   ext4/xfs/tmpfs): "File name too long".

Then the usual fix, os.makedirs(folder, exist_ok=True) before the save, is
shown to work. Observed with torch 2.13.0+cpu.
"""
import os
import stat

import torch


def attempt(label, state, path):
    print(f"{label}: torch.save(state, {path[:60]!r}{'...' if len(path) > 60 else ''})", flush=True)
    try:
        torch.save(state, path)
        print("  saved", flush=True)
    except Exception as exc:  # noqa: BLE001 - print whatever this release raises
        print(f"{type(exc).__name__}: {exc}", flush=True)


def main():
    print(f"torch {torch.__version__}, cwd {os.getcwd()}", flush=True)
    state = {"model": torch.nn.Linear(8, 8).state_dict(), "step": 100}

    # 1. The checkpoint folder does not exist (torch.save does not create it).
    attempt("missing folder", state, os.path.join("checkpoints", "epoch_1.pt"))

    # 2. The path is an existing folder, not a file name.
    os.makedirs("checkpoints", exist_ok=True)
    attempt("path is a folder", state, "checkpoints")

    # 3. A folder the process may not write to.
    if os.geteuid() != 0:
        os.makedirs("read_only", exist_ok=True)
        os.chmod("read_only", stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        attempt("read-only folder", state, os.path.join("read_only", "epoch_1.pt"))
        os.chmod("read_only", stat.S_IRWXU)
    elif os.path.isdir("/sys"):
        attempt("folder nobody may write to (running as root)", state, "/sys/epoch_1.pt")

    # 4. A file name longer than the file system allows.
    attempt("name too long", state, os.path.join("checkpoints", "run_" + "x" * 300 + ".pt"))

    # The fix: create the folder first, then save.
    os.makedirs(os.path.join("runs", "exp1"), exist_ok=True)
    attempt("after os.makedirs", state, os.path.join("runs", "exp1", "epoch_1.pt"))


if __name__ == "__main__":
    main()
