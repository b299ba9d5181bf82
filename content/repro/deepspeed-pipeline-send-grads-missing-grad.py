"""DeepSpeed pipeline: a stage ends its backward pass without a gradient for a received activation.

Needs DeepSpeed next to PyTorch (checked with DeepSpeed 0.19.4, torch 2.13.0, CPU accelerator).
Two CPU processes (gloo), a two-stage PipelineModule, one train_batch per scenario. The first
launch runs scenario 3 (the fix) and then scenario 1 in the same processes; the second runs 2.

1. Stage 0 sends (hidden, mask) with the mask as a float tensor; stage 1 never uses the mask.
   The receiving stage marks every floating-point input as requiring grad, the mask gets none,
   and stage 1 stops in _exec_send_grads on `assert buffer.grad is not None`.
2. The same model, but the second stage ignores its single input tensor (its output is built
   from a parameter only), so `assert inputs.grad is not None` fails instead.
3. The fix for 1: the mask travels as an integer tensor, which the engine skips; it trains.

The failing process exits; torch.multiprocessing.spawn then stops the other stage, which
would otherwise wait for the gradient forever.
"""
import os
import sys
import traceback
import warnings

os.environ.setdefault("DS_ACCELERATOR", "cpu")
warnings.simplefilter("ignore")
import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402


class Head(torch.nn.Module):
    def __init__(self, mask_dtype):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.mask_dtype = mask_dtype

    def forward(self, x):
        h = self.lin(x)
        return h, torch.ones(h.shape[0], 1, dtype=self.mask_dtype)


class UsesHiddenOnly(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 2)

    def forward(self, inputs):
        hidden, _mask = inputs  # the mask is never used
        return self.lin(hidden)


class IgnoresInput(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(1, 2))

    def forward(self, x):
        return self.bias.expand(x.shape[0], 2)  # no dependency on x


def layers(scenario):
    torch.manual_seed(0)
    if scenario == 2:
        return [torch.nn.Linear(8, 8), IgnoresInput()]
    mask_dtype = torch.float32 if scenario == 1 else torch.long
    return [Head(mask_dtype), UsesHiddenOnly()]


def batches():
    while True:
        yield torch.randn(1, 8), torch.randn(1, 2)


def run(rank, scenario, deepspeed, PipelineModule):
    net = PipelineModule(layers=layers(scenario), num_stages=2, loss_fn=torch.nn.MSELoss(),
                         partition_method="uniform")
    config = {"train_batch_size": 2, "train_micro_batch_size_per_gpu": 1,
              "optimizer": {"type": "Adam", "params": {"lr": 1e-3, "torch_adam": True}}}
    engine, _, _, _ = deepspeed.initialize(model=net, model_parameters=net.parameters(), config=config)
    try:
        loss = engine.train_batch(data_iter=batches())
    except AssertionError:
        print(f"--- scenario {scenario}: stage {engine.stage_id} failed (deepspeed {deepspeed.__version__}, "
              f"torch {torch.__version__})", flush=True)
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        os._exit(1)  # the other stage waits for this gradient; spawn stops it
    print(f"--- scenario {scenario}: stage {engine.stage_id} trained, loss {loss.item():.4f}", flush=True)


def worker(rank, scenarios):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_SIZE="2",
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(29580 + scenarios[-1]))
    import deepspeed
    from deepspeed.pipe import PipelineModule
    deepspeed.init_distributed(dist_backend="gloo")
    for scenario in scenarios:
        run(rank, scenario, deepspeed, PipelineModule)


if __name__ == "__main__":
    for scenarios in ((3, 1), (2,)):
        try:
            mp.spawn(worker, args=(scenarios,), nprocs=2, join=True)
        except (mp.ProcessRaisedException, mp.ProcessExitedException) as exc:
            print(f"launcher, scenarios {scenarios}: {type(exc).__name__}", flush=True)
