"""Reproduce "grad can be implicitly created only for scalar outputs".

`loss.backward()` without a `gradient` argument seeds backward with ones of the
loss's shape, which is only defined when the loss has exactly one element.
torch.autograd refuses any other loss before the engine runs:

    RuntimeError: grad can be implicitly created only for scalar outputs

and refuses a one-element complex loss with a second wording:

    RuntimeError: grad can be implicitly created only for real scalar outputs but got torch.complex64

Cases, CPU only:
1. A loss module with reduction='none' (one loss per sample).
2. A hand-written per-sample loss (mean over the feature dimension only).
3. A per-replica loss vector such as torch.nn.DataParallel's gather builds
   from one scalar loss per GPU (built here by stacking, since DataParallel's
   Gather refuses CPU tensors), then the fix: .mean().
4. torch.nn.DataParallel on a machine without GPUs: it keeps no device ids and
   calls the module directly, so the loss stays a scalar and nothing fails.
5. The fixes: .mean(), .sum(), reduction='mean', or an explicit gradient
   (loss.backward(torch.ones_like(loss)), which equals .sum()).
6. Edge cases: a zero-dim loss and a one-element [1] loss both work; an empty
   loss (zero elements) fails with the same message.
7. A complex scalar loss.
8. torch.autograd.grad on a vector output without grad_outputs.
"""
import traceback
import warnings

import torch
import torch.nn as nn


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print("no error" + (f": {out}" if out is not None else ""), flush=True)
    except RuntimeError as e:
        print("".join(traceback.format_exception_only(type(e), e)).strip(), flush=True)


def setup():
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    return model, x, y


def reduction_none():
    model, x, y = setup()
    loss = nn.CrossEntropyLoss(reduction="none")(model(x), y)
    print(f"loss shape {tuple(loss.shape)}", flush=True)
    loss.backward()


def per_sample_loss():
    model, x, _ = setup()
    target = torch.randn(8, 3)
    loss = ((model(x) - target) ** 2).mean(dim=1)   # forgot to reduce over the batch
    print(f"loss shape {tuple(loss.shape)}", flush=True)
    loss.backward()


def per_replica_vector(fix=False):
    model, x, y = setup()
    # what DataParallel.gather returns for a module that returns its own scalar loss:
    # one 0-dim loss per replica, unsqueezed and concatenated into a vector
    per_replica = [nn.functional.cross_entropy(model(xs), ys) for xs, ys in zip(x.chunk(2), y.chunk(2))]
    loss = torch.stack(per_replica)
    print(f"loss shape {tuple(loss.shape)}", flush=True)
    if fix:
        loss = loss.mean()
    loss.backward()
    return f"weight.grad norm {model.weight.grad.norm():.4f}"


def data_parallel_on_cpu():
    class WithLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(4, 3)

        def forward(self, x, y):
            return nn.functional.cross_entropy(self.net(x), y)

    _, x, y = setup()
    dp = nn.DataParallel(WithLoss())
    loss = dp(x, y)
    print(f"cuda available {torch.cuda.is_available()}, device_ids {dp.device_ids}, loss shape {tuple(loss.shape)}", flush=True)
    loss.backward()


def fixes():
    model, x, y = setup()
    results = []
    for name, make in [
        ("reduction='none' then .mean()", lambda: nn.CrossEntropyLoss(reduction="none")(model(x), y).mean()),
        ("reduction='mean' (default)", lambda: nn.CrossEntropyLoss()(model(x), y)),
        ("reduction='none' then .sum()", lambda: nn.CrossEntropyLoss(reduction="none")(model(x), y).sum()),
    ]:
        model.zero_grad()
        make().backward()
        results.append(f"{name}: weight.grad norm {model.weight.grad.norm():.4f}")
    model.zero_grad()
    loss = nn.CrossEntropyLoss(reduction="none")(model(x), y)
    loss.backward(torch.ones_like(loss))
    results.append(f"explicit gradient ones_like: weight.grad norm {model.weight.grad.norm():.4f} (same as .sum())")
    for line in results:
        print(line, flush=True)


def zero_dim():
    w = torch.randn(3, requires_grad=True)
    (w * 2).sum().backward()
    return "0-dim loss"


def one_element():
    w = torch.randn(3, requires_grad=True)
    (w * 2).sum().reshape(1).backward()
    return "shape [1] loss"


def empty_loss():
    w = torch.randn(3, requires_grad=True)
    loss = (w * 2)[w.abs() > 100]         # a mask that selects nothing
    print(f"loss shape {tuple(loss.shape)}", flush=True)
    loss.backward()


def complex_loss():
    w = torch.randn(3, dtype=torch.cfloat, requires_grad=True)
    loss = (w * w).sum()
    print(f"loss shape {tuple(loss.shape)}, dtype {loss.dtype}", flush=True)
    loss.backward()


def autograd_grad_vector():
    w = torch.randn(3, requires_grad=True)
    torch.autograd.grad(w * 2, w)


if __name__ == "__main__":
    warnings.filterwarnings("ignore")
    print(f"torch {torch.__version__}", flush=True)
    report("1. loss with reduction='none'", reduction_none)
    report("2. per-sample loss", per_sample_loss)
    report("3a. per-replica loss vector (what DataParallel gathers)", per_replica_vector)
    report("3b. per-replica loss vector, then .mean()", lambda: per_replica_vector(fix=True))
    report("4. DataParallel without GPUs", data_parallel_on_cpu)
    report("5. fixes", fixes)
    report("6a. zero-dim loss", zero_dim)
    report("6b. one-element loss", one_element)
    report("6c. empty loss", empty_loss)
    report("7. complex scalar loss", complex_loss)
    report("8. torch.autograd.grad on a vector output", autograd_grad_vector)
