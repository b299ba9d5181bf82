"""Reproduce autograd anomaly detection catching a NaN in backward.

sqrt(x) at x == 0 has a finite forward value (0) but an infinite local
gradient; when the upstream gradient for that element is 0 (the element is
masked out of the loss), SqrtBackward0 computes 0 * inf = NaN. With
torch.autograd.set_detect_anomaly(True) the backward pass stops at the first
function whose output contains NaN and prints the forward traceback:

    UserWarning: Error detected in SqrtBackward0. Traceback of forward call that caused the error:
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
"""
import torch


def main():
    torch.autograd.set_detect_anomaly(True)
    x = torch.tensor([0.0, 1.0, 4.0], requires_grad=True)
    y = torch.sqrt(x)          # d/dx sqrt(x) at 0 is inf
    loss = (y * torch.tensor([0.0, 1.0, 1.0])).sum()   # 0 * inf -> nan in backward
    print("loss =", loss.item(), flush=True)
    loss.backward()


if __name__ == "__main__":
    main()
