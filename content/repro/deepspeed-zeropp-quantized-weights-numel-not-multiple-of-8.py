"""ZeRO++ quantized weights (qwZ) on a module whose partitions do not add up to a multiple of 8.

Two CPU ranks (gloo) run ZeRO-3 with "zero_quantized_weights": true. The model is one
Linear(12, 6): its weight (72 elements) is split into two partitions of 36, its bias (6) into
two of 3. In the first forward DeepSpeed fetches the module's two parameters together and hands
the concatenated local partitions (36 + 3 = 39 elements) to CUDAQuantizer.quantize, whose group
search finds no group count that divides 39 into multiples of 8 and fails with
    AssertionError: Qantized weight requires the number of weights be a multiple of 8. Yet 39 cannot be divided by 8*39

A second run, on a single rank, shows the partition-time path of
"zero_quantized_nontrainable_weights": true: a frozen Linear(6, 5) weight (30 elements, one
partition of 30 on one rank) is quantized while deepspeed.initialize partitions it, and fails with
    AssertionError: Qantized weight requires the number of weights be a multiple of 8. Yet 30 cannot be divided by 8*30
so this path can fail even with a data-parallel size of 1.

The quantization kernel itself is CUDA-only (QuantizerBuilder cannot load on the CPU
accelerator), so the script puts a stand-in object in CUDAQuantizer.quantizer_cuda_module.
The stand-in is never called: the assertion is raised by DeepSpeed's own Python code in
partition_parameters.py before the kernel would run, exactly as on a GPU.
Recorded with torch 2.13.0 CPU and deepspeed 0.19.4; the check and its text are the same
from 0.10.0 to 0.19.5.
"""
import os
import sys
import traceback

os.environ.setdefault("DS_ACCELERATOR", "cpu")
import torch
import torch.multiprocessing as mp

WORLD = 2


class NoKernel:
    """Stands in for the compiled CUDA quantizer module; the failing path never reaches it."""

    def __getattr__(self, name):
        raise RuntimeError(f"the CUDA quantizer kernel ({name}) would run here")


def worker(rank):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_SIZE=str(WORLD),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT="29573")
    import deepspeed
    from deepspeed.runtime.zero.partition_parameters import CUDAQuantizer
    CUDAQuantizer.quantizer_cuda_module = NoKernel()
    deepspeed.init_distributed(dist_backend="gloo")
    config = {"train_batch_size": WORLD, "zero_allow_untested_optimizer": True,
              "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0,
                                    "zero_quantized_weights": True}}
    model = torch.nn.Sequential(torch.nn.Linear(12, 6))
    try:
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        engine, *_ = deepspeed.initialize(model=model, optimizer=opt, config=config)
        for p in engine.module.parameters():
            print(f"rank {rank}: param of {p.ds_numel} elements, local partition {p.ds_tensor.ds_numel}", flush=True)
        engine(torch.randn(1, 12))
        print(f"rank {rank}: forward ok (deepspeed {deepspeed.__version__})", flush=True)
    except Exception:
        print(f"rank {rank}: first forward failed (deepspeed {deepspeed.__version__}):", flush=True)
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        os._exit(1)  # leave the other rank to the launcher, as a real job would


def frozen_worker(rank):
    os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", LOCAL_SIZE="1",
                      MASTER_ADDR="127.0.0.1", MASTER_PORT="29574")
    import deepspeed
    from deepspeed.runtime.zero.partition_parameters import CUDAQuantizer
    CUDAQuantizer.quantizer_cuda_module = NoKernel()
    deepspeed.init_distributed(dist_backend="gloo")
    config = {"train_batch_size": 1, "zero_allow_untested_optimizer": True,
              "zero_optimization": {"stage": 3, "zero_quantized_nontrainable_weights": True}}
    model = torch.nn.Sequential(torch.nn.Linear(12, 6), torch.nn.Linear(6, 5))
    model[1].requires_grad_(False)  # frozen: its weight (30 elements) is quantized when partitioned
    try:
        opt = torch.optim.SGD(model[0].parameters(), lr=0.1)
        deepspeed.initialize(model=model, optimizer=opt, config=config)
        print(f"single rank: initialize ok (deepspeed {deepspeed.__version__})", flush=True)
    except Exception:
        print(f"single rank: deepspeed.initialize failed (deepspeed {deepspeed.__version__}):", flush=True)
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        os._exit(1)


if __name__ == "__main__":
    for target, nprocs in ((worker, WORLD), (frozen_worker, 1)):
        try:
            mp.spawn(target, nprocs=nprocs, join=True)
        except mp.ProcessRaisedException:
            pass
        except mp.ProcessExitedException as exc:
            print(f"launcher: {exc}")
