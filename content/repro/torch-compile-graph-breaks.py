"""Reproduce a torch.compile graph break, logged and then made fatal.

The function branches in Python on a tensor's value (`if x.sum() > 0`), a
data-dependent control flow that Dynamo cannot capture in one graph.

1. With TORCH_LOGS="graph_breaks" (set here via torch._logging.set_logs) the
   compiled call succeeds but the break is logged:
       [__graph_breaks] Graph break in user code at .../torch-compile-graph-breaks.py:NN
       [__graph_breaks] Graph Break Reason: Data-dependent branching
   A second call with a new input shape recompiles the function and meets
   the same break again; the repeat is logged in short form:
       [__graph_breaks] Graph break (user stack suppressed due to duplicate graph break) in user code at .../torch-compile-graph-breaks.py:NN
2. With fullgraph=True the same break becomes an error:
       torch._dynamo.exc.Unsupported: Data-dependent branching

backend="eager" is used so no C++ compiler or Triton is needed; graph
capture (where breaks happen) is the same for every backend.
"""

import torch
import torch._dynamo


def step(x, w):
    y = x @ w
    if y.sum() > 0:  # Python control flow on a tensor value -> graph break
        return torch.relu(y)
    return -y


def main():
    torch._logging.set_logs(graph_breaks=True)
    x, w = torch.randn(8, 8), torch.randn(8, 8)

    print("== compile without fullgraph: runs, graph break is logged", flush=True)
    compiled = torch.compile(step, backend="eager")
    compiled(x, w)

    print("== same function, new input shape: recompile, duplicate break logged short", flush=True)
    compiled(torch.randn(6, 8), w)

    print("== compile with fullgraph=True: graph break is an error", flush=True)
    torch._dynamo.reset()
    torch.compile(step, backend="eager", fullgraph=True)(x, w)


if __name__ == "__main__":
    main()
