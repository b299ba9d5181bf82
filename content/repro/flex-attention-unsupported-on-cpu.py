"""Compiled FlexAttention on CPU tensors, in the cases the CPU path still refuses.

Since PyTorch 2.6, Inductor lowers flex_attention on CPU to a C++ template
(CppFlexAttentionTemplate). That template only does the forward pass without
the log-sum-exp, and only on an AVX2-capable x86 CPU (not on macOS, not with
ATEN_CPU_CAPABILITY=default, not while an XPU is available). The script shows:

1. return_lse=True under torch.compile: the lowering raises NotImplementedError,
   wrapped as InductorError/LoweringException (2.6.0 and later).
2. The same call without return_lse in a child process started with
   ATEN_CPU_CAPABILITY=default, which makes the lowering treat the CPU as
   unsupported ("torch.compile on current platform is not supported for CPU.").
3. Inputs that require grad: from 2.11.0 flex_attention itself refuses a CPU
   backward before anything is compiled.
Each case prints the first line of the exception it ends in.
"""
import os
import subprocess
import sys

import torch
from torch.nn.attention.flex_attention import flex_attention


def report(exc):
    first = next(ln for ln in str(exc).splitlines() if ln.strip())
    mod = type(exc).__module__
    name = type(exc).__name__ if mod == "builtins" else f"{mod}.{type(exc).__name__}"
    print(f"{name}: {first}", flush=True)


def run(return_lse=False, requires_grad=False):
    torch._dynamo.reset()
    q, k, v = (torch.randn(1, 2, 128, 16, requires_grad=requires_grad) for _ in range(3))
    fn = torch.compile(flex_attention)
    try:
        if requires_grad:
            fn(q, k, v).sum().backward()
        else:
            with torch.no_grad():
                fn(q, k, v, return_lse=return_lse)
        print("compiled flex_attention ran on CPU", flush=True)
    except Exception as e:  # noqa: BLE001
        report(e)


if __name__ == "__main__":
    if sys.argv[1:] == ["child"]:
        run()
        sys.exit(0)
    print(f"torch {torch.__version__}", flush=True)
    run(return_lse=True)
    subprocess.run([sys.executable, __file__, "child"],
                   env=dict(os.environ, ATEN_CPU_CAPABILITY="default"), check=False)
    run(requires_grad=True)
