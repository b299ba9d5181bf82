"""Reproduce the errors for parameters left on the meta device.

A model is built under `torch.device("meta")` (what accelerate's
init_empty_weights, Hugging Face low_cpu_mem_usage/device_map loading and
FSDP deferred init do): its parameters have shapes but no storage. Three
common mistakes follow, each on CPU:

1. loading a state dict without assign=True: the copy into a meta parameter
   is a no-op, PyTorch warns, and the parameter stays on meta;
2. moving the module with Module.to(): PyTorch 2.3 and newer raise
       NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving module from meta to a different device.
3. moving one meta tensor (a buffer computed in __init__, say) with Tensor.to():
       NotImplementedError: Cannot copy out of meta tensor; no data!

Finally the working path: to_empty() + load_state_dict(assign=True) leaves
no parameter on meta.
"""
import traceback
import warnings

import torch

warnings.simplefilter("always")


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.head = torch.nn.Linear(8, 2)
        self.register_buffer("scale", torch.ones(8), persistent=False)

    def forward(self, x):
        return self.head(self.proj(x) * self.scale)


def meta_names(model):
    return [n for n, t in list(model.named_parameters()) + list(model.named_buffers()) if t.is_meta]


def main():
    state = Tiny().state_dict()  # real weights, e.g. from a checkpoint

    with torch.device("meta"):
        model = Tiny()
    print("on meta after construction:", meta_names(model), flush=True)

    # 1) copy into meta parameters is a no-op
    model.load_state_dict(state)
    print("on meta after load_state_dict():", meta_names(model), flush=True)

    # 2) Module.to() from meta
    try:
        model.to("cpu")
    except NotImplementedError as exc:
        print("".join(traceback.format_exception_only(type(exc), exc)).strip(), flush=True)

    # 3) Tensor.to() from meta (a non-persistent buffer the checkpoint cannot fill)
    try:
        model.scale.to("cpu")
    except NotImplementedError as exc:
        print("".join(traceback.format_exception_only(type(exc), exc)).strip(), flush=True)

    # The working path: allocate, then load with assign=True, then fill
    # what the checkpoint does not hold (non-persistent buffers).
    model = model.to_empty(device="cpu")
    model.load_state_dict(state, assign=True)
    model.scale.fill_(1.0)
    print("on meta after to_empty + load_state_dict(assign=True):", meta_names(model), flush=True)
    print("forward ok:", tuple(model(torch.randn(4, 8)).shape), flush=True)

    # The original failure, uncaught, as a training script would show it.
    with torch.device("meta"):
        broken = Tiny()
    broken.to("cpu")


if __name__ == "__main__":
    main()
