"""Reproduce "TypeError: Got unsupported ScalarType BFloat16".

Requires: torch with torch.float8_e4m3fn (case 4; present in 2.2.0, absent
in 2.0.0) and NumPy. Without NumPy the script stops after case 0
("RuntimeError: Numpy is not available", a different problem) and prints
none of the lines the entry quotes. Optional: ml_dtypes (case 7) and
Hugging Face datasets (case 8); each case is skipped when its package is
missing. Case 5 starts two gloo processes on 127.0.0.1. Checked with torch
2.13.0 (CPU) + NumPy 2.4.6 + ml_dtypes 0.7.0 + datasets 5.2.0, and with
torch 2.13.0 + NumPy 1.26.4 + datasets 2.19.2 for the failing case 8.

NumPy has no bfloat16 dtype, so PyTorch's tensor-to-NumPy bridge
(torch/csrc/utils/tensor_numpy.cpp, aten_to_numpy_dtype) refuses a bfloat16
tensor with

    TypeError: Got unsupported ScalarType BFloat16

Cases, CPU only:
1. Every road into NumPy: .numpy(), .numpy(force=True), np.asarray, np.array,
   np.array(..., dtype=np.float32), np.argmax on the tensor, and a 0-d element
   passed to np.float32. .tolist(), .item() and float() do not go through
   NumPy and work.
2. The checks that run before the dtype check: a tensor that requires grad,
   a sparse tensor and a meta tensor get their own messages first.
3. Where bf16 comes from in training: the output of a Linear under
   torch.autocast("cpu", dtype=torch.bfloat16), and logits of a model whose
   weights are bf16 (model.to(torch.bfloat16)), collected for a metric.
4. Other dtypes NumPy lacks give the same message with their own name.
5. Two gloo ranks: per-sample bf16 scores all-gathered for an evaluation
   metric; every rank that converts the gathered tensor raises.
6. Fixes: .float() / .to(torch.float32) (exact: every bf16 value is a float32
   value), .to(torch.float16) (loses range: 1e5 becomes inf), and a
   bit-exact round trip through .view(torch.int16) or .view(torch.uint16).
7. The other direction, if ml_dtypes is installed: torch.from_numpy on an
   ml_dtypes.bfloat16 array, and the bit-exact way back.
8. If Hugging Face datasets is installed: Dataset.map returning bf16 tensors
   (fails in datasets 2.19.x and older, converted to float32 from 2.20.0).
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

try:
    import numpy as np
except ImportError:  # pragma: no cover - the reproduction needs NumPy
    np = None


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print("no error" + (f": {out}" if out is not None else ""), flush=True)
    except Exception as e:  # noqa: BLE001 - print whatever is raised
        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        print("\n".join(text.splitlines()[:2]), flush=True)


torch.manual_seed(0)
x = torch.randn(4, 3, dtype=torch.bfloat16)


def autocast_output():
    lin = torch.nn.Linear(3, 5)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = lin(torch.randn(4, 3))
    print(f"autocast Linear output dtype: {y.dtype}", flush=True)
    return y.detach().numpy()


def bf16_model_metric():
    model = torch.nn.Sequential(torch.nn.Embedding(11, 8), torch.nn.Linear(8, 11)).to(torch.bfloat16)
    labels = torch.randint(11, (2, 5))
    with torch.no_grad():
        logits = model(labels)
    print(f"logits dtype: {logits.dtype}", flush=True)
    preds = np.argmax(logits.cpu().numpy(), axis=-1)   # the usual metric code
    return float((preds == labels.numpy()).mean())


def bf16_model_metric_fixed():
    model = torch.nn.Sequential(torch.nn.Embedding(11, 8), torch.nn.Linear(8, 11)).to(torch.bfloat16)
    labels = torch.randint(11, (2, 5))
    with torch.no_grad():
        logits = model(labels)
    preds = logits.argmax(-1).cpu().numpy()            # argmax in torch: int64, no bf16 left
    probs = logits.float().softmax(-1).cpu().numpy()   # or upcast first
    return f"accuracy {float((preds == labels.numpy()).mean()):.2f}, probs dtype {probs.dtype}"


def casts():
    big = torch.tensor([1e5, 3.14159, 1e-6], dtype=torch.bfloat16)
    f32 = big.float().numpy()
    f16 = big.to(torch.float16).numpy()
    exact = bool((torch.from_numpy(f32).to(torch.bfloat16) == big).all())
    return f"float32 {f32.tolist()} (round trip exact: {exact}); float16 {f16.tolist()}"


def bit_views():
    i16 = x.view(torch.int16).numpy()
    back_i16 = torch.from_numpy(i16).view(torch.bfloat16)
    out = f"int16 view {i16.dtype} {i16.nbytes} bytes, round trip equal: {torch.equal(back_i16, x)}"
    try:
        u16 = x.view(torch.uint16).numpy()
        back_u16 = torch.from_numpy(u16).view(torch.bfloat16)
        out += f"; uint16 view {u16.dtype}, round trip equal: {torch.equal(back_u16, x)}"
    except Exception as e:  # noqa: BLE001 - older releases
        out += f"; uint16 view: {type(e).__name__}: {e}"
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gather_worker(rank, port, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    warnings.filterwarnings("ignore")
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=30))
    try:
        scores = torch.full((3,), 0.5 + rank, dtype=torch.bfloat16)   # per-sample scores of this rank
        parts = [torch.empty_like(scores) for _ in range(world_size)]
        dist.all_gather(parts, scores)
        gathered = torch.cat(parts)
        lines = []
        try:
            gathered.cpu().numpy()
        except TypeError as e:
            lines.append(f"rank {rank}: {type(e).__name__}: {e}")
        mean = gathered.float().cpu().numpy().mean()
        lines.append(f"rank {rank}: with .float() first, mean = {mean:.2f}")
        for turn in range(world_size):   # one rank prints at a time, so lines never interleave
            if turn == rank:
                print("\n".join(lines), flush=True)
            dist.barrier()
    finally:
        dist.destroy_process_group()


def gather_then_numpy():
    mp.spawn(gather_worker, args=(free_port(), 2), nprocs=2, join=True)


def from_numpy_bf16():
    import ml_dtypes
    a = np.asarray([1.5, -2.0, 1e5], dtype=ml_dtypes.bfloat16)
    try:
        torch.from_numpy(a)
    except TypeError as e:
        print(f"{type(e).__name__}: {e}", flush=True)
    t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    back = t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return f"via int16 view: {t.tolist()} {t.dtype}; back to ml_dtypes equal: {bool((back == a).all())}"


def datasets_map():
    import datasets
    datasets.disable_progress_bars()
    print(f"datasets {datasets.__version__}", flush=True)
    ds = datasets.Dataset.from_dict({"text": ["a", "b", "c", "d"]})
    out = ds.map(lambda b: {"emb": torch.randn(len(b["text"]), 4, dtype=torch.bfloat16)}, batched=True)
    return f"emb stored as {out.features['emb']}"


if __name__ == "__main__":
    print(f"torch {torch.__version__}, numpy {np.__version__ if np else 'not installed'}", flush=True)
    if np is None:
        report("0. no NumPy at all: .numpy() on a float32 tensor", lambda: torch.zeros(2).numpy())
        raise SystemExit("NumPy is needed for the remaining cases")
    report("1a. .numpy() on a bf16 tensor", lambda: x.numpy())
    report("1b. .numpy(force=True)", lambda: x.numpy(force=True))
    report("1c. np.asarray(tensor)", lambda: np.asarray(x))
    report("1d. np.array(tensor, dtype=np.float32)", lambda: np.array(x, dtype=np.float32))
    report("1e. np.argmax(tensor, axis=-1)", lambda: np.argmax(x, axis=-1))
    report("1f. np.float32(tensor[0, 0])", lambda: np.float32(x[0, 0]))
    report("1g. .tolist(), .item(), float()", lambda: (x[0].tolist(), x[0, 0].item(), float(x[0, 0])))
    report("2a. bf16 tensor that requires grad", lambda: x.clone().requires_grad_().numpy())
    report("2b. sparse bf16 tensor", lambda: x.to_sparse().numpy())
    report("2c. meta bf16 tensor", lambda: torch.empty(2, dtype=torch.bfloat16, device="meta").numpy())
    report("3a. Linear output under torch.autocast('cpu', bfloat16), .numpy()", autocast_output)
    report("3b. bf16 model, np.argmax(logits.cpu().numpy()) for accuracy", bf16_model_metric)
    report("3c. same metric with argmax in torch / .float() first", bf16_model_metric_fixed)
    for dt in (torch.float8_e4m3fn, torch.complex32):
        report(f"4. .numpy() on {dt}", lambda dt=dt: torch.zeros(2, dtype=dt).numpy())
    report("5. two gloo ranks: all_gather of bf16 scores, then .numpy()", gather_then_numpy)
    report("6a. .float() / .to(torch.float16) on values 1e5, 3.14159, 1e-6", casts)
    report("6b. lossless storage through an int16 / uint16 view", bit_views)
    try:
        import ml_dtypes  # noqa: F401
        report("7. torch.from_numpy on an ml_dtypes.bfloat16 array", from_numpy_bf16)
    except ImportError:
        print("--- 7. skipped: ml_dtypes is not installed", flush=True)
    try:
        import datasets  # noqa: F401
        report("8. datasets: Dataset.map returning bf16 tensors", datasets_map)
    except ImportError:
        print("--- 8. skipped: datasets is not installed", flush=True)
