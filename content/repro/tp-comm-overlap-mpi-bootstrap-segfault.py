"""Reproduce, on CPU, the first step of the old Userbuffers bootstrap.

With Transformer Engine releases before 1.9, Megatron-LM's
_initialize_tp_communicators() creates an extra process group with
torch.distributed.new_group(backend='mpi') right before calling
transformer_engine.pytorch.module.base.initialize_ub(). This script starts two
ranks the way torchrun does (env:// rendezvous, gloo as the default backend,
no mpirun) and makes the same call.

On a PyTorch build without MPI (every PyPI wheel, including the CPU wheel used
here) the call fails at once with:
    RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if you build PyTorch from source on a host that has MPI installed.
On an MPI-enabled build (NGC containers) the same call goes on to
ProcessGroupMPI::createProcessGroupMPI, which is where the segmentation fault
of this entry happens; that path cannot be shown with a PyPI wheel.
"""
import os
import socket
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      RANK=str(rank), WORLD_SIZE=str(world_size))
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    print(f"rank {rank}: torch {torch.__version__}, "
          f"is_mpi_available() = {dist.is_mpi_available()}", flush=True)
    try:
        # What Megatron-LM does before initialize_ub() when TE < 1.9
        dist.new_group(backend="mpi")
        print(f"rank {rank}: MPI process group created", flush=True)
    except Exception:
        if rank == 0:
            traceback.print_exc()
        else:
            print(f"rank {rank}: new_group(backend='mpi') failed as well", flush=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2, free_port()), nprocs=2, join=True)
