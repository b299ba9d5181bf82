"""Reproduce '"<op>" not implemented for 'Half'' from float16 tensors on the CPU.

PyTorch picks a kernel per device and dtype through its AT_DISPATCH macros;
when the CPU build of an operator has no float16 branch, the default case of
the switch raises

    "<op name>" not implemented for 'Half'

as a RuntimeError up to torch 2.7 and as a NotImplementedError (a subclass of
RuntimeError) from 2.8. Older releases failed this way for the everyday
layers: "addmm_impl_cpu_" (nn.Linear, 1.13 to 2.1), "slow_conv2d_cpu"
(nn.Conv2d, up to 2.1) and "LayerNormKernelImpl" (nn.LayerNorm, up to 2.2).
On a current CPU build those run in float16, so this script uses operators
that still have no CPU float16 kernel: torch.cdist, torch.linalg.cholesky,
torch.linalg.qr (also behind nn.init.orthogonal_), F.ctc_loss and
torch.linalg.solve.

Cases, CPU only (checked with torch 2.13.0+cpu):
1. The everyday layers of a float16 model, forward and backward.
2. Operators without a CPU float16 kernel, called with float16 inputs.
3. The exception class, and that `except RuntimeError` still catches it.
4. bfloat16 is not a general way out: these operators lack it too.
5. The fixes: run the op in float32 and cast back, or pick the dtype from
   the device before loading the model.
"""
import traceback
import warnings

warnings.filterwarnings("ignore")  # keep the output to the lines that matter

import torch
import torch.nn.functional as F


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print("no error" + (f": {out}" if out is not None else ""), flush=True)
    except Exception as e:  # noqa: BLE001 - print whatever is raised
        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        print(text.splitlines()[0], flush=True)


torch.manual_seed(0)
feats = torch.randn(6, 16).half()          # e.g. embeddings of a float16 model, on the CPU
bank = torch.randn(10, 16).half()
cov = (feats.float().T @ feats.float() / 6 + torch.eye(16)).half()


def everyday_layers():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.Flatten(), torch.nn.LayerNorm(144), torch.nn.Linear(144, 5),
    ).half()
    x = torch.randn(2, 3, 8, 8).half()
    loss = F.cross_entropy(model(x), torch.tensor([0, 1]))
    loss.backward()
    return f"Conv2d + LayerNorm + Linear in {loss.dtype} ran forward and backward"


def orthogonal_init():
    w = torch.empty(8, 8, dtype=torch.float16)
    torch.nn.init.orthogonal_(w)           # QR of a float16 matrix inside


def ctc_on_half():
    log_probs = torch.randn(12, 2, 5).half().log_softmax(-1)
    targets = torch.tensor([[1, 2, 3], [2, 3, 4]])
    return F.ctc_loss(log_probs, targets, torch.tensor([12, 12]), torch.tensor([3, 3]))


def exception_class():
    try:
        torch.cdist(feats, bank)
    except RuntimeError as e:
        return (f"caught by 'except RuntimeError' as {type(e).__name__}; "
                f"issubclass(NotImplementedError, RuntimeError) = {issubclass(NotImplementedError, RuntimeError)}")


def fix_upcast_op():
    d = torch.cdist(feats.float(), bank.float()).to(feats.dtype)   # compute in fp32, hand back fp16
    L = torch.linalg.cholesky(cov.float()).to(cov.dtype)
    return f"cdist {tuple(d.shape)} {d.dtype}, cholesky {tuple(L.shape)} {L.dtype}"


def fix_dtype_from_device():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.float16 if device == "cuda" else torch.float32   # never fp16 on the CPU
    model = torch.nn.Linear(16, 4).to(device=device, dtype=dtype)
    x = feats.to(device=device, dtype=dtype)
    return f"device={device}, dtype={dtype}, output {model(x).dtype}, cdist {torch.cdist(x, x).dtype}"


if __name__ == "__main__":
    print(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}", flush=True)
    report("1. float16 Conv2d, LayerNorm and Linear on the CPU", everyday_layers)
    report("2a. torch.cdist on float16 features (nearest neighbours, retrieval metrics)",
           lambda: torch.cdist(feats, bank))
    report("2b. torch.linalg.cholesky on a float16 covariance", lambda: torch.linalg.cholesky(cov))
    report("2c. nn.init.orthogonal_ on a float16 weight", orthogonal_init)
    report("2d. F.ctc_loss with float16 log-probabilities", ctc_on_half)
    report("2e. torch.linalg.solve on float16 (LU inside)", lambda: torch.linalg.solve(cov, feats.T))
    report("3. the exception class", exception_class)
    report("4a. torch.cdist on bfloat16", lambda: torch.cdist(feats.bfloat16(), bank.bfloat16()))
    report("4b. torch.linalg.cholesky on bfloat16", lambda: torch.linalg.cholesky(cov.bfloat16()))
    report("5a. fix: run the op in float32 and cast the result back", fix_upcast_op)
    report("5b. fix: choose the dtype from the device", fix_dtype_from_device)
