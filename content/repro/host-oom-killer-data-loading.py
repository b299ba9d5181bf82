"""Reproduce what a training log shows when the kernel's OOM killer takes a process.

When a node runs out of RAM, the kernel OOM killer (or a cgroup memory limit in
a container or a Slurm job) picks a large process and sends it SIGKILL. The
victim prints nothing; what ends up in the log is how its parent reports the
death. This script uses up no memory: each victim sends itself SIGKILL, which
its parent cannot tell apart from an OOM kill. Three parents are shown:

1. torchrun's elastic agent, for a training worker (exit code -9 and the
   ChildFailedError summary);
2. a launcher that runs the training script through subprocess with
   check=True, as `accelerate launch` does for a single process
   (subprocess.CalledProcessError);
3. the DataLoader, for one of its worker processes.

The kernel's own "Out of memory: Killed process N (python)" line goes to the
kernel log (dmesg), not to the program's output, so it is not reproduced.
"""
import os
import signal
import subprocess
import sys
import traceback

import torch
from torch.utils.data import DataLoader, Dataset


class OOMKilledDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, idx):
        if idx == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.full((4,), float(idx))


def killed_worker():
    # stands in for a training process that the OOM killer picks
    os.kill(os.getpid(), signal.SIGKILL)


def main():
    if sys.argv[1:] == ["--worker"]:
        killed_worker()

    # 1. torchrun (single node, loopback rendezvous) whose only worker is killed
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc-per-node", "1", os.path.abspath(__file__), "--worker"]
    subprocess.run(torchrun, check=False, timeout=120)
    sys.stdout.flush()

    # 2. a launcher that waits for the training process with check=True
    try:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"], check=True, timeout=60)
    except subprocess.CalledProcessError:
        traceback.print_exc()
    sys.stderr.flush()

    # 3. a DataLoader worker killed while loading a batch
    loader = DataLoader(OOMKilledDataset(), batch_size=4, num_workers=1, timeout=20)
    for step, batch in enumerate(loader):
        print("step", step, batch[:, 0].tolist(), flush=True)


if __name__ == "__main__":
    main()
