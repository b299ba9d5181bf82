"""DeepSpeed AutoTP training with a model that AutoTP left unpartitioned: IndexError in the first step.

Needs DeepSpeed next to PyTorch (checked with DeepSpeed 0.19.4 and torch 2.13.0); runs two processes
on the CPU accelerator with gloo, in well under a minute.

The DeepSpeed config asks for tensor parallelism ("tensor_parallel": {"autotp_size": 2}), bf16 with
ZeRO stage 1 and fp32 gradient accumulation (which selects BF16_Optimizer). The engine therefore
builds tensor-parallel groups, but in case 1 no layer is replaced by an AutoTP layer: the custom
partition_config names parameters the model does not have. BF16_Optimizer.get_grads_for_norm keeps,
on tensor-parallel ranks other than 0, only parameters marked as tensor-parallel; there are none,
so get_global_norm_of_tensors() gets an empty list and fails with IndexError. TP rank 0 goes on to
the all-reduce over the model-parallel group and waits there for its peer; here it fails when rank 1's
process exits (gloo: "Connection closed by peer"). The short process-group timeout set below only
bounds the wait if the peer stays alive.

Case 2 adds "strict_mode": true, which turns the silent miss into an error at initialize.
Case 3 uses patterns that match the model: both ranks hold tensor-parallel shards and step.
"""
import datetime
import os
import sys
import traceback
import warnings

import torch
import torch.multiprocessing as mp

NO_MATCH = {"use_default_specs": False,
            "layer_specs": [{"patterns": [r".*\.o_proj\.weight$"], "partition_type": "row"}]}
MATCH = {"use_default_specs": False,
         "layer_specs": [{"patterns": [r"^0\.weight$"], "partition_type": "column"},
                         {"patterns": [r"^2\.weight$"], "partition_type": "row"}]}
CASES = [("case 1: partition_config matches nothing", NO_MATCH),
         ("case 2: same, with strict_mode", dict(NO_MATCH, strict_mode=True)),
         ("case 3: partition_config matches the Linear layers", MATCH)]


def run(rank, world, case, port):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    warnings.simplefilter("ignore")
    import deepspeed
    deepspeed.init_distributed(dist_backend="gloo", timeout=datetime.timedelta(seconds=15))
    title, partition_config = CASES[case]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    config = {"train_micro_batch_size_per_gpu": 2,
              "bf16": {"enabled": True},
              "zero_optimization": {"stage": 1},
              "data_types": {"grad_accum_dtype": "fp32"},
              "tensor_parallel": {"autotp_size": world, "partition_config": partition_config},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "torch_adam": True}}}
    try:
        engine = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)[0]
        tp = [n for n, p in engine.module.named_parameters() if getattr(p, "tensor_model_parallel", False)]
        print(f"--- {title}: rank {rank}: optimizer {type(engine.optimizer).__name__}, "
              f"tensor-parallel parameters {tp}", flush=True)
        x = torch.randn(2, 16, dtype=torch.bfloat16)
        loss = engine(x).float().pow(2).mean()
        engine.backward(loss)
        engine.step()
        print(f"--- {title}: rank {rank}: step ok, global_steps={engine.global_steps}", flush=True)
    except Exception:  # noqa: BLE001
        print(f"--- {title}: rank {rank}: raised", flush=True)
        traceback.print_exc()
        sys.stderr.flush()


if __name__ == "__main__":
    print(f"torch {torch.__version__}", flush=True)
    for case in range(len(CASES)):
        mp.spawn(run, args=(2, case, 29641 + case), nprocs=2)
