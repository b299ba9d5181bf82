"""Reproduce fp16 loss-scale overflow: skipped optimizer steps and the LR-scheduler warning.

A model is trained under float16 autocast (on CPU here) with dynamic loss
scaling (torch.amp.GradScaler, initial scale 2**16). The loss is large
enough that the scaled gradients of the float16 activations overflow to inf.
GradScaler notices the inf, skips optimizer.step() and halves the scale.
The LR scheduler is stepped anyway, as in most training loops, and because
the optimizer never stepped, PyTorch warns:

    UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. ...

The scale printed each step shows the skipped steps (scale halving) until
it is small enough for the gradients to fit in float16 again.
DeepSpeed's own "[deepspeed] OVERFLOW! ..." lines are not reproduced (no
DeepSpeed here).
"""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16)
    x = torch.randn(64, 32) * 10
    y = torch.full((64, 1), 100.0)  # far from the initial predictions -> large loss
    for step in range(12):
        with torch.autocast("cpu", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x).float(), y)
        opt.zero_grad()
        scale = scaler.get_scale()
        scaler.scale(loss).backward()
        scaler.step(opt)   # skipped when any gradient is inf/NaN
        scaler.update()
        sched.step()
        skipped = scaler.get_scale() < scale
        print(f"step {step}: loss {loss.item():.1f} scale {scale:.0f} -> {scaler.get_scale():.0f}"
              f"{' (overflow, optimizer step skipped)' if skipped else ''}", flush=True)


if __name__ == "__main__":
    main()
