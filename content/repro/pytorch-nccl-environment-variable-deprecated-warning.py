"""Reproduce c10d's "Environment variable X is deprecated; use Y instead" warning.

The NCCL-specific renamed variables (NCCL_ASYNC_ERROR_HANDLING, NCCL_BLOCKING_WAIT,
NCCL_DESYNC_DEBUG, NCCL_ENABLE_TIMING, NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK) are
only read by ProcessGroupNCCL, which a CPU build does not contain. The flight
recorder, which the gloo backend uses too, reads its settings through the same
getCvarInt/getCvarBool helpers (torch/csrc/distributed/c10d/Utils.hpp) with the
same deprecation macro, so setting its old names prints the same warning on CPU:

    [W... Utils.hpp:NNN] Warning: Environment variable TORCH_NCCL_TRACE_BUFFER_SIZE is deprecated; use TORCH_FR_BUFFER_SIZE instead (function operator())
    [W... Utils.hpp:NNN] Warning: Environment variable TORCH_NCCL_TRACE_CPP_STACK is deprecated; use TORCH_FR_CPP_STACK instead (function operator())

The old names still take effect; the run finishes normally (a warning, not an error).
Single process, gloo, 127.0.0.1 with a free port.
"""
import os
import socket

import torch
import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    os.environ["TORCH_NCCL_TRACE_BUFFER_SIZE"] = "100"   # old name of TORCH_FR_BUFFER_SIZE
    os.environ["TORCH_NCCL_TRACE_CPP_STACK"] = "0"       # old name of TORCH_FR_CPP_STACK
    os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"        # warns only where ProcessGroupNCCL exists
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    dist.init_process_group("gloo", rank=0, world_size=1)
    t = torch.ones(2)
    dist.all_reduce(t)
    print("all_reduce ok:", t.tolist(), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
