"""Reproduce a non-finite gradient norm caught by clip_grad_norm_.

A tiny regression model is trained with a learning rate far too high for
its unnormalised inputs. Within a few steps the weights blow up, the loss
becomes inf and the gradients inf/NaN. Gradient clipping with
error_if_nonfinite=True raises instead of silently scaling NaN gradients
into the weights:

    RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. ...

The loss printed each step shows the run diverging before the error.
"""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=10.0)  # far too high
    x = torch.randn(64, 16) * 100.0                    # unnormalised features
    y = torch.randn(64, 1)
    for step in range(50):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        print(f"step {step}: loss {loss.item():.4g}", flush=True)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, error_if_nonfinite=True)
        opt.step()


if __name__ == "__main__":
    main()
