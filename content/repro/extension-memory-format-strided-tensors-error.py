"""Reproduce "RuntimeError: memory format option is only supported by strided tensors".

CPU only, no extension build, a few seconds. Checked with torch 2.13.0 (CPU).

In the real failure a compiled extension (Apex's fused_layer_norm_cuda,
flash-attn, a Mamba selective-scan kernel) calls at::empty_like(input) on an
ordinary dense tensor, passing no layout and no memory format. When the
extension was compiled with a GCC older than 9 against the headers of torch
2.2.0 or 2.2.1, the std::optional arguments of that call are laid out
differently from what libtorch (built with a newer GCC) expects, so libtorch
reads a non-strided layout and a memory format that nobody passed. That ABI
mismatch cannot be rebuilt here (it needs GCC 7/8 and torch 2.2.0/2.2.1), so
this script hands the same operator the argument combination that the garbled
call delivers, through the normal Python API, and shows which checks fire:

1. What Apex asks for: empty_like on a dense tensor with no options. Works.
2. A memory format alone (layout still strided). Works.
3. A non-strided layout *and* a memory format on a dense tensor: the check in
   at::native::empty_like (aten/src/ATen/native/TensorFactories.cpp) raises
   the message. The "Exception raised from" line names the function and file.
4. The same with the sparse CSR layout: same message.
5. The legitimate way to reach the message: a real sparse COO tensor given a
   memory format (empty_like_sparse_coo in sparse/SparseTensor.cpp).
"""
import os

# Show the C++ location ("Exception raised from <function> at <file>:<line>")
# without spending time on symbolising the C++ stack.
os.environ.setdefault("TORCH_SHOW_CPP_STACKTRACES", "1")
os.environ.setdefault("TORCH_DISABLE_ADDR2LINE", "1")

import torch  # noqa: E402


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print(f"no error: layout={out.layout}, shape={tuple(out.shape)}", flush=True)
    except RuntimeError as e:
        lines = str(e).splitlines()
        print(f"RuntimeError: {lines[0]}", flush=True)
        where = [ln for ln in lines if ln.startswith("Exception raised from")]
        if where:
            print(where[0], flush=True)


if __name__ == "__main__":
    print(f"torch {torch.__version__}", flush=True)
    x = torch.randn(4, 8)  # stands for the dense activations a LayerNorm receives
    report("1. empty_like(x): no layout, no memory format (what the extension asks for)",
           lambda: torch.empty_like(x))
    report("2. empty_like(x, memory_format=contiguous_format): strided layout",
           lambda: torch.empty_like(x, memory_format=torch.contiguous_format))
    report("3. aten.empty_like(x, layout=sparse_coo, memory_format=contiguous_format) on a dense tensor",
           lambda: torch.ops.aten.empty_like.default(
               x, layout=torch.sparse_coo, memory_format=torch.contiguous_format))
    report("4. empty_like(x, layout=sparse_csr, memory_format=preserve_format) on a dense tensor",
           lambda: torch.empty_like(x, layout=torch.sparse_csr, memory_format=torch.preserve_format))
    report("5. empty_like(sparse COO tensor, memory_format=contiguous_format)",
           lambda: torch.empty_like(x.to_sparse(), memory_format=torch.contiguous_format))
