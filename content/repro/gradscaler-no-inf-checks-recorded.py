"""Reproduce GradScaler's "No inf checks were recorded" assertions on CPU.

torch.amp.GradScaler.step() unscales the gradients of the optimizer it is
given and records one inf/NaN flag per device that holds such a gradient.
Parameters whose .grad is None are skipped, so when none of the optimizer's
parameters received a gradient there is no flag at all and step() raises:

    AssertionError: No inf checks were recorded for this optimizer.

The script prints the traceback of each way to get there:

1. the optimizer holds the parameters of one module, the loss is computed
   from another one (nothing connects the loss to the optimizer);
2. a batch is skipped (no backward) after zero_grad(), which sets every
   .grad to None by default since PyTorch 2.0; with set_to_none=False
   (zero-filled gradients, the 1.x default) the same step runs, printed as
   a contrast;
3. unscale_() is called before backward(), so the flags are recorded while
   there are no gradients yet and step() does not unscale again;
4. a fused optimizer (Adam(fused=True)) handles the scale itself and skips
   that check in step(); the sibling message
   "No inf checks were recorded prior to update." then comes from
   scaler.update().

Last, scaler.update() is called in an iteration where scaler.step() was
left out, which raises the sibling message and ends the script.
"""
import traceback

import torch


def setup():
    torch.manual_seed(0)
    used = torch.nn.Linear(8, 1)
    other = torch.nn.Linear(8, 1)
    return used, other, torch.amp.GradScaler("cpu")


def attempt(title, fn):
    print(f"--- {title}", flush=True)
    try:
        fn()
        print("ran without error", flush=True)
    except AssertionError:
        traceback.print_exc()


def main():
    x = torch.randn(4, 8)

    # 1. optimizer over a module the loss does not depend on
    used, other, scaler = setup()
    opt = torch.optim.SGD(other.parameters(), lr=0.1)

    def wrong_module():
        scaler.scale(used(x).pow(2).mean()).backward()
        scaler.step(opt)

    attempt("1. loss not connected to the optimizer's parameters", wrong_module)

    # 2. skipped batch after zero_grad() (grads are None)
    used, _, scaler = setup()
    opt = torch.optim.SGD(used.parameters(), lr=0.1)

    def skipped_batch(set_to_none):
        opt.zero_grad(set_to_none=set_to_none)
        # the batch is rejected (empty target, NaN input ...): no backward()
        scaler.step(opt)

    scaler.scale(used(x).pow(2).mean()).backward()  # a normal first step
    scaler.step(opt)
    scaler.update()
    attempt("2a. skipped batch, zero_grad(set_to_none=False)", lambda: skipped_batch(False))
    scaler.update()
    attempt("2b. skipped batch, zero_grad() (set_to_none=True)", lambda: skipped_batch(True))

    # 3. unscale_ before backward
    used, _, scaler = setup()
    opt = torch.optim.SGD(used.parameters(), lr=0.1)

    def unscale_too_early():
        opt.zero_grad()
        scaled = scaler.scale(used(x).pow(2).mean())
        scaler.unscale_(opt)  # no gradients yet: records no flag
        scaled.backward()
        scaler.step(opt)  # does not unscale a second time

    attempt("3. unscale_() before backward()", unscale_too_early)

    # 4. a fused optimizer handles the scale itself: step() passes, update() raises
    used, other, scaler = setup()
    opt = torch.optim.Adam(other.parameters(), fused=True)

    def fused_optimizer():
        scaler.scale(used(x).pow(2).mean()).backward()
        scaler.step(opt)
        print("fused step() returned; now update()", flush=True)
        scaler.update()

    attempt("4. Adam(fused=True) over parameters without gradients", fused_optimizer)

    # 5. update() in an iteration where no step() recorded anything
    used, _, scaler = setup()
    print("--- 5. scaler.update() after the step was left out", flush=True)
    scaler.scale(used(x).pow(2).mean()).backward()
    scaler.update()  # no scaler.step(opt) in this iteration


if __name__ == "__main__":
    main()
