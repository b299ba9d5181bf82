"""Reproduce "No available kernel. Aborting execution." from scaled_dot_product_attention.

F.scaled_dot_product_attention (SDPA) picks one of several backends for each
call. When code narrows the choice (torch.nn.attention.sdpa_kernel, the older
torch.backends.cuda.sdp_kernel, or the global enable_*_sdp switches) and every
backend still allowed refuses the inputs, SDPA repeats its checks with
warnings switched on ("... kernel not used because:" followed by the reason)
and then raises

    RuntimeError: No available kernel.  Aborting execution.

(one space between the sentences in CUDA builds from 2.2, two in the CPU
selector and in CUDA 2.0/2.1). When no backend at all is left for the device,
the error is "No viable backend for scaled_dot_product_attention was found."

The CPU has two SDPA backends (flash and math), so the same selection logic can
be shown without a GPU. Cases:
1. Only FLASH_ATTENTION allowed, 3-D inputs (the fused kernels need 4-D).
   Fixes: make the inputs 4-D, or allow MATH as well; without any restriction
   the call works.
2. Only FLASH_ATTENTION allowed, attention dropout > 0 (the CPU flash kernel
   has no dropout).
3. The deprecated torch.backends.cuda.sdp_kernel(enable_math=False) with a
   value head size that differs from the query's: FutureWarning, then the same
   error (the flags are global, so they also govern CPU tensors).
4. A global switch made at import time by one library
   (enable_math_sdp(False)) breaks a later, unrelated call; restoring it
   fixes that call.
5. Only EFFICIENT_ATTENTION allowed on CPU tensors, where that backend does not
   exist: "No viable backend ...".
"""
import traceback
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# Show every reason, not only the first occurrence per source line.
warnings.simplefilter("always")

torch.manual_seed(0)
B, H, T, D = 2, 4, 16, 8
q4 = torch.randn(B, H, T, D)
q3 = q4.reshape(B * H, T, D)          # heads folded into the batch: 3-D


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print(f"no error: output shape {tuple(out.shape)}", flush=True)
    except Exception as e:  # noqa: BLE001 - print whatever PyTorch raises
        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        print(text.splitlines()[0], flush=True)


def flags():
    c = torch.backends.cuda
    return (f"flash={c.flash_sdp_enabled()} mem_efficient={c.mem_efficient_sdp_enabled()} "
            f"math={c.math_sdp_enabled()} cudnn={c.cudnn_sdp_enabled()}")


def only(backends, fn):
    with sdpa_kernel(backends):
        return fn()


if __name__ == "__main__":
    print("torch", torch.__version__, flush=True)

    report("1a. sdpa_kernel([FLASH_ATTENTION]), 3-D q/k/v",
           lambda: only([SDPBackend.FLASH_ATTENTION], lambda: F.scaled_dot_product_attention(q3, q3, q3)))
    report("1b. same restriction, inputs made 4-D",
           lambda: only([SDPBackend.FLASH_ATTENTION], lambda: F.scaled_dot_product_attention(q4, q4, q4)))
    report("1c. 3-D inputs, MATH allowed as a fallback",
           lambda: only([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH],
                        lambda: F.scaled_dot_product_attention(q3, q3, q3)))
    report("1d. 3-D inputs, no restriction", lambda: F.scaled_dot_product_attention(q3, q3, q3))

    report("2a. sdpa_kernel([FLASH_ATTENTION]), dropout_p=0.1",
           lambda: only([SDPBackend.FLASH_ATTENTION],
                        lambda: F.scaled_dot_product_attention(q4, q4, q4, dropout_p=0.1)))
    report("2b. dropout_p=0.1, MATH allowed as a fallback",
           lambda: only([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH],
                        lambda: F.scaled_dot_product_attention(q4, q4, q4, dropout_p=0.1)))

    v16 = torch.randn(B, H, T, 2 * D)

    def legacy():
        with torch.backends.cuda.sdp_kernel(enable_math=False):
            return F.scaled_dot_product_attention(q4, q4, v16)
    report("3. torch.backends.cuda.sdp_kernel(enable_math=False), value head size 16 vs 8", legacy)

    def library_import():               # what some packages do at import time
        torch.backends.cuda.enable_math_sdp(False)
        torch.backends.cuda.enable_mem_efficient_sdp(False)
        torch.backends.cuda.enable_cudnn_sdp(False)
    library_import()
    print("flags after the import-time switch:", flags(), flush=True)
    report("4a. an unrelated model's 3-D attention after the global switch",
           lambda: F.scaled_dot_product_attention(q3, q3, q3))
    torch.backends.cuda.enable_math_sdp(True)
    print("flags after enable_math_sdp(True):", flags(), flush=True)
    report("4b. the same call with math re-enabled", lambda: F.scaled_dot_product_attention(q3, q3, q3))
    torch.backends.cuda.enable_mem_efficient_sdp(True)
    torch.backends.cuda.enable_cudnn_sdp(True)

    report("5. sdpa_kernel([EFFICIENT_ATTENTION]) on CPU tensors",
           lambda: only([SDPBackend.EFFICIENT_ATTENTION], lambda: F.scaled_dot_product_attention(q4, q4, q4)))
