"""Reproduce the DataLoader warning about more workers than CPUs.

An input pipeline tuned on a large machine (num_workers=8) is run on a host
with fewer usable CPUs. DataLoader compares num_workers with the CPUs in the
process's affinity mask and warns that the workers will oversubscribe them,
a common cause of a starved accelerator:

    UserWarning: This DataLoader will create 8 worker processes in total. Our suggested max number of worker in current system is 2, ...

The script pins itself to at most 2 CPUs with os.sched_setaffinity so that the
warning appears on any machine, then times one short epoch.
"""
import os
import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    cpus = sorted(os.sched_getaffinity(0))[:2]
    os.sched_setaffinity(0, cpus)
    print("usable CPUs:", cpus, flush=True)
    data = TensorDataset(torch.randn(256, 16), torch.randint(0, 2, (256,)))
    loader = DataLoader(data, batch_size=32, num_workers=8)
    t0 = time.time()
    n = sum(1 for _ in loader)
    print(f"{n} batches in {time.time() - t0:.2f}s with 8 workers on {len(cpus)} CPUs", flush=True)


if __name__ == "__main__":
    main()
