"""Reproduce Inductor's run-time size/stride assert for a custom op whose fake kernel lies.

A custom operator has two implementations: the real kernel, which runs on real
data, and a fake (meta) kernel, which torch.compile runs on FakeTensors while
tracing to learn the output's shape and strides. Inductor plans its buffers
from the fake result and, after calling the real kernel in the generated
code, checks the real output with `assert_size_stride(buf, size, stride, op)`.

Here the real kernel returns a column-major (transposed-contiguous) tensor,
while the fake kernel says row-major (`torch.empty_like`). Sizes agree,
strides do not, so the first compiled call fails with (PyTorch 2.13 wording):

    AssertionError: expected size 8==8, stride 1==4 at dim=0; expected size 4==4, stride 8==1 at dim=1
    Error in op: torch.ops.mtf.scale_colmajor.default
    This error most often comes from a incorrect fake (aka meta) kernel for a custom op.

Each pair reads <real>==<expected from the fake kernel>. The script then shows
the two confirmation checks (eager vs FakeTensorMode strides, and
torch.library.opcheck) and that a fake kernel with the right strides compiles
and matches eager. Inductor on CPU needs a C++ compiler (g++).
"""
import traceback

import torch
from torch._subclasses.fake_tensor import FakeTensorMode


@torch.library.custom_op("mtf::scale_colmajor", mutates_args=())
def scale_colmajor(x: torch.Tensor) -> torch.Tensor:
    # real kernel: output laid out column-major, strides (1, rows)
    return (x * 2).t().contiguous().t()


@scale_colmajor.register_fake
def _(x):
    return torch.empty_like(x)  # wrong: claims row-major strides (cols, 1)


@torch.library.custom_op("mtf::scale_colmajor_fixed", mutates_args=())
def scale_colmajor_fixed(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).t().contiguous().t()


@scale_colmajor_fixed.register_fake
def _(x):
    # right: same sizes and the same column-major strides as the real kernel
    return x.new_empty_strided(x.shape, (1, x.shape[0]))


def model(x):
    return scale_colmajor(x) + 1


def model_fixed(x):
    return scale_colmajor_fixed(x) + 1


def main():
    x = torch.randn(8, 4)

    print("== compiled call with the wrong fake kernel", flush=True)
    try:
        torch.compile(model)(x)
    except AssertionError:
        traceback.print_exc(limit=-2)

    print("== confirm: eager strides vs fake strides", flush=True)
    print("eager:", scale_colmajor(x).stride(), flush=True)
    with FakeTensorMode():
        print("fake: ", scale_colmajor(torch.empty(8, 4)).stride(), flush=True)

    print("== confirm: torch.library.opcheck", flush=True)
    try:
        torch.library.opcheck(scale_colmajor, (x,))
    except Exception as e:  # OpCheckError
        print(f"{type(e).__name__}: {str(e).splitlines()[0]}", flush=True)

    print("== compiled call with the corrected fake kernel", flush=True)
    out = torch.compile(model_fixed)(x)
    torch.testing.assert_close(out, model_fixed(x))
    print("fixed: compiled output matches eager, strides", out.stride(), flush=True)


if __name__ == "__main__":
    main()
