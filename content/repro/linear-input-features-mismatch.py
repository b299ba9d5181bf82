"""Reproduce an input whose last dimension differs from nn.Linear's in_features.

nn.Linear folds every leading dimension of its input into rows and multiplies
by the transposed weight, so eager PyTorch reports the two 2-D operands:

    RuntimeError: mat1 and mat2 shapes cannot be multiplied (AxB and CxD)

A = product of the leading input dimensions, B = the input's last dimension,
C = in_features, D = out_features. B != C is the whole bug. A plain matmul of
batched 3-D operands reports the batched form instead:

    RuntimeError: Expected size for first two dimensions of batch2 tensor to be: [..] but got: [..].

On fake or meta tensors (torch.compile tracing, a model on the meta device)
the shape check is the meta function's:

    RuntimeError: a and b must have same reduction dim, but got [A, B] X [C, D].

Cases, CPU only, in the order they happen in training code:
1. A CNN whose classifier was sized for 32x32 images gets 64x64 images.
2. A head built for a 512-feature backbone gets 2048 features.
3. A head built from the config of a larger model (hidden 1024) gets the
   hidden states of a base model (768); then the folding of a 3-D and a 1-D
   input, and the same message without bias, in other dtypes, under autocast.
4. torch.flatten without start_dim folds the batch into the features; a
   view(-1, in_features) hides the mismatch and moves it to the loss.
5. Bare matmuls: 3-D @ 2-D, and a batched q @ k^T with unequal head sizes.
6. The same mismatch under torch.compile and on the meta device.
7. Confirm: a forward pre-hook names the layer and compares the last dim
   with in_features before the matmul runs.
8. Fixes: LazyLinear, the flattened size computed with a dummy forward,
   adaptive pooling, the head sized from the backbone's config. All run.
"""
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def run(title, fn):
    print(f"== {title}", flush=True)
    try:
        out = fn()
        print(f"OK: output shape {tuple(out.shape)}", flush=True)
    except Exception as exc:  # print the exception line as PyTorch raises it
        print("".join(traceback.format_exception_only(type(exc), exc)).rstrip(), flush=True)


class SmallCNN(nn.Module):
    """Classifier sized by hand for 3x32x32 inputs: 16 channels x 16 x 16 after one pool."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(16 * 16 * 16, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)  # keep dim 0 (batch), fold the rest
        return self.classifier(x)


class FlattenAll(SmallCNN):
    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x)))  # no start_dim: batch folded too


class ViewMinusOne(SmallCNN):
    def forward(self, x):
        return self.classifier(self.features(x).view(-1, 16 * 16 * 16))  # -1 absorbs the surplus


def check_linear_inputs(model):
    """Forward pre-hooks: name the first Linear whose input's last dim is not in_features."""
    def make(name):
        def hook(module, args):
            x = args[0]
            if isinstance(module.weight, nn.parameter.UninitializedParameter):
                return
            status = "OK" if x.shape[-1] == module.in_features else "MISMATCH"
            print(f"check {name}: input {tuple(x.shape)} vs in_features={module.in_features}: {status}", flush=True)
        return hook
    return [m.register_forward_pre_hook(make(n)) for n, m in model.named_modules() if isinstance(m, nn.Linear)]


def main():
    small = torch.randn(8, 3, 32, 32)
    large = torch.randn(8, 3, 64, 64)
    target = torch.randint(0, 10, (8,))

    cnn = SmallCNN()
    run("0. SmallCNN on the 32x32 images it was built for", lambda: cnn(small))
    run("1. the same SmallCNN on 64x64 images", lambda: cnn(large))

    head18 = nn.Linear(512, 10)          # head for a 512-feature backbone (ResNet-18 style)
    feats50 = torch.randn(8, 2048)       # pooled features of a 2048-feature backbone (ResNet-50 style)
    run("2. head for a 512-feature backbone, 2048 features", lambda: head18(feats50))

    hidden_base = torch.randn(4, 16, 768)  # (batch, tokens, hidden) from a base-size encoder
    head_large = nn.Linear(1024, 2)        # built from the large model's hidden_size
    run("3. token head sized for hidden 1024, hidden states of 768", lambda: head_large(hidden_base))

    # The message only reports folded 2-D operands; bias, dtype and autocast do not change it.
    x3d = torch.randn(4, 7, 768)
    head512 = nn.Linear(512, 10)
    run("3a. (4, 7, 768) into Linear(512, 10): leading dims folded into rows", lambda: head512(x3d))
    run("3b. a 1-D input of 768", lambda: head512(torch.randn(768)))
    run("3c. the same without bias", lambda: nn.Linear(512, 10, bias=False)(x3d))
    for dtype in (torch.float64, torch.float16, torch.bfloat16):
        run(f"3d. the same in {dtype}",
            lambda dtype=dtype: nn.Linear(512, 10, dtype=dtype)(x3d.to(dtype)))

    def under_autocast():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return head512(x3d)
    run("3e. the same under CPU autocast (bfloat16)", under_autocast)

    run("4a. torch.flatten(x) without start_dim", lambda: FlattenAll()(small))
    view_model = ViewMinusOne()
    run("4b. view(-1, in_features) on 64x64 images: the Linear passes", lambda: view_model(large))
    run("4c. ... and the mismatch reappears in the loss",
        lambda: F.cross_entropy(view_model(large), target))

    w = torch.randn(5, 6)
    run("5a. matmul (2, 3, 4) @ (5, 6)", lambda: torch.randn(2, 3, 4) @ w)
    q, k = torch.randn(2, 4, 16), torch.randn(2, 4, 8)
    run("5b. batched q @ k^T with head sizes 16 and 8", lambda: q @ k.transpose(-2, -1))

    compiled = torch.compile(SmallCNN(), backend="eager")
    run("6a. torch.compile(backend='eager') on 64x64 images", lambda: compiled(large))
    meta_head = nn.Linear(512, 10, device="meta")
    run("6b. a head on the meta device", lambda: meta_head(torch.empty(8, 2048, device="meta")))

    handles = check_linear_inputs(cnn)
    run("7. confirm: forward pre-hooks on every Linear, 64x64 images", lambda: cnn(large))
    for h in handles:
        h.remove()

    lazy = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.LazyLinear(10))
    run("8a. fix: LazyLinear infers in_features on the first batch (64x64)", lambda: lazy(large))
    print(f"    after the first forward: {lazy[-1]}", flush=True)
    run("8a'. the same LazyLinear later given 32x32 images", lambda: lazy(small))

    feats = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
    with torch.no_grad():
        n_flat = feats(torch.zeros(1, 3, 64, 64)).flatten(1).shape[1]
    print(f"    flattened size for 64x64 computed with a dummy forward: {n_flat}", flush=True)
    sized = nn.Sequential(feats, nn.Flatten(), nn.Linear(n_flat, 10))
    run("8b. fix: Linear sized from a dummy forward", lambda: sized(large))

    pooled = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((4, 4)),
                           nn.Flatten(), nn.Linear(16 * 4 * 4, 10))
    run("8c. fix: AdaptiveAvgPool2d, 32x32 images", lambda: pooled(small))
    run("8c. fix: AdaptiveAvgPool2d, 64x64 images", lambda: pooled(large))

    hidden_size = hidden_base.shape[-1]  # in real code: encoder.config.hidden_size
    run("8d. fix: head sized from the encoder's hidden size", lambda: nn.Linear(hidden_size, 2)(hidden_base))
    run("8e. fix: the 2048-feature backbone gets a 2048-input head", lambda: nn.Linear(2048, 10)(feats50))


if __name__ == "__main__":
    main()
