"""Reproduce "Torch not compiled with CUDA enabled" on a CPU-only PyTorch build.

A CPU-only wheel (a `+cpu` build from the CPU index, the macOS wheels, the
Windows wheels on PyPI) has no CUDA code at all: `torch.version.cuda` is None
and `torch._C` lacks every `_cuda_*` function. The script runs the calls a
GPU training script typically makes first and prints what each one raises:

    1. model.cuda()                         AssertionError: Torch not compiled with CUDA enabled
    2. torch.cuda.set_device(0)             AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'
       torch.cuda.reset_peak_memory_stats() AttributeError: ... no attribute '_cuda_resetPeakMemoryStats'
    3. with torch.cuda.device(0):           RuntimeError: PyTorch was compiled without CUDA support (2.0 and later)
    4. init_process_group("nccl")           RuntimeError: Distributed package doesn't have NCCL built in

Then it shows the pattern that works on any build: pick the device from
torch.cuda.is_available() and the backend from is_nccl_available(). On a
build that has CUDA the script says so and reproduces nothing.
"""
import os
import socket
import sys
import traceback
import warnings

import torch
import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(title, fn):
    print(f"== {title}", flush=True)
    try:
        fn()
        print("   no error", flush=True)
    except Exception:
        traceback.print_exc()
        sys.stderr.flush()


def main():
    warnings.simplefilter("always")
    print(f"== torch {torch.__version__}: torch.version.cuda={torch.version.cuda}, "
          f"cuda.is_available()={torch.cuda.is_available()}, "
          f"cuda.device_count()={torch.cuda.device_count()}, "
          f"is_nccl_available()={dist.is_nccl_available()}", flush=True)
    if torch.version.cuda is not None:
        print("== this build has CUDA; nothing to reproduce", flush=True)
        return 0

    model = torch.nn.Linear(4, 2)
    attempt("1. model.cuda()", lambda: model.cuda())
    attempt("2. torch.cuda.set_device(0)", lambda: torch.cuda.set_device(0))
    attempt("2b. torch.cuda.reset_peak_memory_stats()", lambda: torch.cuda.reset_peak_memory_stats())

    def enter_device():
        with torch.cuda.device(0):
            pass
    attempt("3. with torch.cuda.device(0)", enter_device)

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
                      RANK="0", WORLD_SIZE="1")
    attempt("4. init_process_group('nccl') without a timeout",
            lambda: dist.init_process_group("nccl"))

    print("== 5. portable choice: device from is_available(), backend from is_nccl_available()", flush=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    backend = "nccl" if dist.is_nccl_available() and torch.cuda.is_available() else "gloo"
    os.environ["MASTER_PORT"] = str(free_port())
    dist.init_process_group(backend)
    t = model.to(device)(torch.ones(1, 4, device=device)).sum().detach().reshape(1)
    dist.all_reduce(t)
    print(f"== ran on {device} with {dist.get_backend()}: all_reduce ok, shape {tuple(t.shape)}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
