"""ZeRO++ hpZ (zero_hpz_partition_size > 1) on a parameter too small for the secondary shard.

Four CPU ranks (gloo) form two hpZ groups of two. A Linear(64, 1) has a bias of one element:
DeepSpeed pads it to the data-parallel world size (4), so each secondary shard holds 4 // 2 = 2
elements and the rank with index 1 in its group starts its shard at element 2, past the end of
the one-element bias. DeepSpeed 0.14.4 to 0.19.4 still call narrow() there and the rank raises
IndexError inside Init._partition_param_sec (0.13.5 to 0.14.3 compute a negative length instead).

Needs DeepSpeed 0.14.4 to 0.19.4 next to PyTorch (recorded with torch 2.13.0 CPU and deepspeed
0.19.4); from 0.19.5 the copy is skipped for such shards and every rank prints "ok".
"""
import os
import sys
import traceback

os.environ.setdefault("DS_ACCELERATOR", "cpu")
import torch
import torch.multiprocessing as mp

WORLD, HPZ = 4, 2


def worker(rank):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank % HPZ), WORLD_SIZE=str(WORLD), LOCAL_SIZE=str(HPZ),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT="29547")
    import deepspeed
    deepspeed.init_distributed(dist_backend="gloo")
    config = {"train_batch_size": WORLD, "zero_optimization": {"stage": 3, "zero_hpz_partition_size": HPZ}}
    try:
        with deepspeed.zero.Init(config_dict_or_path=config):
            model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 1))  # bias of 1 element
        print(f"rank {rank}: ok, zero.Init partitioned {sum(1 for _ in model.parameters())} parameters "
              f"with deepspeed {deepspeed.__version__}", flush=True)
    except Exception:
        print(f"rank {rank} (index {rank % HPZ} in its hpZ group) failed with deepspeed {deepspeed.__version__}:", flush=True)
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        os._exit(1)  # leave the other ranks to the launcher, as a real job would


if __name__ == "__main__":
    try:
        mp.spawn(worker, nprocs=WORLD, join=True)
    except mp.ProcessRaisedException:
        pass
    except mp.ProcessExitedException as exc:
        print(f"launcher: {exc}")
