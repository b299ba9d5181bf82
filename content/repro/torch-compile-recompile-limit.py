"""Reproduce torch.compile hitting its recompile limit.

A compiled function takes a Python int that changes on every call (e.g. a
step counter or a chunk size passed as a plain int). With dynamic=False,
Dynamo specializes on the int's value, so each new value fails a guard and
triggers a recompile. After config.recompile_limit (8) compiled versions of
the frame, Dynamo stops compiling it, falls back to eager and warns:

    torch._dynamo hit config.recompile_limit (8)
       function: 'scaled' (...)
       last reason: 0/7: ...

Then the same loop runs again with fullgraph=True, where hitting the limit
is an error: torch._dynamo.exc.FailOnRecompileLimitHit.
backend="eager" keeps it fast and free of a C++ compiler.

Observed with torch 2.13.0: a changing Python *float* argument does not
recompile (floats are not specialized by default any more), hence the int.
"""
import torch
import torch._dynamo


def scaled(x, step):
    return torch.tanh(x * step) + step


def main():
    x = torch.randn(16)
    f = torch.compile(scaled, backend="eager", dynamic=False)
    for step in range(12):
        f(x, step)
    print("== 12 calls done (compiled 8 times, then eager fallback)", flush=True)

    torch._dynamo.reset()
    g = torch.compile(scaled, backend="eager", dynamic=False, fullgraph=True)
    for step in range(12):
        g(x, step)


if __name__ == "__main__":
    main()
