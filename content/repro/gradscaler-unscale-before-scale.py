"""Reproduce GradScaler's call-order errors, above all "Attempted unscale_ but _scale is None".

A GradScaler creates its scale tensor lazily, in the first `scale()` call of
its life. `unscale_()`, `step()` and `update()` of an enabled scaler first
check that the tensor exists; when `scale()` was never called on *this*
instance they stop with

    AssertionError: Attempted unscale_ but _scale is None.  This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration.

(`step` or `update` in place of `unscale_` when that is the first call).
The per-iteration order checks print their own RuntimeErrors.

Cases, CPU only (torch.amp.GradScaler("cpu"), PyTorch 2.3 and later):
1. Plain loss.backward() (the scale call was left out), then scaler.unscale_() for clipping.
2. The same, straight to scaler.step().
3. scaler.update() alone.
4. A new GradScaler built after backward (e.g. inside a helper), the old one did the scaling.
5. Two scalers (GAN-style): the discriminator's loss scaled with the generator's scaler.
6. A deep-copied (or pickled) scaler: its scale tensor is dropped and rebuilt lazily.
7. The first batch skipped scale()/backward() but the loop still stepped; a later skip
   does not repeat this message (the scale tensor exists by then) but gives
   "No inf checks were recorded for this optimizer." instead.
8. A disabled scaler (enabled=False): every call is a no-op, nothing is raised.
9. Sibling order errors: unscale_() twice, unscale_() after step(), step() twice.
10. The right order, for comparison.
"""
import copy
import traceback

import torch
import torch.nn as nn


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print("no error" + (f": {out}" if out is not None else ""), flush=True)
    except (AssertionError, RuntimeError) as e:
        print("".join(traceback.format_exception_only(type(e), e)).strip(), flush=True)


def setup():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    return model, opt, x, y


def loss_of(model, x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
    return nn.functional.mse_loss(out.float(), y)


def after_scaled_backward():
    """A model, its optimizer and a scaler that has scaled one backward pass."""
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(loss_of(model, x, y)).backward()
    return model, opt, scaler


def plain_backward_then_unscale():
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    loss_of(model, x, y).backward()           # scaler.scale(...) left out
    scaler.unscale_(opt)                       # e.g. before clip_grad_norm_
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)


def plain_backward_then_step():
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    loss_of(model, x, y).backward()
    scaler.step(opt)


def update_only():
    scaler = torch.amp.GradScaler("cpu")
    scaler.update()


def recreated_scaler():
    _, opt, _ = after_scaled_backward()

    def clip_and_step(optimizer):
        local = torch.amp.GradScaler("cpu")   # a second, fresh instance
        local.unscale_(optimizer)
        local.step(optimizer)

    clip_and_step(opt)


def two_scalers_mixed_up():
    torch.manual_seed(0)
    gen, disc = nn.Linear(4, 4), nn.Linear(4, 1)
    opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
    scaler_g, scaler_d = torch.amp.GradScaler("cpu"), torch.amp.GradScaler("cpu")
    z = torch.randn(8, 4)
    loss_d = disc(gen(z).detach()).mean()
    scaler_g.scale(loss_d).backward()          # should be scaler_d
    scaler_d.step(opt_d)


def deep_copied_scaler():
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(loss_of(model, x, y)).backward()
    scaler.step(opt)
    scaler.update()
    copied = copy.deepcopy(scaler)             # __getstate__ drops the scale tensor
    print(f"original scale {scaler.get_scale()}, copy _scale is None: {copied._scale is None}", flush=True)
    opt.zero_grad()
    scaler.scale(loss_of(model, x, y)).backward()   # scaled with the original ...
    copied.step(opt)                                 # ... stepped with the copy


def batch_skipped(skipped, batches):
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    for i in range(batches):
        opt.zero_grad()
        if i != skipped:                       # e.g. the skipped batch had no valid targets
            scaler.scale(loss_of(model, x, y)).backward()
        scaler.step(opt)
        scaler.update()


def disabled_scaler():
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    loss_of(model, x, y).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    return f"is_enabled()={scaler.is_enabled()}"


def unscale_twice():
    _, opt, scaler = after_scaled_backward()
    scaler.unscale_(opt)
    scaler.unscale_(opt)                       # e.g. clipping helper and trainer both unscale


def unscale_after_step():
    _, opt, scaler = after_scaled_backward()
    scaler.step(opt)
    scaler.unscale_(opt)                       # clipping placed after the step


def step_twice():
    _, opt, scaler = after_scaled_backward()
    scaler.step(opt)
    scaler.step(opt)                           # update() missing between the two


def right_order():
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    for _ in range(3):
        opt.zero_grad()
        scaler.scale(loss_of(model, x, y)).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
    return f"scale {scaler.get_scale()}"


if __name__ == "__main__":
    print(f"torch {torch.__version__}", flush=True)
    report("1. loss.backward() without scale, then unscale_()", plain_backward_then_unscale)
    report("2. loss.backward() without scale, then step()", plain_backward_then_step)
    report("3. update() on a scaler that never scaled", update_only)
    report("4. a fresh GradScaler built after backward", recreated_scaler)
    report("5. two scalers, the wrong one used to scale", two_scalers_mixed_up)
    report("6. a deep-copied scaler used for step()", deep_copied_scaler)
    report("7a. first batch skipped, step() still called", lambda: batch_skipped(0, 2))
    report("7b. a later batch skipped, step() still called", lambda: batch_skipped(2, 3))
    report("8. disabled scaler", disabled_scaler)
    report("9a. unscale_() twice in one iteration", unscale_twice)
    report("9b. unscale_() after step()", unscale_after_step)
    report("9c. step() twice without update()", step_twice)
    report("10. scale, backward, unscale_, clip, step, update", right_order)
