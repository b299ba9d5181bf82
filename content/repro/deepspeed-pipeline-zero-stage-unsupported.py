"""DeepSpeed's PipelineEngine refuses ZeRO stage 2 and 3.

Needs DeepSpeed next to PyTorch (checked with DeepSpeed 0.19.4, torch 2.13.0, CPU accelerator).
One process, gloo, a PipelineModule with a single stage (num_stages=1): deepspeed.initialize
still builds a PipelineEngine for any PipelineModule, so the check fires even with one stage,
as it does in Megatron-DeepSpeed without --no-pipeline-parallel.

For ZeRO stages 0 to 3 the script builds the engine and, when that works, runs one train_batch:
stages 0 and 1 train; stages 2 and 3 stop in PipelineEngine.__init__ with

    AssertionError: ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism

Then the fix: the same model as a plain nn.Sequential (no PipelineModule) trains under ZeRO-2.
"""
import os
import sys
import traceback
import warnings

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29563")
warnings.simplefilter("ignore")
import torch  # noqa: E402
import deepspeed  # noqa: E402
from deepspeed.pipe import PipelineModule  # noqa: E402

deepspeed.init_distributed(dist_backend="gloo")
print(f"torch {torch.__version__}, deepspeed {deepspeed.__version__}", flush=True)


def layers():
    torch.manual_seed(0)
    return [torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)]


def config(stage):
    return {
        "train_batch_size": 2,
        "train_micro_batch_size_per_gpu": 1,
        "optimizer": {"type": "Adam", "params": {"lr": 1e-3, "torch_adam": True}},
        "zero_optimization": {"stage": stage},
    }


def batches():
    while True:
        yield torch.randn(1, 8), torch.randn(1, 2)


for stage in (0, 1, 2, 3):
    net = PipelineModule(layers=layers(), num_stages=1, loss_fn=torch.nn.MSELoss())
    try:
        engine, _, _, _ = deepspeed.initialize(model=net, model_parameters=net.parameters(), config=config(stage))
        loss = engine.train_batch(data_iter=batches())
        print(f"--- PipelineModule, ZeRO stage {stage}: {type(engine).__name__} trained, loss {loss.item():.4f}",
              flush=True)
    except AssertionError:
        print(f"--- PipelineModule, ZeRO stage {stage}: raised", flush=True)
        traceback.print_exc()
        sys.stderr.flush()

# Fix when the model fits without pipeline parallelism: no PipelineModule, ZeRO-2 allowed.
model = torch.nn.Sequential(*layers())
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config(2))
x, y = torch.randn(1, 8), torch.randn(1, 2)
loss = torch.nn.functional.mse_loss(engine(x), y)
engine.backward(loss)
engine.step()
print(f"--- nn.Sequential, ZeRO stage 2: {type(engine).__name__} trained, loss {loss.item():.4f}", flush=True)
