"""Reproduce Optimizer.load_state_dict being handed something that is not an optimizer state dict.

A short run saves a checkpoint with a save function that stores the optimizer's
and the LR scheduler's state dicts under each other's keys. On resume:

1. the whole checkpoint dict goes to optimizer.load_state_dict;
2. checkpoint["optimizer"] (really the scheduler's state dict) goes to it;
3. the model's state dict goes to it;
4. a dict holding only the optimizer's param_groups (no "state") goes to it.

Cases 1 to 3 end in KeyError: 'param_groups', case 4 in KeyError: 'state'.
Each traceback is printed, then the keys that tell the objects apart, then a
correct load of the right sub-dict.
"""
import os
import tempfile
import traceback

import torch


def save_checkpoint(path, model, optimizer, scheduler):
    # The bug: optimizer and scheduler state dicts stored under each other's keys.
    torch.save({"model": model.state_dict(),
                "optimizer": scheduler.state_dict(),
                "scheduler": optimizer.state_dict(),
                "epoch": 1}, path)


def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    return model, optimizer, scheduler


def try_load(label, optimizer, obj):
    print(f"--- {label}", flush=True)
    try:
        optimizer.load_state_dict(obj)
        print("loaded", flush=True)
    except KeyError:
        traceback.print_exc()


def main():
    model, optimizer, scheduler = build()
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()
    scheduler.step()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ckpt.pt")
        save_checkpoint(path, model, optimizer, scheduler)

        model, optimizer, scheduler = build()
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
        print("checkpoint keys:", sorted(ckpt), flush=True)
        print("ckpt['optimizer'] keys:", sorted(ckpt["optimizer"]), flush=True)
        print("ckpt['scheduler'] keys:", sorted(ckpt["scheduler"]), flush=True)

        try_load("whole checkpoint", optimizer, ckpt)
        try_load("ckpt['optimizer'] (the scheduler's state dict)", optimizer, ckpt["optimizer"])
        try_load("model state dict", optimizer, ckpt["model"])
        try_load("param_groups without state", optimizer,
                 {"param_groups": ckpt["scheduler"]["param_groups"]})

        # The fix: pick the dict that has exactly the optimizer's two keys.
        sub = next(v for v in ckpt.values() if isinstance(v, dict) and set(v) == {"state", "param_groups"})
        optimizer.load_state_dict(sub)
        print("loaded the real optimizer state; state entries:", len(optimizer.state_dict()["state"]), flush=True)


if __name__ == "__main__":
    main()
