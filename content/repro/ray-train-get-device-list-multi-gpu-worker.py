"""Show what PyTorch and Python print when a Ray Train worker with two GPUs
hands the value of `ray.train.torch.get_device()` from Ray 2.4.0 to 2.9.3 to
code that expects one `torch.device`.

Ray itself is not needed and no GPU is used. In those releases, when a worker
owns more than one GPU, `get_device()` returns a Python list with one
`torch.device("cuda:<i>")` per GPU (see `ray/air/_internal/torch_utils.py` in
the ray-2.9.3 wheel, where `device = devices[0] if len(devices) == 1 else
devices`). This script builds that list by the same rule (the position of each
Ray GPU id in CUDA_VISIBLE_DEVICES) and passes it to the places that
break:

1. Ray's own `prepare_data_loader` wrapper reads `device.type` on what
   `get_device()` returned -> AttributeError.
2. User code `model.to(get_device())` -> TypeError from PyTorch's argument
   parser.
3. User code `torch.cuda.set_device(get_device())` -> ValueError from
   torch._utils._get_device_index (raised before CUDA is touched, so it shows
   on a CPU-only build too).
4. Ray Data's `iter_torch_batches()` with its default device ("auto") in Ray
   2.7.0 to 2.9.3 moves each batch with `tensor.to(device=get_device())` ->
   the keyword form of the TypeError. (In 2.4.0 to 2.6.x its default
   device=None path (DatasetIterator in 2.4.0) reads `.type` on the value
   instead, as in case 1.)
5. The reverse, after upgrading to Ray 2.10.0 or later: code written for the
   list iterates over `get_device()`, which is now one torch.device.

Then the two fixes: take the first element (what `get_device()` returns from
Ray 2.10.0 on) or keep the whole list as `get_devices()` does.

Runs in about two seconds on a CPU (mostly the torch import) with
/work/main/.venv-torch/bin/python.
"""
import traceback

import torch


def devices_like_ray_2_9(cuda_visible_devices: str, ray_gpu_ids):
    """Return what Ray 2.4-2.9's get_device() returns on a CUDA worker."""
    visible = cuda_visible_devices.split(",")
    devices = [torch.device(f"cuda:{visible.index(str(g))}") for g in ray_gpu_ids]
    return devices[0] if len(devices) == 1 else devices


def show(label, fn):
    print(f"--- {label}")
    try:
        fn()
        print("no error")
    except Exception as exc:  # noqa: BLE001 - print what the user would see
        print("".join(traceback.format_exception_only(type(exc), exc)).rstrip())


# A worker that asked for resources_per_worker={"GPU": 2}: Ray assigns GPU ids
# 0 and 1 and sets CUDA_VISIBLE_DEVICES="0,1" for it.
device = devices_like_ray_2_9("0,1", [0, 1])
print("get_device() on Ray 2.4-2.9 with 2 GPUs per worker returns:", device)

model = torch.nn.Linear(4, 2)

# 1. Like the DataLoader wrapper of prepare_data_loader(move_to_device=True).
show("prepare_data_loader wrapper reads device.type", lambda: device.type == "cuda")

# 2. The usual training-loop line.
show("model.to(get_device())", lambda: model.to(device))

# 3. Pinning the current CUDA device.
show("torch.cuda.set_device(get_device())", lambda: torch.cuda.set_device(device))

# 4. Like iter_torch_batches' per-batch device transfer in Ray 2.7-2.9.
show("batch.to(device=get_device())", lambda: torch.zeros(2).to(device=device))

# 5. Ray >= 2.10: get_device() is a single torch.device; old list code breaks.
single = torch.device("cuda:0")
show("for d in get_device() on Ray >= 2.10", lambda: [d for d in single])

# Fix A: one device, as get_device() returns from Ray 2.10.0 on.
first = device[0] if isinstance(device, list) else device
print("--- fix: first device:", first, "is a torch.device:", isinstance(first, torch.device))

# Fix B: all of the worker's devices, as get_devices() returns from Ray 2.10.0 on.
all_devices = device if isinstance(device, list) else [device]
print("--- fix: all devices:", all_devices)
