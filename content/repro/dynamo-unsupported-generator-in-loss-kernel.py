"""Reproduce torch.compile (Dynamo) refusing Python generators in loss code.

Five small loss helpers, each compiled with backend="eager" (no C++ compiler
or Triton needed; graph capture is the same for every backend):

1. a weight-decay term that iterates `model.parameters()`, a generator made
   *outside* the compiled function and passed in: Dynamo cannot iterate it
   ("missing tp_iter ... UserDefinedObjectVariable(generator)", 2.13+);
2. `next()` on that generator ("Missing tp_iternext", 2.13+);
3. a method call (`.close()`) on it ("call_method on generator", 2.9+);
4. a chunked cross-entropy written as a generator function and compiled
   directly ("Attempt to trace generator", 2.7+; "generator" up to 2.6);
5. a generator expression whose body calls `.item()`: the graph break inside
   the generator cannot be resumed ("Generator reconstruction with
   mutations", 2.11+).

Each case runs first without fullgraph (graph break, logged through
TORCH_LOGS=graph_breaks, set here with torch._logging.set_logs) and then with
fullgraph=True (torch._dynamo.exc.Unsupported for cases 1 to 4; on 2.13 case 5
compiles under fullgraph=True, because `.item()` is then captured into the
graph instead of breaking it). Finally the fixed versions
(list comprehension / a list made before the call) compile with
fullgraph=True.
"""
import torch
import torch._dynamo
import torch.nn.functional as F


def l2_penalty(params):
    # params is model.parameters(): a generator object created in eager code
    return sum(p.pow(2).sum() for p in params)


def first_param_norm(params):
    return next(params).norm()


def close_then_zero(params):
    params.close()
    return torch.zeros(())


def chunked_ce(logits, target):
    # a generator function: compiling it directly is refused
    for lg, tg in zip(logits.chunk(2), target.chunk(2)):
        yield F.cross_entropy(lg, tg)


def logged_ce(logits, target):
    # .item() inside a generator expression forces a graph break in the generator
    return sum(F.cross_entropy(lg, tg).item() for lg, tg in zip(logits.chunk(2), target.chunk(2)))


def l2_penalty_fixed(params):
    return sum([p.pow(2).sum() for p in params])


def run(name, fn, make_args, consume=False):
    for fullgraph in (False, True):
        torch._dynamo.reset()
        print(f"== {name}: fullgraph={fullgraph}", flush=True)
        try:
            out = torch.compile(fn, backend="eager", fullgraph=fullgraph)(*make_args())
            if consume:
                out = list(out)
            print("   ran (graph break logged above, if any)", flush=True)
        except torch._dynamo.exc.Unsupported as e:
            print(f"torch._dynamo.exc.Unsupported: {e}".splitlines()[0], flush=True)
            print("\n".join(str(e).splitlines()[1:3]), flush=True)


def main():
    torch._logging.set_logs(graph_breaks=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    logits, target = torch.randn(4, 4), torch.randint(0, 4, (4,))

    run("weight decay over model.parameters()", l2_penalty, lambda: (model.parameters(),))
    run("next() on model.parameters()", first_param_norm, lambda: (model.parameters(),))
    run("close() on model.parameters()", close_then_zero, lambda: (model.parameters(),))
    run("generator function compiled directly", chunked_ce, lambda: (logits, target), consume=True)
    run(".item() inside a generator expression", logged_ce, lambda: (logits, target))

    print("== fix: materialise the parameters, list comprehension, fullgraph=True", flush=True)
    torch._dynamo.reset()
    params = [p for p in model.parameters()]
    out = torch.compile(l2_penalty_fixed, backend="eager", fullgraph=True)(params)
    print(f"   ok: {out.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
