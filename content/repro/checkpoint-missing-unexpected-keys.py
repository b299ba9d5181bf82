"""Reproduce missing/unexpected keys when loading a state_dict.

A checkpoint is saved from a model wrapped the way DistributedDataParallel
(or torch.nn.DataParallel) wraps it, so every key carries the "module."
prefix. Loading it into the bare model with strict=True raises:

    RuntimeError: Error(s) in loading state_dict for Net:
        Missing key(s) in state_dict: "fc1.weight", ...
        Unexpected key(s) in state_dict: "module.fc1.weight", ...

A plain wrapper module with a `module` attribute is used so that no process
group is needed; the key names are identical to DDP's.
"""
import os
import tempfile

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Wrapper(torch.nn.Module):
    """Stands in for DistributedDataParallel: it stores the model as .module."""

    def __init__(self, module):
        super().__init__()
        self.module = module


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ckpt.pt")
        torch.save(Wrapper(Net()).state_dict(), path)
        state = torch.load(path, map_location="cpu", weights_only=True)
        print("checkpoint keys:", list(state), flush=True)
        Net().load_state_dict(state)


if __name__ == "__main__":
    main()
