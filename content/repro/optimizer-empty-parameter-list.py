"""Reproduce "ValueError: optimizer got an empty parameter list".

torch.optim.Optimizer.__init__ turns `params` into a list and raises when
that list has no element. It never looks at requires_grad, so the list is
empty only because of what the caller handed over. The script builds the
usual empty lists, prints the counts a reader would use to confirm the
cause, and prints each traceback:

1. a fully frozen model passed through a requires_grad filter;
2. a name filter ("lora_") that matches no parameter name;
3. layers kept in a plain Python list and a plain tensor instead of
   nn.ModuleList / nn.Parameter, so the module registers nothing;
4. the model.parameters() generator used up before the optimizer sees it;
5. FSDP (FSDP1, use_orig_params=False) wrapping the whole model, after which
   a submodule's .parameters() is empty because its weights now live in the
   wrapper's FlatParameter;
6. ZeroRedundancyOptimizer given an empty list, which has its own wording:

       ValueError: ZeroRedundancyOptimizer got an empty parameter list

It also shows two cases torch accepts silently: frozen tensors passed
without a filter, and param groups whose "params" lists are empty.
One process, gloo backend with world size 1 for cases 5 and 6, CPU only.
"""
import os
import socket
import traceback

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.optim import ZeroRedundancyOptimizer

failures = 0


def attempt(title, build):
    global failures
    print(f"== {title}", flush=True)
    try:
        opt = build()
        sizes = [len(g["params"]) for g in opt.param_groups]
        print(f"optimizer created, tensors per group: {sizes}", flush=True)
    except ValueError:
        traceback.print_exc()
        failures += 1


def counts(model):
    params = list(model.parameters())
    trainable = sum(p.requires_grad for p in params)
    print(f"tensors: {len(params)}, trainable: {trainable}, names: {[n for n, _ in model.named_parameters()][:4]}",
          flush=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(8, 8)
        self.head = nn.Linear(8, 2)


class Unregistered(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [nn.Linear(8, 8) for _ in range(3)]  # plain list: not registered
        self.scale = torch.ones(8, requires_grad=True)  # plain tensor: not registered


class Registered(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        self.scale = nn.Parameter(torch.ones(8))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    frozen = Net().requires_grad_(False)
    counts(frozen)
    attempt("1. frozen model, requires_grad filter",
            lambda: torch.optim.AdamW([p for p in frozen.parameters() if p.requires_grad], lr=1e-3))
    attempt("1b. same frozen model, no filter (accepted, but nothing will train)",
            lambda: torch.optim.AdamW(frozen.parameters(), lr=1e-3))
    attempt("1c. two groups with empty 'params' lists (accepted)",
            lambda: torch.optim.AdamW([{"params": []}, {"params": [], "weight_decay": 0.0}], lr=1e-3))

    net = Net()
    attempt("2. name filter that matches nothing",
            lambda: torch.optim.AdamW([p for n, p in net.named_parameters() if "lora_" in n], lr=1e-3))

    bad = Unregistered()
    counts(bad)
    attempt("3. layers in a plain list, tensor instead of nn.Parameter",
            lambda: torch.optim.SGD(bad.parameters(), lr=0.1))
    attempt("3b. nn.ModuleList and nn.Parameter", lambda: torch.optim.SGD(Registered().parameters(), lr=0.1))

    params = net.parameters()
    print("counted", sum(p.numel() for p in params), "elements from the generator", flush=True)
    attempt("4. generator already consumed", lambda: torch.optim.SGD(params, lr=0.1))

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_port())
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        wrapped = FSDP(Net(), device_id=torch.device("cpu"), use_orig_params=False)
        counts(wrapped)
        attempt("5. FSDP1 (use_orig_params=False), submodule parameters after wrapping",
                lambda: torch.optim.AdamW(wrapped.module.head.parameters(), lr=1e-3))
        attempt("6. ZeroRedundancyOptimizer, empty list",
                lambda: ZeroRedundancyOptimizer([], optimizer_class=torch.optim.AdamW, lr=1e-3))
    finally:
        dist.destroy_process_group()

    if failures:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
