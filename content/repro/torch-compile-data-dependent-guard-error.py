"""Reproduce 'Could not guard on data-dependent expression' on CPU.

The model branches in Python on the number of nonzero elements, a size that
is only known once the data is seen. Tracing represents it as an unbacked
symbol (u0); the `if` needs a concrete True/False for u0 > 3, which the
tracer cannot decide, so it raises:

- torch.export.export: GuardOnDataDependentSymNode
- torch.compile(fullgraph=True) with capture_dynamic_output_shape_ops: the
  same error wrapped as torch._dynamo.exc.UserError ('Consider annotating
  your code using torch._check*().')

Then two fixes are shown to export cleanly: torch.cond (both branches are
captured and the choice is made at run time), and torch._check, which tells
the tracer a fact it may assume (and checks it at run time).
"""
import traceback

import torch


class CountBranch(torch.nn.Module):
    def forward(self, x):
        idx = x.nonzero()
        if idx.shape[0] > 3:  # Python branch on a data-dependent size
            return idx.sum().float()
        return idx.float().mean()


class CountCond(torch.nn.Module):
    def forward(self, x):
        idx = x.nonzero()
        return torch.cond(
            idx.shape[0] > 3,
            lambda i: i.sum().float(),
            lambda i: i.float().mean(),
            (idx,),
        )


class CountChecked(CountBranch):
    def forward(self, x):
        idx = x.nonzero()
        torch._check(idx.shape[0] > 3)  # promise (checked at run time)
        return super().forward(x)


def attempt(label, fn):
    print(f"--- {label}", flush=True)
    try:
        fn()
        print("ok", flush=True)
    except Exception as e:  # print the real exception line(s)
        print("".join(traceback.format_exception_only(type(e), e)).splitlines()[0], flush=True)


x = torch.tensor([1.0, 0.0, 2.0, 3.0, 0.0, 4.0, 5.0, 0.0])

attempt("torch.export.export, Python branch", lambda: torch.export.export(CountBranch(), (x,)))

torch._dynamo.config.capture_dynamic_output_shape_ops = True
attempt("torch.compile(fullgraph=True), Python branch",
        lambda: torch.compile(CountBranch(), fullgraph=True)(x))

attempt("torch.export.export, torch.cond", lambda: torch.export.export(CountCond(), (x,)))
attempt("torch.export.export, torch._check", lambda: torch.export.export(CountChecked(), (x,)))
