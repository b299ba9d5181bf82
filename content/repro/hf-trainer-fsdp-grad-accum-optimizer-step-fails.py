"""The micro-batch loop of transformers 4.46.2's Trainer, run on FSDP (FULL_SHARD, CPU, gloo, 2 ranks).

Checked with torch 2.13.0 (CPU build); runs two processes with gloo in well under a minute.

transformers 4.46.2 (src/transformers/trainer.py, _inner_training_loop) wraps each micro-batch of an
accumulation window in

    functools.partial(self.accelerator.no_sync, model=model) if i == len(batch_samples) - 1
    else contextlib.nullcontext

so the *last* backward before the optimizer step runs under FSDP's no_sync(); 4.46.3 and 4.47.0 use
`i != len(batch_samples) - 1`, which puts every micro-batch but the last under no_sync(). Accelerate's
no_sync(model) calls model.no_sync() when the run is distributed. This script copies that loop without
transformers (whose installed release no longer has the bug): clip the gradients as the Trainer does
(max_grad_norm 1.0 by default), then AdamW(foreach=True).step().

Cases (accumulation window of 2 micro-batches unless said otherwise):
1. 4.46.2 order, fp32, use_orig_params=True (the Trainer's default): a gradient kept unsharded
   meets its sharded parameter in the foreach update: "The size of tensor a (..) must match the
   size of tensor b (..)".
2. 4.46.2 order, use_orig_params=False: the same message between the sharded and the full flat
   parameter (106 and 212 elements here).
3. 4.46.2 order, bf16 mixed precision (MixedPrecision(param_dtype=bf16)): the unsharded gradient
   is bf16 next to an fp32 parameter. torch 2.13.0 lets a bf16 tensor through its foreach grouping
   and fails in lerp ("expected dtype float for `end` but got dtype c10::BFloat16"); the grouping
   of torch 2.5.1, 2.9.0 and 2.11.0 (the wording read in their ForeachUtils.h) refuses it first ("Tensors of the same index must be on the same device
   and the same dtype except `step` tensors that can be CPU and float32/64 notwithstanding").
3b. the same with fp16 mixed precision: torch 2.13.0's grouping refuses the fp16 gradient
   ("Tensors of the same index must be on the same device and the same dtype except `step` tensors
   that can be CPU and float32/64, and optimizer states that can be bfloat16 ...").
4. 4.46.2 order with one micro-batch per step (gradient_accumulation_steps=1): the only backward is
   the last one, so it fails the same way.
5. 4.46.3 / 4.47.0 order: three optimizer steps complete.
6. 4.46.2 order on DDP (each rank its own data): no error, but the last micro-batch's gradient is
   never all-reduced, so the two ranks' parameters differ after three steps.
7. 4.46.3 / 4.47.0 order on DDP: the ranks' parameters stay identical.
"""
import contextlib
import os
import sys
import traceback
import warnings

warnings.simplefilter("ignore")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision  # noqa: E402


def run_case(rank, n, fixed, use_orig, low, accum):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    mp_policy = MixedPrecision(param_dtype=low, reduce_dtype=low) if low is not None else None
    model = FSDP(model, device_id=torch.device("cpu"), use_orig_params=use_orig, mixed_precision=mp_policy)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    try:
        for step in range(3):
            batch_samples = [torch.randn(4, 8) for _ in range(accum)]
            for i, inputs in enumerate(batch_samples):
                last = i == len(batch_samples) - 1
                under_no_sync = (not last) if fixed else last
                with model.no_sync() if under_no_sync else contextlib.nullcontext():
                    (model(inputs).float().pow(2).mean() / accum).backward()
            model.clip_grad_norm_(1.0)
            opt.step()
            opt.zero_grad()
            if rank == 0:
                sys.stdout.write(f"case {n}: optimizer step {step + 1} done\n")
    except Exception as e:  # print where it failed and the error line, as a traceback ends with them
        frame = traceback.extract_tb(e.__traceback__)[-1]
        sys.stdout.write(f"[rank{rank}]: case {n}: in {frame.name}: {frame.line}\n"
                         f"[rank{rank}]: " + traceback.format_exception_only(type(e), e)[-1].strip() + "\n")
    sys.stdout.flush()
    dist.barrier()


def run_ddp_case(rank, n, fixed, accum):
    """The same loop on DDP: nothing fails, so compare the parameters of the two ranks afterwards."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    torch.manual_seed(1 + rank)  # each rank gets its own data, as with a distributed sampler
    for step in range(3):
        batch_samples = [torch.randn(4, 8) for _ in range(accum)]
        for i, inputs in enumerate(batch_samples):
            last = i == len(batch_samples) - 1
            under_no_sync = (not last) if fixed else last
            with model.no_sync() if under_no_sync else contextlib.nullcontext():
                (model(inputs).pow(2).mean() / accum).backward()
        opt.step()
        opt.zero_grad()
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(2)]
    dist.all_gather(gathered, flat)
    if rank == 0:
        diff = (gathered[0] - gathered[1]).abs().max().item()
        sys.stdout.write(f"case {n}: DDP after 3 steps, largest parameter difference between ranks: {diff:.3g}\n")
    sys.stdout.flush()
    dist.barrier()


DDP_CASES = {
    "6": dict(fixed=False, accum=2),
    "7": dict(fixed=True, accum=2),
}

CASES = {
    "1": dict(fixed=False, use_orig=True, low=None, accum=2),
    "2": dict(fixed=False, use_orig=False, low=None, accum=2),
    "3": dict(fixed=False, use_orig=True, low=torch.bfloat16, accum=2),
    "3b": dict(fixed=False, use_orig=True, low=torch.float16, accum=2),
    "4": dict(fixed=False, use_orig=True, low=None, accum=1),
    "5": dict(fixed=True, use_orig=True, low=None, accum=2),
}


def worker(rank, wanted):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29617")
    dist.init_process_group("gloo", rank=rank, world_size=2)
    runs = [(n, "", run_case, case) for n, case in CASES.items()] + [(n, "DDP ", run_ddp_case, case) for n, case in DDP_CASES.items()]
    for n, label, run, case in runs:
        if not wanted or n in wanted:
            if rank == 0:
                sys.stdout.write(f"--- case {n}: {label}{case}\n")
                sys.stdout.flush()
            dist.barrier()
            run(rank, n, **case)
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(0)  # skip the slow interpreter teardown of the worker


if __name__ == "__main__":
    mp.spawn(worker, args=(sys.argv[1:],), nprocs=2)
