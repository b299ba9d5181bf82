"""Reproduce PyTorchModelHubMixin.from_pretrained calling the constructor without its arguments.

`from_pretrained` builds the model with `cls(**model_kwargs)`, where
model_kwargs holds only the `__init__` parameters it found (by name) in the
checkpoint's config.json plus what the caller passed. Three ways to leave
required parameters out, each ending in Python's TypeError:

1. the checkpoint folder has model.safetensors but no config.json: the mixin
   first logs "config.json not found in <absolute path>";
2. config.json exists but its keys are not the class's parameter names (a
   checkpoint written by another version of the class);
3. the model was created with arguments that are not JSON-serialisable (here
   a SimpleNamespace; an OmegaConf DictConfig from Hydra is the common case),
   so save_pretrained() wrote no config.json at all.

Then two ways that work: the arguments passed to from_pretrained explicitly,
and a model created with plain dicts, whose config.json round-trips.
Needs torch and huggingface_hub (observed with huggingface_hub 2.4.0 and
torch 2.13.0+cpu, Python 3.11).
"""
import json
import os
import tempfile
import traceback
from types import SimpleNamespace

import torch
from huggingface_hub import PyTorchModelHubMixin


class TinyNet(torch.nn.Module, PyTorchModelHubMixin):
    def __init__(self, in_dim: int, hidden: int, n_classes: int = 2):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(in_dim, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, n_classes))


class EncHead(torch.nn.Module, PyTorchModelHubMixin):
    def __init__(self, encoder, head):
        super().__init__()
        self.enc = torch.nn.Linear(encoder["dim"], encoder["dim"])
        self.head = torch.nn.Linear(encoder["dim"], head["classes"])


class Cfg(SimpleNamespace):  # mapping-like but not a dict: not JSON-serialisable
    def __getitem__(self, key):
        return getattr(self, key)


def attempt(name, fn):
    print(f"--- {name}", flush=True)
    try:
        fn()
        print("loaded", flush=True)
    except TypeError:
        traceback.print_exc()


def weights_only(good, folder):
    """A checkpoint folder holding good's weights and no config.json."""
    os.makedirs(folder)
    os.link(os.path.join(good, "model.safetensors"), os.path.join(folder, "model.safetensors"))
    return folder


def run(root):
    good = os.path.join(root, "good")
    TinyNet(8, 16).save_pretrained(good)
    with open(os.path.join(good, "config.json")) as f:
        print("saved:", sorted(os.listdir(good)), json.load(f), flush=True)

    no_config = weights_only(good, os.path.join(root, "no-config"))
    attempt("1. no config.json", lambda: TinyNet.from_pretrained(no_config))

    renamed = weights_only(good, os.path.join(root, "renamed"))
    with open(os.path.join(renamed, "config.json"), "w") as f:
        json.dump({"input_dim": 8, "hidden_dim": 16, "n_classes": 2}, f)
    attempt("2. config.json with other key names", lambda: TinyNet.from_pretrained(renamed))

    opaque = os.path.join(root, "opaque")
    EncHead(Cfg(dim=8), Cfg(classes=3)).save_pretrained(opaque)
    print("saved:", sorted(os.listdir(opaque)), flush=True)
    attempt("3. non-JSON constructor arguments", lambda: EncHead.from_pretrained(opaque))

    attempt("fix: pass the arguments", lambda: TinyNet.from_pretrained(no_config, in_dim=8, hidden=16))
    plain = os.path.join(root, "plain")
    EncHead({"dim": 8}, {"classes": 3}).save_pretrained(plain)
    attempt("fix: plain dict arguments are saved", lambda: EncHead.from_pretrained(plain))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        run(scratch)
