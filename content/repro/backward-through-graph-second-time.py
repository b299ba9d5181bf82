"""Reproduce "Trying to backward through the graph a second time".

A backward pass frees the tensors each graph node saved for its gradient
formula. A tensor that is carried into the next training step without
`.detach()` keeps the previous step's graph attached, so the next backward
walks into it, finds the freed tensors and stops:

    RuntimeError: Trying to backward through the graph a second time (or
    directly access saved tensors after they have already been freed). ...

Cases, CPU only:
1. An RNN whose hidden state is carried across steps: step 0 trains, step 1
   fails.
2. The same loop with the hidden state detached at each step: all steps train.
3. The common wrong fix, `loss.backward(retain_graph=True)`: step 1 now walks
   back into step 0's graph, whose weights the optimizer has changed in place,
   and fails with the in-place version check instead.
4. `retain_graph=True` without an optimizer step: no error, but the graph
   reachable from the loss grows every step.
5. Touching a freed saved tensor directly: reading `grad_fn._saved_result` and
   calling `register_hooks` on a raw saved tensor after backward.
6. DistributedDataParallel, two ranks on gloo: a second backward through a
   retained graph (no new forward) is not all-reduced, so the ranks' gradients
   stop agreeing without any error.
"""
import os
import socket
import traceback
import warnings
from datetime import timedelta

warnings.filterwarnings("ignore")  # keep the output to the lines that matter

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        fn()
        print("no error", flush=True)
    except RuntimeError as e:
        print("".join(traceback.format_exception_only(type(e), e)).strip(), flush=True)


def graph_size(t):
    """Number of autograd nodes reachable from t.grad_fn."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(next_fn for next_fn, _ in fn.next_functions)
    return len(seen)


def rnn_loop(detach=False, retain=False, step_optimizer=True, steps=3):
    torch.manual_seed(0)
    rnn = torch.nn.RNN(4, 8, batch_first=True)
    head = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
    h = torch.zeros(1, 2, 8)
    for step in range(steps):
        if detach:
            h = h.detach()                   # cut the link to the previous step's graph
        out, h = rnn(torch.randn(2, 5, 4), h)
        loss = head(out).pow(2).mean()
        size = graph_size(loss)
        opt.zero_grad()
        loss.backward(retain_graph=retain)
        if step_optimizer:
            opt.step()
        print(f"step {step}: loss {loss.item():.4f}, autograd nodes reachable from loss: {size}", flush=True)


def saved_tensor_after_backward():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()                              # exp saves its result for backward
    y.sum().backward()
    y.grad_fn._saved_result                  # already freed


def register_hooks_after_backward():
    x = torch.randn(3, requires_grad=True)
    y = x.pow(2)                             # pow saves its input
    y.sum().backward()
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ddp_worker(rank, port, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    warnings.filterwarnings("ignore")
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=30))
    try:
        torch.manual_seed(0)
        model = DDP(torch.nn.Linear(4, 4))  # same initial weights on both ranks
        torch.manual_seed(100 + rank)       # different data on each rank
        loss = torch.tanh(model(torch.randn(2, 4))).sum()
        loss.backward(retain_graph=True)
        first = model.module.weight.grad.clone()
        loss.backward()                     # no new forward: DDP does not reduce this one
        second = model.module.weight.grad - first
        sums = torch.stack([first.sum(), second.sum()])
        gathered = [torch.zeros(2) for _ in range(world_size)]
        dist.all_gather(gathered, sums)
        if rank == 0:
            a, b = gathered
            print(f"first backward, grad sum per rank: {a[0]:.4f} {b[0]:.4f} (equal: {bool(torch.isclose(a[0], b[0]))})", flush=True)
            print(f"second backward, grad sum per rank: {a[1]:.4f} {b[1]:.4f} (equal: {bool(torch.isclose(a[1], b[1]))})", flush=True)
    finally:
        dist.destroy_process_group()


def ddp_second_backward():
    mp.spawn(ddp_worker, args=(free_port(), 2), nprocs=2, join=True)


if __name__ == "__main__":
    report("1. hidden state carried across steps", lambda: rnn_loop())
    report("2. hidden state detached at every step", lambda: rnn_loop(detach=True))
    report("3. carried state with retain_graph=True and an optimizer step", lambda: rnn_loop(retain=True))
    report("4. carried state with retain_graph=True, no optimizer step",
           lambda: rnn_loop(retain=True, step_optimizer=False, steps=4))
    report("5a. reading a saved tensor after backward", saved_tensor_after_backward)
    report("5b. register_hooks on a saved tensor after backward", register_hooks_after_backward)
    report("6. DDP: second backward through a retained graph", ddp_second_backward)
