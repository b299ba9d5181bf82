"""Reproduce "view size is not compatible with input tensor's size and stride".

`Tensor.view` never copies: it only computes new strides for the same memory.
When the requested shape would make one new dimension walk across memory that
is not evenly spaced (two "contiguous subspaces"), no such strides exist and
eager PyTorch raises

    RuntimeError: view size is not compatible with input tensor's size and
    stride (at least one dimension spans across two contiguous subspaces).
    Use .reshape(...) instead.

Under torch.compile / FakeTensor tracing the same mistake is reported as
`Cannot view a tensor with shape ... and strides ... as a tensor with shape ...!`.

Cases, CPU only:
1. Attention head merge: `.transpose(1, 2).view(B, T, C)` fails after a
   hand-written attention and passes after F.scaled_dot_product_attention on
   CPU (its output already has the (B, T, H, D) memory order); `.reshape`,
   `.contiguous().view` and `.flatten` agree; dropping the transpose "fixes"
   the error and silently scrambles the heads; with one head the merge passes.
2. Next-token loss: `logits[:, :-1].view(-1, V)` and `labels[:, 1:].view(-1)`
   fail for batch > 1 and pass for batch 1.
3. A slice of a fused QKV projection: splitting the last dimension or
   merging the leading ones with `.view` works although the tensor is not
   contiguous; merging the sliced dimension with another fails.
4. An `expand`ed attention mask flattened with `.view`.
5. A channels_last conv output flattened with `.view(N, -1)`; after global
   average pooling (1x1 spatial) the same `.view` passes.
6. `.view(dtype)` to a smaller element type on a transposed tensor.
7. Two gloo ranks: an all-gathered shard rearranged with `.permute` and then
   `.view`.
8. The same head merge under FakeTensorMode and under torch.compile.
9. `.reshape` returns a view when it can and copies only when it must.
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
import torch.nn.functional as F


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print("no error" + (f": {out}" if out is not None else ""), flush=True)
    except Exception as e:  # noqa: BLE001 - print whatever PyTorch raises
        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        print("\n".join(text.splitlines()[:3]), flush=True)


def layout(t):
    return f"shape={tuple(t.shape)} stride={t.stride()} contiguous={t.is_contiguous()}"


B, T, H, D = 2, 5, 4, 8
C = H * D
torch.manual_seed(0)
x = torch.randn(B, T, C)


def attn_out(sdpa=False):
    q = k = v = x.view(B, T, H, D).transpose(1, 2)      # (B, H, T, D) views of x
    if sdpa:
        out = F.scaled_dot_product_attention(q, k, v)
    else:                                               # hand-written attention
        out = torch.softmax(q @ k.transpose(-2, -1) / D ** 0.5, dim=-1) @ v
    print("attention output:", layout(out), flush=True)
    return out


def merge_view(sdpa=False):
    return tuple(attn_out(sdpa).transpose(1, 2).view(B, T, C).shape)


def merge_fixed():
    out = attn_out()
    a = out.transpose(1, 2).reshape(B, T, C)
    b = out.transpose(1, 2).contiguous().view(B, T, C)
    c = out.transpose(1, 2).flatten(2)
    wrong = out.reshape(B, T, C)                       # no transpose: no error, heads mixed up
    return (f"reshape==contiguous().view: {torch.equal(a, b)}, flatten equal: {torch.equal(a, c)}, "
            f"without transpose equal: {torch.equal(a, wrong)}")


def loss_view(batch):
    V = 11
    logits = torch.randn(batch, T, V)
    labels = torch.randint(V, (batch, T))
    print("logits[:, :-1]:", layout(logits[:, :-1]), flush=True)
    return F.cross_entropy(logits[:, :-1].view(-1, V), labels[:, 1:].view(-1)).item()


def loss_labels_only():
    V = 11
    logits = torch.randn(B, T, V)
    labels = torch.randint(V, (B, T))
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].view(-1)).item()


def loss_fixed():
    V = 11
    logits = torch.randn(B, T, V)
    labels = torch.randint(V, (B, T))
    return round(F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1)).item(), 4)


def qkv_split():
    qkv = torch.randn(B, T, 3 * C)
    q = qkv[..., :C]
    print("q slice:", layout(q), flush=True)
    qh = q.view(B, T, H, D)                             # splitting the last dim: fine
    print("q.view(B, T, H, D):", layout(qh), flush=True)
    print("q.view(B * T, C):", tuple(q.view(B * T, C).shape), flush=True)   # merging B and T: fine
    return q.view(B, T * C).shape                       # merging T with the sliced dim: not possible


def mask_view():
    mask = torch.ones(B, 1, T, T).expand(B, H, T, T)
    print("mask:", layout(mask), flush=True)
    return mask.view(B * H, T, T).shape


def channels_last(fmt):
    conv = torch.nn.Conv2d(3, 4, 3, padding=1).to(memory_format=fmt)
    y = conv(torch.randn(2, 3, 6, 6).to(memory_format=fmt))
    print("conv output:", layout(y), flush=True)
    return y.view(y.size(0), -1).shape


def channels_last_fixed():
    conv = torch.nn.Conv2d(3, 4, 3, padding=1).to(memory_format=torch.channels_last)
    y = conv(torch.randn(2, 3, 6, 6).to(memory_format=torch.channels_last))
    return f"flatten {tuple(torch.flatten(y, 1).shape)}, reshape {tuple(y.reshape(y.size(0), -1).shape)}"


def one_head():
    out = torch.randn(B, 1, T, D)                       # e.g. one head per tensor-parallel rank
    return f"transposed contiguous: {out.transpose(1, 2).is_contiguous()}, view {tuple(out.transpose(1, 2).view(B, T, D).shape)}"


def pooled_channels_last():
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.AdaptiveAvgPool2d(1))
    m = m.to(memory_format=torch.channels_last)
    y = m(torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last))
    print("pooled output:", layout(y), flush=True)
    return tuple(y.view(y.size(0), -1).shape)


def dtype_view():
    w = torch.randn(4, 6).t()
    return w.view(torch.float16).shape


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
        shard = torch.full((3, 4), float(rank))               # (tokens, features / world) on this rank
        out = torch.empty(world_size * 3, 4)
        dist.all_gather_into_tensor(out, shard)               # stacked along dim 0: (world * tokens, f)
        if rank == 0:
            print(f"rank {rank}: gathered {layout(out)}", flush=True)
        per_token = out.view(world_size, 3, 4).permute(1, 0, 2)   # (tokens, world, f)
        try:
            full = per_token.view(3, world_size * 4)
        except RuntimeError as e:                             # every rank raises; rank 0 reports
            if rank == 0:
                print(f"rank {rank}: {type(e).__name__}: {e}", flush=True)
            full = per_token.reshape(3, world_size * 4)
        if rank == 0:
            print(f"rank 0: reshape gives row 0 = {full[0].tolist()}", flush=True)
    finally:
        dist.destroy_process_group()


def gather_then_view():
    mp.spawn(gather_worker, args=(free_port(), 2), nprocs=2, join=True)


def fake_view():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a = torch.randn(B, H, T, D)
        return a.transpose(1, 2).view(B, T, C).shape


def compiled_merge():
    def merge(out):
        return out.transpose(1, 2).view(out.size(0), out.size(2), -1)
    return torch.compile(merge, backend="eager")(torch.randn(B, H, T, D)).shape


def reshape_copies():
    a = torch.randn(B, T, C)
    same = a.reshape(B * T, C).data_ptr() == a.data_ptr()
    t = a.transpose(0, 1)
    copied = t.reshape(T * B, C).data_ptr() != t.data_ptr()
    return f"reshape of contiguous shares memory: {same}; reshape of transposed copies: {copied}"


if __name__ == "__main__":
    report("1a. hand-written attention, head merge with .transpose(1, 2).view", merge_view)
    report("1b. same merge after F.scaled_dot_product_attention (CPU)", lambda: merge_view(sdpa=True))
    report("1c. head merge with .reshape / .contiguous().view / .flatten", merge_fixed)
    report("1d. the same merge with a single head", one_head)
    report("2a. next-token loss, batch 2, .view on shifted logits", lambda: loss_view(2))
    report("2b. next-token loss, batch 1, same code", lambda: round(loss_view(1), 4))
    report("2c. logits fixed with .reshape, labels still .view", loss_labels_only)
    report("2d. both with .reshape", loss_fixed)
    report("3. slice of a fused QKV projection", qkv_split)
    report("4. expanded attention mask flattened with .view", mask_view)
    report("5a. channels_last conv output .view(N, -1)", lambda: channels_last(torch.channels_last))
    report("5b. same conv in contiguous_format", lambda: channels_last(torch.contiguous_format))
    report("5c. channels_last output with torch.flatten / .reshape", channels_last_fixed)
    report("5d. channels_last output after global average pooling, .view(N, -1)", pooled_channels_last)
    report("6. .view(torch.float16) on a transposed float32 tensor", dtype_view)
    report("7. two gloo ranks: all-gathered shard, permute, view", gather_then_view)
    report("8a. head merge under FakeTensorMode", fake_view)
    report("8b. head merge under torch.compile(backend='eager')", compiled_merge)
    report("9. when .reshape copies", reshape_copies)
