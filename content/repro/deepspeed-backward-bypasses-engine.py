"""Bypassing DeepSpeedEngine.backward(): what current DeepSpeed does with a direct loss.backward().

Needs DeepSpeed next to PyTorch (checked with 0.19.4 and torch 2.13.0); runs on the CPU accelerator,
one process, gloo, in well under a minute.

Cases:
1. ZeRO stage 0 (no ZeRO optimizer): a direct loss.backward() on the engine's output is refused with
   "RuntimeError: Direct calls to tensor.backward() are not supported in this configuration. ...".
2. ZeRO stage 2 (and stage 1 with overlap_comm): from DeepSpeed 0.18.3 a direct loss.backward()
   followed by engine.step() trains, and gives the same weights as engine.backward(loss).
   Up to 0.16.4 the same call failed inside the gradient hooks with
   "AttributeError: 'DeepSpeedZeroOptimizer' object has no attribute 'ipg_index'" (not run here:
   that release is not installed).
3. ZeRO stage 2 with torch_autocast fp16 (a loss scaler is needed): a direct loss.backward() without
   engine.scale(loss) is refused with "RuntimeError: Loss scaling is required ...", if the CPU
   accelerator accepts the config; otherwise the case is reported as skipped. With
   engine.scale(loss).backward() the same engine trains.
"""
import os
import sys
import traceback
import warnings

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29683")
warnings.simplefilter("ignore")
import torch  # noqa: E402
import deepspeed  # noqa: E402

deepspeed.init_distributed(dist_backend="gloo")
print(f"torch {torch.__version__}, deepspeed {deepspeed.__version__}", flush=True)


def tiny():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))


def engine_for(zero, extra=None):
    config = {"train_micro_batch_size_per_gpu": 2,
              "optimizer": {"type": "Adam", "params": {"lr": 1e-2, "torch_adam": True}},
              "zero_optimization": zero}
    config.update(extra or {})
    model = tiny()
    return deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)[0]


def train(engine, direct, steps=3):
    torch.manual_seed(1)
    for _ in range(steps):
        loss = engine(torch.randn(2, 8)).pow(2).mean()
        if direct:
            loss.backward()
        else:
            engine.backward(loss)
        engine.step()
    return torch.cat([p.detach().flatten().float() for p in engine.module.parameters()])


def attempt(title, call):
    sys.stdout.flush()
    try:
        print(f"--- {title}: ok, {call()}", flush=True)
    except (RuntimeError, AttributeError, ValueError, AssertionError):
        print(f"--- {title}: raised", flush=True)
        traceback.print_exc()
        sys.stderr.flush()


attempt("stage 0, loss.backward()", lambda: train(engine_for({"stage": 0}), direct=True).shape)


def compare(zero):
    via_engine = train(engine_for(zero), direct=False)
    direct = train(engine_for(zero), direct=True)
    return f"max |engine.backward - loss.backward| weight difference = {(via_engine - direct).abs().max().item():.3g}"


attempt("stage 2, engine.backward vs loss.backward", lambda: compare({"stage": 2}))
attempt("stage 1 + overlap_comm, engine.backward vs loss.backward",
        lambda: compare({"stage": 1, "overlap_comm": True}))

try:
    fp16_engine = engine_for({"stage": 2}, {"torch_autocast": {"enabled": True, "dtype": "torch.float16"}})
except Exception as exc:  # noqa: BLE001
    print(f"--- stage 2 + torch_autocast fp16: skipped ({type(exc).__name__}: {exc})", flush=True)
else:
    attempt("stage 2 + torch_autocast fp16, loss.backward()", lambda: train(fp16_engine, direct=True).shape)

    def scaled(engine, steps=3):
        torch.manual_seed(1)
        for _ in range(steps):
            engine.scale(engine(torch.randn(2, 8)).pow(2).mean()).backward()
            engine.step()
        return f"{steps} steps, global_steps={engine.global_steps}"

    attempt("stage 2 + torch_autocast fp16, engine.scale(loss).backward()",
            lambda: scaled(engine_for({"stage": 2}, {"torch_autocast": {"enabled": True, "dtype": "torch.float16"}})))
