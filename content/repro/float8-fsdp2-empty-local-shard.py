"""torchao float8 training + FSDP2 when a Linear weight leaves some ranks an empty [0, in_features] shard.

Needs torchao next to PyTorch (checked with torchao 0.18.0 and torch 2.13.0, CPU only). Each case
forks a small gloo process group; float8 runs with emulate=True, so no FP8 GPU is needed. FSDP2's
fully_shard splits each weight along dim 0 into chunks of ceil(out_features / world_size) rows, so
a layer with fewer output rows than that leaves the last ranks an empty local shard.

Cases:
1. Linear(32, 1) on 2 ranks, enable_fsdp_float8_all_gather=True: rank 1 holds a (0, 32) shard and
   the float8 all-gather's amax (tensor_to_amax: torch.max(torch.abs(x))) raises
   "max(): Expected reduction dim to be specified for input.numel() == 0 ...".
2. Linear(32, 6) on 4 ranks: more rows than ranks, yet chunks of 2 rows leave rank 3 empty; same error.
3. precompute_float8_dynamic_scale_for_fsdp on case 1's model: torch._foreach_norm(..., ord=inf)
   raises "_foreach_norm cannot compute the infinity norm on an empty tensor ...".
4. Fix: module_filter_fn keeps the small layer out of float8 conversion; forward, backward and
   precompute work.
5. Workaround: enable_fsdp_float8_all_gather=False (the weight is all-gathered in high precision
   and cast after the all-gather); forward and backward work.
The healthy ranks of a failing case then see their peer leave ("Connection closed by peer" or
"Connection reset by peer" on gloo).
"""
import datetime
import multiprocessing
import os
import socket
import sys
import traceback
import warnings

warnings.simplefilter("ignore")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.distributed.fsdp import fully_shard  # noqa: E402

import torchao  # noqa: E402
from torchao.float8 import (  # noqa: E402
    Float8LinearConfig,
    convert_to_float8_training,
    precompute_float8_dynamic_scale_for_fsdp,
)


def worker(rank, world, port, out_features, fp8_all_gather, precompute, filter_small):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=30))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Linear(32, out_features))
    config = Float8LinearConfig(enable_fsdp_float8_all_gather=fp8_all_gather, emulate=True)
    module_filter_fn = (lambda mod, fqn: mod.out_features >= 16) if filter_small else None
    convert_to_float8_training(model, module_filter_fn=module_filter_fn, config=config)
    fully_shard(model)
    shapes = [tuple(p.to_local().shape) for p in (model[0].weight, model[1].weight)]
    print(f"[rank{rank}] {type(model[1]).__name__}({32}, {out_features}) local weight shards: {shapes}", flush=True)
    try:
        if precompute:
            precompute_float8_dynamic_scale_for_fsdp(model)
        model(torch.randn(4, 16)).sum().backward()
        if filter_small:
            precompute_float8_dynamic_scale_for_fsdp(model)
        print(f"[rank{rank}] forward and backward ok", flush=True)
    except RuntimeError:
        if rank == world - 1:
            traceback.print_exc()
        else:
            print(f"[rank{rank}] {sys.exc_info()[1]}".splitlines()[0][:160], flush=True)
        sys.stdout.flush()
        sys.stderr.flush()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def case(title, world, out_features, fp8_all_gather=True, precompute=False, filter_small=False):
    print(f"--- {title}", flush=True)
    ctx = multiprocessing.get_context("fork")
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, world, port, out_features, fp8_all_gather, precompute, filter_small))
             for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    sys.stdout.flush()


if __name__ == "__main__":
    print(f"torch {torch.__version__}, torchao {torchao.__version__}", flush=True)
    case("1. Linear(32, 1) on 2 ranks, float8 all-gather", 2, 1)
    case("2. Linear(32, 6) on 4 ranks, float8 all-gather", 4, 6)
    case("3. precompute_float8_dynamic_scale_for_fsdp with an empty shard", 2, 1, precompute=True)
    case("4. fix: module_filter_fn leaves the small layer in high precision", 2, 1, filter_small=True)
    case("5. workaround: enable_fsdp_float8_all_gather=False", 2, 1, fp8_all_gather=False)
