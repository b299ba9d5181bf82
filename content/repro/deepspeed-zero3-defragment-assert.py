"""ZeRO-3 given trainable parameters of two dtypes: the optimizer's defragment() asserts.

Two CPU ranks (gloo), three short runs of deepspeed.initialize with ZeRO stage 3:

1. No bf16/fp16 section in the config and a plain model whose first layer was cast to bf16 while
   the second stayed fp32. Without a mixed-precision section the engine casts nothing, so the
   partitions keep both dtypes.
2. bf16 enabled; the body is built under deepspeed.zero.Init (bf16 partitions) and a new head is
   built afterwards, outside zero.Init (fp32). From DeepSpeed 0.19.2 the engine leaves every
   parameter of a zero.Init model as it is, so the head stays fp32 (up to 0.19.1 module.bfloat16()
   casts it and this run prints "ok").
3. The fix for run 2: the head is built inside zero.Init too. Prints "ok".

In runs 1 and 2, DeepSpeedZeroOptimizer_Stage3 packs every trainable partition into one flat
buffer, and defragment() fails its first, message-less assert (all tensors share one dtype).
Recorded with torch 2.13.0 CPU and deepspeed 0.19.4.
"""
import os
import sys
import traceback

os.environ.setdefault("DS_ACCELERATOR", "cpu")
import torch
import torch.multiprocessing as mp

WORLD = 2
BASE = {"train_batch_size": WORLD, "zero_optimization": {"stage": 3}, "zero_allow_untested_optimizer": True}
BF16 = dict(BASE, bf16={"enabled": True})


def build(deepspeed, run):
    if run == 1:
        model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Linear(16, 4))
        model[0].to(torch.bfloat16)
        return model, BASE
    with deepspeed.zero.Init(config_dict_or_path=BF16):
        body = torch.nn.Linear(16, 16)
        head = torch.nn.Linear(16, 4) if run == 3 else None
    if head is None:
        head = torch.nn.Linear(16, 4)  # created after zero.Init: fp32, not partitioned yet
    return torch.nn.Sequential(body, head), BF16


def worker(rank):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_SIZE=str(WORLD),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT="29571")
    import deepspeed
    deepspeed.init_distributed(dist_backend="gloo")
    for run in (1, 2, 3):
        model, config = build(deepspeed, run)
        if rank == 0:
            print(f"run {run}: bf16 section {'bf16' in config}, parameter dtypes "
                  f"{sorted({str(p.dtype) for p in model.parameters()})}", flush=True)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        try:
            engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
            dtypes = sorted({str(p.ds_tensor.dtype) for p in engine.module.parameters()})
            print(f"rank {rank} run {run}: ok, partitions {dtypes}, deepspeed {deepspeed.__version__}", flush=True)
        except AssertionError:
            if rank == 0:  # one traceback is enough; every rank stops at the same line
                print(f"rank {rank} run {run} failed with deepspeed {deepspeed.__version__}:", flush=True)
                traceback.print_exc(file=sys.stdout)
                sys.stdout.flush()
            else:
                print(f"rank {rank} run {run} failed as well (AssertionError)", flush=True)
            # the ranks fail at the same line before any collective, so they stay in step


if __name__ == "__main__":
    try:
        mp.spawn(worker, nprocs=WORLD, join=True)
    except mp.ProcessRaisedException:
        pass
    except mp.ProcessExitedException as exc:
        print(f"launcher: {exc}")
