"""The loader deepspeed.initialize returns has no `.sampler`; its sampler is `.data_sampler`.

Needs DeepSpeed (checked with 0.19.4) next to PyTorch; runs on CPU, one process, gloo.
An epoch loop written for a torch DataLoader (`loader.sampler.set_epoch(epoch)`) fails on it,
even behind `hasattr(loader.sampler, "set_epoch")`, because `loader.sampler` is read first.
"""
import os
import sys
import traceback

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29541")
import torch
import deepspeed
from torch.utils.data import TensorDataset

deepspeed.init_distributed(dist_backend="gloo")

torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
dataset = TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
config = {"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "SGD", "params": {"lr": 0.01}}}
engine, _, train_dataloader, _ = deepspeed.initialize(model=model, training_data=dataset, config=config)
print("loader type:", type(train_dataloader).__name__, flush=True)
print("has .sampler:", hasattr(train_dataloader, "sampler"),
      "| .data_sampler:", type(train_dataloader.data_sampler).__name__, flush=True)
try:  # the inner torch DataLoader only exists once the loader has been iterated
    train_dataloader.dataloader
except AttributeError as err:
    print("before the first iter():", err, flush=True)

try:
    for epoch in range(2):
        if hasattr(train_dataloader.sampler, "set_epoch"):  # the guard does not help
            train_dataloader.sampler.set_epoch(epoch)
        for x, y in train_dataloader:
            pass
except AttributeError:
    traceback.print_exc()
    sys.stderr.flush()

# The fix: set the epoch on the sampler DeepSpeed keeps under .data_sampler
orders = []
for epoch in range(2):
    sampler = getattr(train_dataloader, "data_sampler", None)
    if hasattr(sampler, "set_epoch"):
        sampler.set_epoch(epoch)
    orders.append(list(iter(train_dataloader.data_sampler)))
    steps = 0
    for x, y in train_dataloader:
        loss = engine(x).sub(y).pow(2).mean()
        engine.backward(loss)
        engine.step()
        steps += 1
    print(f"epoch {epoch}: {steps} steps, first indices {orders[-1][:4]}", flush=True)
print("epoch orders differ:", orders[0] != orders[1], flush=True)
