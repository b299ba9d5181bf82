"""Reproduce a NaN loss and a non-finite gradient norm caught by clip_grad_norm_.

A small regression model is trained on batches that are standardised per
batch, (x - mean) / std. At step 3 a batch arrives in which one feature is
constant (a stuck sensor, a padded column, a corrupt shard), so its std is
0 and the standardisation yields 0/0 = NaN. The loss becomes NaN, every
gradient becomes NaN, and gradient clipping with error_if_nonfinite=True
raises instead of writing NaN into the weights:

    RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. ...
"""
import torch


def batch(step):
    x = torch.randn(32, 16)
    if step == 3:
        x[:, 5] = 7.0  # constant feature in this batch
    y = x[:, :1] * 0.5 + 0.1 * torch.randn(32, 1)
    x = (x - x.mean(0)) / x.std(0)  # std == 0 for the constant feature -> NaN
    return x, y


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x, y = batch(step)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        print(f"step {step}: loss {loss.item():.4f}", flush=True)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, error_if_nonfinite=True)
        opt.step()


if __name__ == "__main__":
    main()
