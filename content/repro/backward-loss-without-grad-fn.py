"""Reproduce "element 0 of tensors does not require grad and does not have a grad_fn".

`loss.backward()` (and `torch.autograd.grad(loss, ...)`) start from the loss's
autograd node. A loss that does not require grad has no such node: nothing that
produced it was recorded, so the engine refuses it before running anything:

    RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn

The index is the position of the offending tensor in the list handed to
backward (0 for a single loss).

Cases, CPU only, each in a fresh small model:
1. Every parameter frozen (requires_grad=False), e.g. a freezing loop that went too far.
2. The forward pass ran under torch.no_grad().
3. The forward pass ran under torch.inference_mode().
4. Grad mode left off globally by torch.set_grad_enabled(False) in evaluation code.
5. The loss went through .item() / numpy and was wrapped in a new tensor.
   5b. The same with requires_grad=True: no error, but no gradient reaches the model.
6. requires_grad switched on after the forward pass had already run.
7. A loss built from argmax (an integer result with no gradient).
8. Reentrant torch.utils.checkpoint over a frozen input with nothing trainable after it.
9. torch.autograd.grad on such a loss, and a second loss in the list (element 1).
10. The checks that tell the cases apart, and a fixed step.
11. A non-scalar loss without a graph: this message, not the scalar-output one.
12. torch.compile(fullgraph=True) tracing loss.backward() with
    torch._dynamo.config.trace_autograd_ops=True (PyTorch 2.11 and later):
    Dynamo refuses the same loss with its own wording.
"""
import traceback
import warnings

import numpy as np
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print("no error" + (f": {out}" if out is not None else ""), flush=True)
    except RuntimeError as e:
        print("".join(traceback.format_exception_only(type(e), e)).strip(), flush=True)


def setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    return model, x, y


def describe(loss):
    print(f"loss.requires_grad={loss.requires_grad} loss.grad_fn={loss.grad_fn}", flush=True)


def all_frozen():
    model, x, y = setup()
    for p in model.parameters():
        p.requires_grad_(False)
    loss = nn.functional.cross_entropy(model(x), y)
    describe(loss)
    loss.backward()


def under_no_grad():
    model, x, y = setup()
    with torch.no_grad():
        loss = nn.functional.cross_entropy(model(x), y)
    describe(loss)
    loss.backward()


def under_inference_mode():
    model, x, y = setup()
    with torch.inference_mode():
        loss = nn.functional.cross_entropy(model(x), y)
    describe(loss)
    print(f"loss.is_inference()={loss.is_inference()}", flush=True)
    loss.backward()


def grad_mode_left_off():
    model, x, y = setup()
    torch.set_grad_enabled(False)      # e.g. at the top of an evaluation function, never undone
    try:
        print(f"torch.is_grad_enabled()={torch.is_grad_enabled()}", flush=True)
        loss = nn.functional.cross_entropy(model(x), y)
        describe(loss)
        loss.backward()
    finally:
        torch.set_grad_enabled(True)


def item_round_trip(requires_grad=False):
    model, x, y = setup()
    logits = model(x).detach().numpy()              # e.g. a metric library that wants numpy
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    value = float(-np.log(probs[np.arange(16), y.numpy()]).mean())
    loss = torch.tensor(value, requires_grad=requires_grad)
    describe(loss)
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    return f"parameters with a gradient: {sum(g is not None for g in grads)}/{len(grads)}"


def requires_grad_after_forward():
    model, x, y = setup()
    for p in model.parameters():
        p.requires_grad_(False)
    loss = nn.functional.cross_entropy(model(x), y)
    for p in model.parameters():                    # unfrozen too late: the graph was not recorded
        p.requires_grad_(True)
    describe(loss)
    loss.backward()


def argmax_loss():
    model, x, y = setup()
    pred = model(x).argmax(dim=1)                   # int64, not differentiable
    loss = (pred != y).float().mean()
    describe(loss)
    loss.backward()


def reentrant_checkpoint_frozen_input():
    torch.manual_seed(0)
    embed = nn.Embedding(10, 8).requires_grad_(False)   # frozen, like a PEFT base model
    block = nn.Linear(8, 8)                              # trainable, inside the checkpoint
    ids = torch.randint(0, 10, (4, 5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h = checkpoint(block, embed(ids), use_reentrant=True)
    for w in caught:
        print(f"{w.category.__name__}: {w.message}", flush=True)
    loss = h.pow(2).mean()
    describe(loss)
    loss.backward()


def autograd_grad_on_frozen():
    model, x, y = setup()
    with torch.no_grad():
        loss = nn.functional.cross_entropy(model(x), y)
    torch.autograd.grad(loss, list(model.parameters()))


def second_loss_detached():
    model, x, y = setup()
    out = model(x)
    main = nn.functional.cross_entropy(out, y)
    aux = out.detach().pow(2).mean()                # detached auxiliary term
    torch.autograd.backward([main, aux])


def checks_and_fix():
    model, x, y = setup()
    for p in model[0].parameters():                  # freeze only the first layer
        p.requires_grad_(False)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    print(f"torch.is_grad_enabled()={torch.is_grad_enabled()} trainable={trainable}", flush=True)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    loss = nn.functional.cross_entropy(model(x), y)
    describe(loss)
    assert loss.requires_grad and loss.grad_fn is not None, "loss is not connected to any trainable parameter"
    opt.zero_grad()
    loss.backward()
    opt.step()
    missing = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    return f"trainable tensors without a gradient: {missing}"


def vector_loss_without_graph():
    model, x, y = setup()
    with torch.no_grad():
        loss = nn.functional.cross_entropy(model(x), y, reduction="none")
    print(f"loss shape {tuple(loss.shape)}", flush=True)
    loss.backward()


def compiled_backward():
    import torch._dynamo
    if not hasattr(torch._dynamo.config, "trace_autograd_ops"):
        return "this PyTorch has no trace_autograd_ops (before 2.11): backward is not traced"
    torch._dynamo.reset()
    torch._dynamo.config.trace_autograd_ops = True
    model, x, y = setup()
    model.requires_grad_(False)

    @torch.compile(fullgraph=True, backend="eager")
    def step(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    try:
        step(x, y)
    except Exception as e:  # torch._dynamo.exc.TorchRuntimeError; its text goes on with "from user code:"
        print(f"{type(e).__module__}.{type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
        return "(raised while tracing, above)"
    finally:
        torch._dynamo.config.trace_autograd_ops = False


if __name__ == "__main__":
    print(f"torch {torch.__version__}", flush=True)
    report("1. every parameter frozen", all_frozen)
    report("2. forward under torch.no_grad()", under_no_grad)
    report("3. forward under torch.inference_mode()", under_inference_mode)
    report("4. torch.set_grad_enabled(False) left on", grad_mode_left_off)
    report("5a. loss rebuilt from numpy / .item()", item_round_trip)
    report("5b. the same with requires_grad=True", lambda: item_round_trip(requires_grad=True))
    report("6. requires_grad set after the forward", requires_grad_after_forward)
    report("7. loss built from argmax", argmax_loss)
    report("8. reentrant checkpoint, frozen input, nothing trainable after", reentrant_checkpoint_frozen_input)
    report("9a. torch.autograd.grad on a loss computed under no_grad", autograd_grad_on_frozen)
    report("9b. a detached second loss passed to torch.autograd.backward", second_loss_detached)
    report("10. checks and a fixed step", checks_and_fix)
    report("11. a per-sample loss computed under no_grad", vector_loss_without_graph)
    report("12. torch.compile tracing backward (trace_autograd_ops=True)", compiled_backward)
