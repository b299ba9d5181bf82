"""Reproduce "only Tensors of floating point dtype can require gradients" and its siblings.

Autograd only tracks floating-point and complex tensors. Asking an integer or
bool tensor to require a gradient fails, and the wording depends on the road
taken (all four checked with torch 2.13.0+cpu; the same strings are in every
release from 1.13.0 to 2.9.0):

    Only Tensors of floating point and complex dtype can require gradients
        torch.tensor(..., requires_grad=True), factory functions,
        nn.Parameter(int_tensor), the C++ API (torch/csrc/autograd/variable.h)
    only Tensors of floating point and complex dtype can require gradients
        the attribute setter: t.requires_grad = True
    only Tensors of floating point dtype can require gradients
        the method t.requires_grad_() and so nn.Module.requires_grad_()
        (the text was never updated for complex; complex tensors pass)
    data set to a tensor that requires gradients must be floating point or complex dtype
        writing integer data into `.data` of a parameter that requires grad

and nn.Module.to(torch.int8) refuses with a TypeError of its own.

The quantized layer below is a stand-in for a bitsandbytes Linear8bitLt:
an int8 weight kept in an nn.Parameter subclass with requires_grad=False
and a float scale, which is how 8-bit and 4-bit layers hold their weights.
No bitsandbytes, PEFT or GPU is needed.

Cases, CPU only:
1. Integer data asked to require grad: torch.tensor, torch.arange, nn.Parameter
   around token ids, and the ways that work (float data, requires_grad=False,
   a buffer).
2. "Unfreeze everything" on a model with a quantized layer: module.requires_grad_(True),
   a loop that sets p.requires_grad = True, and the same loop that skips
   non-floating parameters.
3. Re-creating a quantized parameter through its class, whose default is
   requires_grad=True (the pattern of Int8Params and of a loader that calls
   type(p)(p.data, **p.__dict__)).
4. Packed int32 weights (GPTQ/AWQ-style qweight) wrapped in nn.Parameter.
5. Quantizing a trainable Linear in place through .data, and model.to(torch.int8).
6. Making every model input require grad for reentrant checkpointing, when
   one input is an integer attention mask.
7. The working pattern: a frozen int8 base with float adapters, trained one step.
8. Two gloo ranks: every rank fails the same way in set-up.
"""
import os
import socket
import traceback
import warnings
from datetime import timedelta

warnings.filterwarnings("ignore")  # keep the output to the lines that matter

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print("no error" + (f": {out}" if out is not None else ""), flush=True)
    except Exception as e:  # noqa: BLE001 - print whatever is raised
        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        print(text.splitlines()[0], flush=True)


class FrozenInt8(nn.Parameter):
    """Like bitsandbytes Int8Params: a Parameter subclass whose constructor defaults to requires_grad=True."""

    def __new__(cls, data=None, requires_grad=True, scale=None):
        obj = torch.Tensor._make_subclass(cls, data, requires_grad)
        obj.scale = scale
        return obj


class QuantLinear(nn.Module):
    """int8 weight + float scale; the forward dequantizes (stand-in for Linear8bitLt)."""

    def __init__(self, linear):
        super().__init__()
        w = linear.weight.detach()
        scale = w.abs().amax(dim=1, keepdim=True) / 127
        q = torch.round(w / scale).to(torch.int8)
        self.weight = FrozenInt8(q, requires_grad=False, scale=scale)
        self.bias = nn.Parameter(linear.bias.detach().clone())

    def forward(self, x):
        return x @ (self.weight.to(x.dtype) * self.weight.scale).T + self.bias


def quantized_model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(16, 8), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 16))
    model[1] = QuantLinear(model[1])
    return model


def param_dtypes(model):
    return ", ".join(f"{n}:{str(p.dtype).replace('torch.', '')}" for n, p in model.named_parameters())


def unfreeze_method():
    quantized_model().requires_grad_(True)


def unfreeze_setter():
    for p in quantized_model().parameters():
        p.requires_grad = True


def unfreeze_float_only():
    model = quantized_model()
    for p in model.parameters():
        if p.is_floating_point() or p.is_complex():
            p.requires_grad = True
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    return f"left frozen: {frozen}"


def rewrap_default():
    p = quantized_model()[1].weight
    return type(p)(p.data.to("cpu"), scale=p.scale)   # requires_grad not passed: the class default (True) applies


def rewrap_explicit():
    p = quantized_model()[1].weight
    q = type(p)(p.data.to("cpu"), requires_grad=p.requires_grad, scale=p.scale)
    return f"{q.dtype}, requires_grad={q.requires_grad}"


def packed_qweight_param():
    qweight = torch.randint(-2**31, 2**31 - 1, (1, 8), dtype=torch.int32)   # 8 int4 values per int32 (8 inputs)
    return nn.Parameter(qweight)


