"""Reproduce Inductor's NoValidChoicesError: kernel selection for an op ends with no candidate.

CPU only, PyTorch 2.13 (no GPU, no Triton kernels needed). With max-autotune on,
Inductor builds the candidate list for a matmul (and for a convolution) only from
the backends named in `max_autotune_gemm_backends` (`max_autotune_conv_backends`).
Naming only TRITON leaves nothing a CPU tensor can use, so lowering fails with

  torch._inductor.exc.InductorError: LoweringException: NoValidChoicesError: No choices to select.
  Provided reason: No choices exist for backend. please consider adding ATEN into
  max_autotune_gemm_backends config (defined in torch/_inductor/config.py) to allow at least one choice.

(PyTorch 2.4 to 2.9 print 'No choices to select, please consider adding ATEN into ...'
without the 'Provided reason' part; 2.1 to 2.3 raise a plain RuntimeError with that text.
On 2.4 to 2.7 an empty matmul list falls back to ATen with a warning instead, while
autotune_fallback_to_aten is on, its default; the script targets 2.13.)
Then the matmul is compiled again with ATEN back in the list, and compiles (the
convolution is not retried, to keep the run short). The script exits 0.
"""
import os
import tempfile
import traceback

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="inductor-cache-"))

import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402


def mm_relu(a, b):
    return (a @ b).relu()


def conv(x, w):
    return torch.nn.functional.conv2d(x, w, padding=1)


CASES = {
    "mm": (mm_relu, (torch.randn(64, 64), torch.randn(64, 64)), "max_autotune_gemm_backends"),
    "conv": (conv, (torch.randn(1, 3, 16, 16), torch.randn(8, 3, 3, 3)), "max_autotune_conv_backends"),
}


def attempt(name, backends):
    fn, args, knob = CASES[name]
    torch._dynamo.reset()
    with inductor_config.patch({"max_autotune": True, knob: backends}):
        try:
            out = torch.compile(fn)(*args)
        except Exception as e:  # InductorError (BackendCompilerFailed before 2.7)
            print(f"[{name}] {knob}={backends!r}: compile failed")
            # the exception's own lines, as a traceback ends with them
            print("".join(traceback.format_exception_only(type(e), e)).rstrip())
            return
    diff = (out - fn(*args)).abs().max().item()
    print(f"[{name}] {knob}={backends!r}: compiled, max abs difference to eager {diff:.2e}")


print("torch", torch.__version__)
for case in CASES:
    attempt(case, "TRITON")        # no backend that can run on this device
    if case == "mm":
        attempt(case, "ATEN,TRITON")   # ATen kept as a candidate: compiles
