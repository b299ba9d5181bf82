"""Reproduce autograd's check on tensors modified after they were saved.

Autograd keeps the tensors a backward formula needs and remembers each one's
version counter. Any in-place write (an optimizer step, `+=`, an `inplace=True`
activation, `x[idx] = ...`) bumps the counter; backward compares the two and
stops:

    RuntimeError: one of the variables needed for gradient computation has
    been modified by an inplace operation: [torch.FloatTensor [3, 5]], which
    is output 0 of Sigmoid, is at version 1; expected version 0 instead. ...

Three cases, CPU only, one process:
1. GAN-style: the discriminator's optimizer steps (changing its weights in
   place) before the generator loss, computed through the old weights, is
   backpropagated.
2. An in-place edit of an activation whose value its backward needs
   (sigmoid's output).
3. Case 1 again under torch.autograd.detect_anomaly(), which changes the hint
   and prints the forward traceback of the failing operation as a warning.
"""
import traceback
import warnings

import torch

torch.manual_seed(0)


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        fn()
        print("no error", flush=True)
    except RuntimeError as e:
        print("".join(traceback.format_exception_only(type(e), e)).strip(), flush=True)


def gan_style():
    gen = torch.nn.Linear(4, 16)
    disc = torch.nn.Linear(16, 8)
    opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
    fake = gen(torch.randn(2, 4))
    d_out = disc(fake)
    d_loss = d_out.mean()
    g_loss = -d_out.sum()
    d_loss.backward(retain_graph=True)
    opt_d.step()          # updates disc.weight in place: version 0 -> 1
    g_loss.backward()     # needs the weight as it was in the forward pass


def inplace_activation():
    x = torch.randn(3, 5, requires_grad=True)
    y = torch.sigmoid(x)  # sigmoid's backward uses its output y
    y.mul_(2)             # in-place edit of the saved output
    y.sum().backward()


def gan_style_with_anomaly():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # keep the printed forward traceback short
        with torch.autograd.detect_anomaly():
            gan_style()


if __name__ == "__main__":
    report("optimizer step before a second backward", gan_style)
    report("in-place edit of a saved activation", inplace_activation)
    report("same as 1, with anomaly detection", gan_style_with_anomaly)
