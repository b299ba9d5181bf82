"""A Muon written for per-matrix parameters, handed to a DeepSpeed ZeRO engine as a client optimizer.

ZeRO replaces each parameter group's tensors with one flat 1-D fp32 partition, so a Muon that keys
its Muon/AdamW choice on per-parameter state raises KeyError: 'use_muon', and one that keeps the flag
in the group reaches Newton-Schulz with a 1-D tensor and fails `assert G.ndim >= 2`. DeepSpeed's own
Muon (config "type": "Muon") steps the same model; under ZeRO-3 it first needs reduce_scatter off.

Needs DeepSpeed (checked with 0.19.4) next to PyTorch; runs on CPU, one process, gloo.
"""
import os
import traceback

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29541")
import torch
import deepspeed
from deepspeed.runtime.zero.muon.original_muon import MuonWithAuxAdam  # DeepSpeed's copy of KellerJordan/Muon

deepspeed.init_distributed(dist_backend="gloo")


class PerParamFlagMuon(torch.optim.Optimizer):
    """Minimal stand-in for the Moonlight / LLaMA-Factory design: the Muon-or-AdamW flag lives in self.state[p]."""

    def __init__(self, muon_params, adamw_params, lr=0.02):
        super().__init__(list(muon_params) + list(adamw_params), dict(lr=lr))
        for p in muon_params:
            self.state[p]["use_muon"] = True
        for p in adamw_params:
            self.state[p]["use_muon"] = False

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            params = [p for p in group["params"] if self.state[p]["use_muon"]]
            for p in params:  # the real optimizers orthogonalise here
                p.add_(p.grad, alpha=-group["lr"])
        return None


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))


def train(engine, steps=2):
    for _ in range(steps):
        loss = engine(torch.randn(4, 16)).pow(2).mean()
        engine.backward(loss)
        engine.step()


def client(name, make_optimizer, stage=2):
    m = model()
    mats = [p for p in m.parameters() if p.ndim == 2]
    vecs = [p for p in m.parameters() if p.ndim < 2]
    config = {"train_batch_size": 4, "zero_optimization": {"stage": stage}, "zero_allow_untested_optimizer": True}
    engine, _, _, _ = deepspeed.initialize(model=m, optimizer=make_optimizer(mats, vecs), config=config)
    if stage < 3:
        shapes = [[tuple(p.shape) for p in g["params"]] for g in engine.optimizer.optimizer.param_groups]
    else:
        shapes = "one flat fp32 sub-group partition per group, attached only while it steps"
    print(f"--- {name}, ZeRO stage {stage}: tensors the optimizer steps: {shapes}", flush=True)
    try:
        train(engine)
        print("trained", flush=True)
    except (AssertionError, KeyError):
        traceback.print_exc()


def builtin(stage, **zero):
    m = model()
    config = {"train_batch_size": 4, "zero_optimization": {"stage": stage, **zero},
              "optimizer": {"type": "Muon", "params": {"lr": 0.02, "adam_lr": 3e-4}}}
    print(f"--- DeepSpeed's own Muon, ZeRO stage {stage} {zero or ''}", flush=True)
    try:
        engine, _, _, _ = deepspeed.initialize(model=m, model_parameters=m.parameters(), config=config)
        train(engine)
        print("trained; use_muon flags:", [(n, p.use_muon) for n, p in m.named_parameters()], flush=True)
    except ValueError:
        traceback.print_exc()


for stage in (2, 3):
    client("DeepSpeed's copy of KellerJordan MuonWithAuxAdam (ns_method='standard')",
           lambda mats, vecs: MuonWithAuxAdam([dict(params=mats, use_muon=True, ns_method="standard"),
                                               dict(params=vecs, use_muon=False)]), stage)
client("the same, default ns_method='gram'",
       lambda mats, vecs: MuonWithAuxAdam([dict(params=mats, use_muon=True), dict(params=vecs, use_muon=False)]))
for stage in (1, 3):
    client("Muon keeping its flag in per-parameter state", lambda mats, vecs: PerParamFlagMuon(mats, vecs), stage)
builtin(2)
builtin(3)
builtin(3, reduce_scatter=False)
