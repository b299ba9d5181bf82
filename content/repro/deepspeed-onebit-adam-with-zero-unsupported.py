"""DeepSpeed refuses its compressed-communication optimizers (1-bit Adam, 0/1 Adam, 1-bit LAMB) with ZeRO.

Needs DeepSpeed next to PyTorch (checked with DeepSpeed 0.19.4, torch 2.13.0, CPU accelerator).
One process, gloo, a few seconds.

For each optimizer type the DeepSpeed config can name ("OneBitAdam", "ZeroOneAdam", "OneBitLamb")
and ZeRO stages 1, 2 and 3, deepspeed.initialize stops in
DeepSpeedEngine._configure_basic_optimizer with

    AssertionError: 1bit-Adam is not compatible with ZeRO
    AssertionError: 0/1 Adam is not compatible with ZeRO
    AssertionError: 1bit-Lamb is not compatible with ZeRO

before the optimizer object is built, so no GPU, cupy or MPI is needed to see it. (The 1-bit
optimizers themselves need a GPU communication backend, so the ZeRO-off path cannot train here.)

Then the other way out when ZeRO is what you need: the same model with "AdamW" under ZeRO-2 trains.
"""
import os
import sys
import traceback
import warnings

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29591")
warnings.simplefilter("ignore")
import torch  # noqa: E402
import deepspeed  # noqa: E402

deepspeed.init_distributed(dist_backend="gloo")
print(f"torch {torch.__version__}, deepspeed {deepspeed.__version__}", flush=True)

OPTIMIZERS = {
    "OneBitAdam": {"lr": 1e-3, "freeze_step": 2},
    "ZeroOneAdam": {"lr": 1e-3, "var_freeze_step": 2},
    "OneBitLamb": {"lr": 1e-3, "freeze_step": 2},
}


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def config(opt_type, params, stage):
    return {
        "train_batch_size": 1,
        "optimizer": {"type": opt_type, "params": params},
        "zero_optimization": {"stage": stage},
    }


for opt_type, params in OPTIMIZERS.items():
    for stage in (1, 2, 3):
        net = model()
        try:
            deepspeed.initialize(model=net, model_parameters=net.parameters(), config=config(opt_type, params, stage))
            print(f"--- {opt_type}, ZeRO stage {stage}: engine built (not expected)", flush=True)
        except AssertionError:
            print(f"--- {opt_type}, ZeRO stage {stage}: refused", flush=True)
            traceback.print_exc()
            sys.stderr.flush()

# Keeping ZeRO means giving up compressed communication: a plain AdamW trains under ZeRO-2.
net = model()
engine, _, _, _ = deepspeed.initialize(model=net, model_parameters=net.parameters(),
                                       config=config("AdamW", {"lr": 1e-3, "torch_adam": True}, 2))
loss = engine(torch.randn(1, 8)).pow(2).sum()
engine.backward(loss)
engine.step()
print(f"--- AdamW, ZeRO stage 2: {type(engine.optimizer).__name__} trained one step, loss {loss.item():.4f}",
      flush=True)
