"""Reproduce KeyError: 'step' when an Adam/AdamW optimizer is given per-parameter state without 'step'.

torch.optim.Optimizer.load_state_dict() pairs saved state with the current parameters by
position only, copies it over, and ends by calling the optimizer's __setstate__(). Adam's
__setstate__ (AdamW inherits it since 2.7; before, adamw.py had its own copy) converts an old
Python-number step to a tensor and reads p_state["step"] for every parameter that has any
state. A state dict whose per-parameter entries lack 'step' therefore fails inside
load_state_dict with KeyError: 'step'.

Ways to get there, each printed with its traceback:
1. the checkpoint holds another optimizer's state (SGD with momentum saved, AdamW loading);
2. a converted / filtered checkpoint that kept only the tensors shaped like each parameter
   and dropped the 0-dim 'step';
3. a state dict laid out like apex FusedAdam's (exp_avg and exp_avg_sq per parameter, the
   step counter in the parameter group);
4. two optimizers saved as a list and loaded in swapped order (same parameter counts);
5. state written straight into optimizer.state, bypassing load_state_dict: the KeyError then
   comes from step().
Last, the same checkpoint is repaired by adding a 'step' to each entry and loads and steps.
"""
import copy
import sys
import traceback

import torch


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 1))


def train_one_step(net, opt):
    net(torch.randn(4, 8)).pow(2).mean().backward()
    opt.step()
    opt.zero_grad()


def attempt(title, fn):
    print(f"--- {title}", flush=True)
    try:
        fn()
        print("ran without error", flush=True)
    except KeyError:
        traceback.print_exc(file=sys.stdout)


def main():
    print("torch", torch.__version__, flush=True)

    # a genuine AdamW checkpoint, for reference
    net = model()
    adamw = torch.optim.AdamW(net.parameters(), lr=1e-3)
    train_one_step(net, adamw)
    good = copy.deepcopy(adamw.state_dict())
    print("AdamW per-parameter keys:", sorted(good["state"][0]), flush=True)

    # 1. another optimizer's state
    net = model()
    sgd = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    train_one_step(net, sgd)
    sgd_sd = sgd.state_dict()
    print("SGD per-parameter keys:", sorted(sgd_sd["state"][0]), flush=True)
    attempt("1. SGD(momentum) state loaded into AdamW",
            lambda: torch.optim.AdamW(model().parameters()).load_state_dict(sgd_sd))

    # 2. a conversion that kept only parameter-shaped tensors
    net = model()
    params = list(net.parameters())
    converted = copy.deepcopy(good)
    converted["state"] = {
        i: {k: v for k, v in s.items() if torch.is_tensor(v) and v.shape == params[i].shape}
        for i, s in converted["state"].items()
    }
    attempt("2. converted checkpoint without the 0-dim 'step'",
            lambda: torch.optim.AdamW(params).load_state_dict(converted))

    # 3. apex FusedAdam layout: step in the param group, not per parameter
    fused_layout = copy.deepcopy(good)
    for s in fused_layout["state"].values():
        s.pop("step")
    for g in fused_layout["param_groups"]:
        g["step"] = 1
    attempt("3. state laid out like apex FusedAdam's (group['step'])",
            lambda: torch.optim.Adam(model().parameters()).load_state_dict(fused_layout))

    # 4. two optimizers saved as a list, loaded in swapped order
    net = model()
    opt_a = torch.optim.AdamW(net[0].parameters())  # 2 tensors
    opt_b = torch.optim.SGD(net[1].parameters(), lr=0.1, momentum=0.9)  # 2 tensors
    net(torch.randn(4, 8)).pow(2).mean().backward()
    opt_a.step()
    opt_b.step()
    saved = [opt_a.state_dict(), opt_b.state_dict()]
    net2 = model()
    new_a = torch.optim.AdamW(net2[0].parameters())
    new_b = torch.optim.SGD(net2[1].parameters(), lr=0.1, momentum=0.9)
    attempt("4. optimizer list restored in the wrong order",
            lambda: [o.load_state_dict(s) for o, s in zip([new_a, new_b], reversed(saved))])

    # 5. state written straight into optimizer.state
    net = model()
    opt = torch.optim.AdamW(net.parameters())
    for p in net.parameters():
        opt.state[p] = {"exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
    attempt("5. optimizer.state filled by hand, then step()", lambda: train_one_step(net, opt))

    # repair: add a step to every non-empty entry, then load and step
    repaired = copy.deepcopy(converted)
    for s in repaired["state"].values():
        if s and "step" not in s:
            s["step"] = torch.tensor(0.0)  # unknown count: 0 restarts Adam's bias correction
    net = model()
    opt = torch.optim.AdamW(net.parameters())
    opt.load_state_dict(repaired)
    train_one_step(net, opt)
    print("repaired checkpoint loads; step values:",
          [float(s["step"]) for s in opt.state.values()], flush=True)


if __name__ == "__main__":
    main()
