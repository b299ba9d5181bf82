"""Reproduce Dynamo's TorchRuntimeError for an op that fails on fake tensors.

Dynamo traces a function by running every tensor operation on FakeTensors
(tensors with shapes and dtypes but no data) to learn the output shapes.
Here the function multiplies matrices whose inner dimensions do not match,
a plain shape bug. Under torch.compile the matmul fails while tracing, and
Dynamo reports it (PyTorch 2.13 wording):

    torch._dynamo.exc.TorchRuntimeError: RuntimeError when making fake tensor call
      Explanation: Dynamo failed to run FX node with fake tensors: call_function <built-in function matmul>(...): got RuntimeError('a and b must have same reduction dim, but got [3, 4] X [5, 6].')

Older releases print `Failed running call_function <built-in function matmul>(...)`
(up to 2.6) or put the `Dynamo failed to run FX node with fake tensors:` text
directly after `TorchRuntimeError:` (2.7, 2.8).

The second part runs the same call with torch.compiler.set_stance("force_eager"):
the identical error comes back from eager PyTorch, which proves the bug is in
the code, not in the compiler. backend="eager" keeps the run free of a C++
compiler or Triton; the error is raised during tracing, before any backend.

The third part multiplies a CPU tensor by a tensor on the "meta" device (a
device mix that needs no GPU). From 2.13 Dynamo reports a device mix found
on fake tensors under its own header:

    torch._dynamo.exc.TorchRuntimeError: Tensor device mismatch
      Explanation: Expected all tensors to be on the same device, but found at least two devices, cpu and meta!

Releases up to 2.10 raise the device mix from FakeTensor itself, as
`Unhandled FakeTensor Device Propagation for <op>, found two different devices
<a>, <b>` inside the `Failed running ...` or `Dynamo failed to run FX node ...`
message.
"""
import traceback

import torch


def head(a, b):
    return (a @ b).relu()


def main():
    a, b = torch.randn(3, 4), torch.randn(5, 6)  # inner dims 4 != 5: a real bug
    compiled = torch.compile(head, backend="eager")

    print("== compiled call", flush=True)
    try:
        compiled(a, b)
    except Exception:
        traceback.print_exc(limit=0)

    print("== same call with force_eager: does eager fail too?", flush=True)
    torch.compiler.set_stance("force_eager")
    try:
        compiled(a, b)
    except RuntimeError as e:
        print(f"eager also fails: {type(e).__name__}: {e}", flush=True)
    torch.compiler.set_stance("default")

    print("== compiled call mixing a cpu and a meta tensor", flush=True)
    torch._dynamo.reset()
    try:
        torch.compile(head, backend="eager")(a, torch.randn(4, 6, device="meta"))
    except Exception:
        traceback.print_exc(limit=0)


if __name__ == "__main__":
    main()