def packed_qweight_buffer():
    layer = nn.Module()
    layer.register_buffer("qweight", torch.zeros(4, 8, dtype=torch.int32))
    return f"buffer {layer.qweight.dtype}; parameters: {len(list(layer.parameters()))}"


def quantize_via_data():
    lin = nn.Linear(8, 8)
    lin.weight.data = torch.round(lin.weight.data * 127).to(torch.int8)


def module_to_int8():
    nn.Linear(8, 8).to(torch.int8)


def inputs_require_grad(only_float):
    batch = {"inputs_embeds": torch.randn(2, 5, 8), "attention_mask": torch.ones(2, 5, dtype=torch.long)}
    for name, t in batch.items():
        if only_float and not t.is_floating_point():
            continue
        t.requires_grad_(True)
    return {k: v.requires_grad for k, v in batch.items()}


def adapters_on_frozen_int8():
    model = quantized_model()
    for p in model.parameters():
        p.requires_grad = False
    lora_a = nn.Parameter(torch.randn(4, 8) * 0.01)
    lora_b = nn.Parameter(torch.zeros(8, 4))
    opt = torch.optim.AdamW([lora_a, lora_b], lr=1e-2)
    ids = torch.randint(0, 16, (2, 5))
    h = model[0](ids)
    h = model[1](h) + h @ lora_a.T @ lora_b.T
    loss = nn.functional.cross_entropy(model[3](model[2](h)).flatten(0, 1), ids.flatten())
    loss.backward()
    opt.step()
    return (f"loss {loss.item():.3f}; grads on adapters: {lora_a.grad is not None and lora_b.grad is not None}; "
            f"int8 weight grad: {model[1].weight.grad}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_worker(rank, port, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    warnings.filterwarnings("ignore")
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=30))
    try:
        try:
            quantized_model().requires_grad_(True)
            line = f"rank {rank}: no error"
        except RuntimeError as e:
            line = f"rank {rank}: {type(e).__name__}: {e}"
        for turn in range(world_size):   # one rank prints at a time
            if turn == rank:
                print(line, flush=True)
            dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    print(f"torch {torch.__version__}", flush=True)
    report("1a. torch.tensor([1, 2, 3], requires_grad=True)", lambda: torch.tensor([1, 2, 3], requires_grad=True))
    report("1b. torch.arange(5, requires_grad=True)", lambda: torch.arange(5, requires_grad=True))
    report("1c. nn.Parameter(token_ids)", lambda: nn.Parameter(torch.randint(0, 100, (2, 5))))
    report("1d. torch.zeros(3, dtype=torch.bool).requires_grad_()", lambda: torch.zeros(3, dtype=torch.bool).requires_grad_())
    report("1e. works: torch.tensor([1., 2., 3.], requires_grad=True)",
           lambda: torch.tensor([1., 2., 3.], requires_grad=True).dtype)
    report("1f. works: nn.Parameter(token_ids, requires_grad=False)",
           lambda: nn.Parameter(torch.randint(0, 100, (2, 5)), requires_grad=False).requires_grad)
    report("1g. works: complex64 and float8_e4m3fn .requires_grad_()",
           lambda: [torch.zeros(2, dtype=d).requires_grad_().requires_grad for d in (torch.complex64, torch.float8_e4m3fn)])
    print(f"model with a quantized layer: {param_dtypes(quantized_model())}", flush=True)
    report("2a. model.requires_grad_(True)", unfreeze_method)
    report("2b. for p in model.parameters(): p.requires_grad = True", unfreeze_setter)
    report("2c. fix: the same loop, floating and complex parameters only", unfreeze_float_only)
    report("3a. type(p)(p.data.to('cpu'), ...) without requires_grad (class default True)", rewrap_default)
    report("3b. fix: pass requires_grad=p.requires_grad when re-creating", rewrap_explicit)
    report("4a. nn.Parameter(packed int32 qweight)", packed_qweight_param)
    report("4b. works: packed qweight as a buffer", packed_qweight_buffer)
    report("5a. linear.weight.data = int8 tensor (weight requires grad)", quantize_via_data)
    report("5b. nn.Linear(8, 8).to(torch.int8)", module_to_int8)
    report("6a. every input .requires_grad_(True), attention_mask is int64", lambda: inputs_require_grad(False))
    report("6b. fix: floating-point inputs only", lambda: inputs_require_grad(True))
    report("7. frozen int8 base + float adapters, one optimizer step", adapters_on_frozen_int8)
    print("--- 8. two gloo ranks, each unfreezing its quantized model", flush=True)
    mp.spawn(rank_worker, args=(free_port(), 2), nprocs=2, join=True)
