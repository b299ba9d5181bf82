"""ZeRO-3 fetches one module whose own parameters have two dtypes (a bf16 weight, a frozen fp32 gate).

Two CPU ranks (gloo). The model is built outside zero.Init with a bf16 weight and an fp32
parameter in the same module, and the config has no bf16/fp16 section, so the engine casts
nothing. Only the bf16 weight is trainable, so the optimizer's defragment() sees one dtype.
The first run uses the default all-gather path, which (DeepSpeed 0.12.3 and later) gathers
each dtype separately and succeeds. The second run sets stage3_use_all_reduce_for_fetch_params,
whose fetch path (0.14.3 and later) builds one flat buffer with get_only_unique_item() over the
partitions' dtypes and raises RuntimeError "expected there to be only one unique element in
<generator object ...>" in the first forward. DeepSpeed 0.6.0 to 0.12.2 raise the same error
on the default path. Recorded with torch 2.13.0 CPU and deepspeed 0.19.4.
"""
import os
import sys
import traceback

os.environ.setdefault("DS_ACCELERATOR", "cpu")
import torch
import torch.multiprocessing as mp

WORLD = 2


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(32, 32, dtype=torch.bfloat16))  # trainable, bf16
        self.gate = torch.nn.Parameter(torch.ones(32), requires_grad=False)  # kept in fp32, frozen

    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight) * self.gate.to(x.dtype)


def run(all_reduce_fetch):
    import deepspeed
    model = torch.nn.Sequential(Block())
    config = {"train_batch_size": WORLD, "zero_allow_untested_optimizer": True,
              "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0,
                                    "stage3_use_all_reduce_for_fetch_params": all_reduce_fetch}}
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    engine, *_ = deepspeed.initialize(model=model, optimizer=opt, config=config)
    out = engine(torch.randn(1, 32, dtype=torch.bfloat16))
    engine.backward(out.float().sum())
    engine.step()


def worker(rank):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_SIZE=str(WORLD),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT="29561")
    import deepspeed
    deepspeed.init_distributed(dist_backend="gloo")
    for flag in (False, True):
        try:
            run(flag)
            print(f"rank {rank}: stage3_use_all_reduce_for_fetch_params={flag}: step ok "
                  f"(deepspeed {deepspeed.__version__})", flush=True)
        except Exception:
            print(f"rank {rank}: stage3_use_all_reduce_for_fetch_params={flag} failed "
                  f"(deepspeed {deepspeed.__version__}):", flush=True)
            traceback.print_exc(file=sys.stdout)
            sys.stdout.flush()
            os._exit(1)  # leave the other rank to the launcher, as a real job would


if __name__ == "__main__":
    try:
        mp.spawn(worker, nprocs=WORLD, join=True)
    except mp.ProcessRaisedException:
        pass
    except mp.ProcessExitedException as exc:
        print(f"launcher: {exc}")
