"""Reproduce "function XBackward returned an incorrect number of gradients".

The backward of a custom torch.autograd.Function must return one value per
argument that was passed to forward (ctx not counted): a gradient for each
tensor that needs one and None for everything else, in forward's order.
When the two drift apart, typically because forward gained or lost an
argument and backward was not updated, the autograd engine stops:

    RuntimeError: function ScaledMulV2Backward returned an incorrect number
    of gradients (expected 4, got 2)

Cases, CPU only, each one forward and backward:
1. forward(x, w) with a matching backward: trains.
2. forward grew to (x, w, bias, scale); backward still returns 2 values.
3. The same Function reached through torch.autograd.grad.
4. backward returns one value too many, and it is not None.
5. Extra trailing None values: accepted and dropped.
6. forward has a default argument that the call site leaves out: the
   expected count follows the call, not the def line.
6b. The same with a setup_context-style Function: defaults are filled in
   before counting, so the count matches, and the gradient returned for the
   defaulted None fails the next check.
7. Right count, but a gradient sits at a non-tensor argument's position.
8. Right count, but two tensors' gradients are swapped.
9. The fixed Function of case 2, returning 4 values: trains.
10. Forward-mode AD: a jvp that returns two tangents for one output.
11. Case 2 under torch.compile (eager backend): Dynamo traces the backward
    and fails before the engine's check can run.
"""
import traceback
import warnings

warnings.filterwarnings("ignore")  # keep the output to the lines that matter

import torch
from torch.autograd.forward_ad import dual_level, make_dual


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        fn()
        print("no error", flush=True)
    except (RuntimeError, IndexError) as e:
        lines = traceback.format_exception_only(type(e), e)
        print("".join(lines).strip().splitlines()[0], flush=True)


class ScaledMul(torch.autograd.Function):
    """Version 1 of a "fused" op: forward(x, w)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        return grad_out * w, grad_out * x


class ScaledMulV2(torch.autograd.Function):
    """Version 2 added `bias` and a float `scale` to forward; backward was not updated."""

    @staticmethod
    def forward(ctx, x, w, bias, scale):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return x * w * scale + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        return grad_out * w * ctx.scale, grad_out * x * ctx.scale  # 2 values, 4 inputs


class ScaledMulV2Fixed(ScaledMulV2):
    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        # one entry per forward argument: x, w, bias, scale (a float: None)
        return grad_out * w * ctx.scale, grad_out * x * ctx.scale, grad_out, None


class TooManyGrads(torch.autograd.Function):
    """An argument was removed from forward; backward still returns its gradient."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * 2, grad_out.clone()


class TrailingNones(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * 2, None, None


class OptionalBias(torch.autograd.Function):
    """forward has a default; backward always returns three values."""

    @staticmethod
    def forward(ctx, x, w, bias=None):
        ctx.save_for_backward(x, w)
        out = x * w
        return out if bias is None else out + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        return grad_out * w, grad_out * x, grad_out.clone()


class OptionalBiasSetupCtx(OptionalBias):
    """setup_context style (forward has no ctx; defaults are bound by apply), the same backward."""

    @staticmethod
    def forward(x, w, bias=None):
        out = x * w
        return out if bias is None else out + bias

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], inputs[1])


class ShiftedGrads(torch.autograd.Function):
    """Right count, wrong order: the gradient for x lands on the float `scale`."""

    @staticmethod
    def forward(ctx, scale, x):
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.scale, None


class SwappedGrads(torch.autograd.Function):
    """Right count, wrong order between two tensors of different shapes."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        return x.t() @ grad_out, grad_out @ w.t()  # (grad_w, grad_x): swapped


class JvpCount(torch.autograd.Function):
    """Forward-mode AD: jvp must return one tangent per output."""

    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def jvp(ctx, x_t):
        return x_t * 2, x_t * 2


def t(*shape):
    return torch.randn(*shape, requires_grad=True)


def v1():
    ScaledMul.apply(t(4), t(4)).sum().backward()


def v2(fn):
    fn.apply(t(4), t(4), t(4), 0.5).sum().backward()


def v2_autograd_grad():
    x = t(4)
    torch.autograd.grad(ScaledMulV2.apply(x, t(4), t(4), 0.5).sum(), [x])


def too_many():
    TooManyGrads.apply(t(4)).sum().backward()


def trailing_nones():
    TrailingNones.apply(t(4)).sum().backward()


def default_left_out():
    OptionalBias.apply(t(4), t(4)).sum().backward()  # bias not passed


def default_left_out_setup_ctx():
    OptionalBiasSetupCtx.apply(t(4), t(4)).sum().backward()  # bias not passed


def shifted():
    ShiftedGrads.apply(0.5, t(4)).sum().backward()


def swapped():
    SwappedGrads.apply(t(2, 3), t(3, 5)).sum().backward()


def jvp_count():
    with dual_level():
        JvpCount.apply(make_dual(torch.randn(4), torch.ones(4)))


def compiled():
    torch._dynamo.reset()

    def step(x, w, b):
        return ScaledMulV2.apply(x, w, b, 0.5).sum()

    torch.compile(step, backend="eager")(t(4), t(4), t(4)).backward()


if __name__ == "__main__":
    print(f"torch {torch.__version__}", flush=True)
    report("1. forward(x, w) with a matching backward", v1)
    report("2. forward grew to (x, w, bias, scale); backward still returns 2 values", lambda: v2(ScaledMulV2))
    report("3. the same through torch.autograd.grad", v2_autograd_grad)
    report("4. backward returns one gradient too many (not None)", too_many)
    report("5. extra trailing None values", trailing_nones)
    report("6. forward(x, w, bias=None) called without bias; backward returns 3 values", default_left_out)
    report("6b. the same with setup_context: defaults bound before counting", default_left_out_setup_ctx)
    report("7. right count, gradient returned at a non-tensor argument's position", shifted)
    report("8. right count, gradients of two tensors swapped", swapped)
    report("9. forward(x, w, bias, scale) with backward returning 4 values", lambda: v2(ScaledMulV2Fixed))
    report("10. forward-mode AD: jvp returns two tangents for one output", jvp_count)
    report("11. case 2 under torch.compile(backend='eager')", compiled)
