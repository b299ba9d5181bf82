"""Reproduce autograd anomaly detection catching a NaN in backward.

sqrt(x) at x == 0 has a finite forward value (0) but an infinite local
gradient; when the upstream gradient for that element is 0 (the element is
masked out of the loss), SqrtBackward0 computes 0 * inf = NaN. With
torch.autograd.set_detect_anomaly(True) the backward pass stops at the first
function whose output contains NaN and prints the forward traceback:

    UserWarning: Error detected in SqrtBackward0. Traceback of forward call that caused the error:
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.

Two more cases show the other wordings of the same warning:

2. anomaly mode switched on only around backward(), so no forward stack was
   recorded:
    UserWarning: Error detected in SqrtBackward0. No forward pass information available. Enable detect anomaly during forward pass for more information.
3. a double backward (a gradient of a gradient), where the node that
   returned NaN was created by an earlier backward pass:
    Previous calculation was induced by PowBackward0. Traceback of forward call that induced the previous calculation:
"""
import traceback

import torch


def masked_sqrt_loss(x):
    y = torch.sqrt(x)          # d/dx sqrt(x) at 0 is inf
    return (y * torch.tensor([0.0, 1.0, 1.0])).sum()   # 0 * inf -> nan in backward


def main():
    print("== 1. anomaly mode on for forward and backward", flush=True)
    torch.autograd.set_detect_anomaly(True)
    x = torch.tensor([0.0, 1.0, 4.0], requires_grad=True)
    loss = masked_sqrt_loss(x)
    print("loss =", loss.item(), flush=True)
    try:
        loss.backward()
    except RuntimeError:
        traceback.print_exc()
    torch.autograd.set_detect_anomaly(False)

    print("== 2. anomaly mode on only around backward()", flush=True)
    x = torch.tensor([0.0, 1.0, 4.0], requires_grad=True)
    loss = masked_sqrt_loss(x)
    try:
        with torch.autograd.set_detect_anomaly(True):
            loss.backward()
    except RuntimeError:
        traceback.print_exc()

    print("== 3. double backward through pow at 0", flush=True)
    with torch.autograd.set_detect_anomaly(True):
        x = torch.tensor([0.0], requires_grad=True)
        y = x.pow(1.5)
        (grad,) = torch.autograd.grad(y, x, create_graph=True)
        try:
            torch.autograd.grad(grad, x, torch.tensor([0.0]))
        except RuntimeError:
            traceback.print_exc()


if __name__ == "__main__":
    main()
