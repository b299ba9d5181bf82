"""Reproduce Accelerate refusing a batch that cannot be split evenly over the processes.

With `split_batches=True` (DataLoaderConfiguration, or the older Accelerator
argument, or `accelerator_config={"split_batches": True}` in the Hugging Face
Trainer) the batch size of the DataLoader is the global batch, and every process
takes an equal slice of it. Accelerate checks the division before it wraps the
loader and raises a ValueError when the batch size is not a multiple of the
number of (data-parallel) processes.

Needs only torch and accelerate (checked with accelerate 1.16.0, torch
2.13.0+cpu). No process group is needed: `prepare_data_loader`,
`BatchSamplerShard` and `IterableDatasetShard` take the process count as an
argument, which is what `Accelerator.prepare` passes them. Case 4 runs the real
`Accelerator.prepare` path in two gloo processes on the CPU.

Cases:
1. prepare_data_loader(batch_size=6, num_processes=4, split_batches=True)
2. BatchSamplerShard with a BatchSampler of 6 over 4 processes
3. IterableDatasetShard with batch_size=6 over 4 processes
4. Two CPU processes, Accelerator(dataloader_config=DataLoaderConfiguration(
   split_batches=True)), DataLoader(batch_size=3): both ranks raise
5. The fixes: batch size 8 over 4 processes (2 rows each), and batch size 6
   without split_batches (6 rows per process, 24 per step)
"""
import os
import socket
import sys
import traceback

import torch
import torch.multiprocessing as mp
from torch.utils.data import BatchSampler, DataLoader, IterableDataset, SequentialSampler, TensorDataset

import accelerate
from accelerate.data_loader import BatchSamplerShard, IterableDatasetShard, prepare_data_loader


def show(title, fn):
    print(f"--- {title}", flush=True)
    try:
        fn()
        print("no error", flush=True)
    except ValueError as exc:
        print(f"{type(exc).__name__}: {exc}", flush=True)


class Stream(IterableDataset):
    def __iter__(self):
        return iter(range(24))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, world_size, port):
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(world_size),
    )
    from accelerate import Accelerator, DataLoaderConfiguration

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    accelerator = Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(split_batches=True))
    loader = DataLoader(TensorDataset(torch.arange(12.0)), batch_size=3)
    try:
        accelerator.prepare(loader)
        print(f"process {rank} of {world_size}: prepared", flush=True)
    except ValueError as exc:
        print(f"process {rank} of {world_size} raised:\n{type(exc).__name__}: {exc}", flush=True)
    finally:
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


def main():
    print(f"torch {torch.__version__}, accelerate {accelerate.__version__}", flush=True)
    data = TensorDataset(torch.arange(24.0))

    show("1. prepare_data_loader: batch 6, 4 processes, split_batches=True",
         lambda: prepare_data_loader(DataLoader(data, batch_size=6), num_processes=4, process_index=0,
                                     split_batches=True, put_on_device=False))
    show("2. BatchSamplerShard: batch 6, 4 processes",
         lambda: BatchSamplerShard(BatchSampler(SequentialSampler(data), 6, False), num_processes=4,
                                   process_index=0, split_batches=True))
    show("3. IterableDatasetShard: batch 6, 4 processes",
         lambda: IterableDatasetShard(Stream(), batch_size=6, num_processes=4, process_index=0,
                                      split_batches=True))

    print("--- 4. Accelerator.prepare in 2 gloo processes, batch 3, split_batches=True", flush=True)
    mp.spawn(worker, args=(2, free_port()), nprocs=2, join=True)

    def fixed():
        shards = [prepare_data_loader(DataLoader(data, batch_size=8), num_processes=4, process_index=i,
                                      split_batches=True, put_on_device=False) for i in range(4)]
        print("batch 8 split over 4:", [tuple(next(iter(s))[0].shape) for s in shards], flush=True)
        plain = prepare_data_loader(DataLoader(data, batch_size=6), num_processes=4, process_index=0,
                                    split_batches=False, put_on_device=False)
        print("batch 6 per process, no split:", tuple(next(iter(plain))[0].shape), flush=True)

    show("5. fixes", fixed)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
