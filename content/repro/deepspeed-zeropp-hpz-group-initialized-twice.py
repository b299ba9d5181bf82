"""ZeRO++ hpZ (zero_hpz_partition_size > 1): a second deepspeed.zero.Init in the same process.

Two CPU ranks (gloo) form one hpZ group of two. The first zero.Init (the "policy" model)
creates DeepSpeed's ZeRO parameter intra parallel group; the second zero.Init (a "reference"
model, built the way a DPO/RLHF script loads its second model under ZeRO-3) is given no
zero_param_parallel_group, tries to create the group again and trips the assertion in
deepspeed/utils/groups.py::_create_zero_param_parallel_group.

Recorded with torch 2.13.0 CPU and deepspeed 0.19.4. On CPU, deepspeed.init_distributed builds
its shared-memory comm op on first use (slow once; cached under TORCH_EXTENSIONS_DIR after that).
"""
import os
import sys
import traceback

os.environ.setdefault("DS_ACCELERATOR", "cpu")
import torch
import torch.multiprocessing as mp

WORLD, HPZ = 2, 2


def worker(rank):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_SIZE=str(HPZ),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT="29581")
    import deepspeed
    deepspeed.init_distributed(dist_backend="gloo")
    config = {"train_batch_size": WORLD, "zero_optimization": {"stage": 3, "zero_hpz_partition_size": HPZ}}
    with deepspeed.zero.Init(config_dict_or_path=config):
        policy = torch.nn.Linear(64, 64)
    print(f"rank {rank}: first zero.Init ok ({policy.weight.ds_numel} elements partitioned)", flush=True)
    try:
        with deepspeed.zero.Init(config_dict_or_path=config):
            reference = torch.nn.Linear(64, 64)
        print(f"rank {rank}: second zero.Init ok with deepspeed {deepspeed.__version__}", flush=True)
    except Exception:
        print(f"rank {rank}: second zero.Init failed with deepspeed {deepspeed.__version__}:", flush=True)
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        os._exit(1)


if __name__ == "__main__":
    try:
        mp.spawn(worker, nprocs=WORLD, join=True)
    except mp.ProcessExitedException as exc:
        print(f"launcher: {exc}")
