"""Reproduce the shape checks of low-precision (MXFP8 and FP8) matmuls on CPU.

Case 1, MXFP8 training (needs torchao >= 0.17; checked with 0.18.0): two
Linear layers, the second one with out_features=16 like an MoE router gate
over 16 experts, are converted with torchao's emulated MXFP8 training
recipe. The forward pass only casts along in_features (64, a multiple of
the MX block of 32), so it runs; the backward pass casts grad_output along
out_features (16) and torchao's to_mx refuses:

    AssertionError: the last dimension of shape torch.Size([64, 16]) must be divisible by block_size 32

Skipping that layer (the filter_fn below) makes the same step pass.

Cases 2 and 3, FP8 torch._scaled_mm: the shape rules that the CUDA kernel
enforces are also written in PyTorch's meta function, which is what
torch.compile and FakeTensor run while tracing. Calling the op on "meta"
tensors runs exactly that check on a CPU-only machine:

    RuntimeError: Expected self.size(1) to be divisible by 16, but got self.size(1)=41
    RuntimeError: Expected both dimensions of mat2 to be divisible by 16 but got torch.Size([64, 40])

Padding the inner dimension to a multiple of 16 makes the check pass.

Case 4, the grouped GEMM of MoE layers (torch._grouped_mm in bf16, which
PyTorch 2.13.0 runs on CPU): every operand's leading stride must be a multiple of
16 bytes, so a contraction dimension of 4 bf16 values (8 bytes) is refused

    RuntimeError: strides should be multiple of 16 bytes

and the same GEMM with the dimension padded to 8 runs.

Observed with torch 2.13.0+cpu; the whole script takes a few seconds.
"""
import torch
import torch.nn as nn

F8 = torch.float8_e4m3fn


def report(label, fn):
    try:
        fn()
        print(f"{label}: ok")
    except Exception as e:  # print the message exactly as a log would show it
        print(f"{label}: failed")
        print(f"{type(e).__name__}: {e}")


def mxfp8_step(skip_small_layers):
    from torchao.prototype.moe_training.config import MXFP8TrainingOpConfig, MXFP8TrainingRecipe
    from torchao.quantization import quantize_

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64, bias=False), nn.Linear(64, 16, bias=False)).to(torch.bfloat16)

    def filter_fn(mod, fqn):
        if not isinstance(mod, nn.Linear):
            return False
        if skip_small_layers:  # MX blocks need every GEMM dimension to be a multiple of 32
            return mod.in_features % 32 == 0 and mod.out_features % 32 == 0
        return True

    config = MXFP8TrainingOpConfig.from_recipe(MXFP8TrainingRecipe.MXFP8_EMULATED_RCEIL)
    quantize_(model, config, filter_fn=filter_fn)
    x = torch.randn(64, 64, dtype=torch.bfloat16, requires_grad=True)
    model(x).float().sum().backward()  # forward passes; the cast of grad_output is what fails


def scaled_mm_on_meta(m, k, n):
    a = torch.empty(m, k, dtype=F8, device="meta")
    b = torch.empty(n, k, dtype=F8, device="meta").t()  # column-major, as _scaled_mm wants
    one = torch.ones((), dtype=torch.float32, device="meta")
    torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)


def grouped_mm(k):
    a = torch.randn(10, k, dtype=torch.bfloat16)  # two token groups, of 5 tokens each
    b = torch.randn(2, k, 8, dtype=torch.bfloat16)  # one weight per expert
    torch._grouped_mm(a, b, offs=torch.tensor([5, 10], dtype=torch.int32))


def main():
    print("torch", torch.__version__)
    try:
        import torchao
        print("torchao", torchao.__version__)
        report("case 1, MXFP8 training, router-sized layer converted", lambda: mxfp8_step(False))
        report("case 1, MXFP8 training, small layers skipped", lambda: mxfp8_step(True))
    except ImportError as e:
        print(f"case 1 skipped (torchao with MXFP8TrainingOpConfig not importable: {e})")
    report("case 2, _scaled_mm K=41", lambda: scaled_mm_on_meta(16, 41, 32))
    report("case 3, _scaled_mm N=40", lambda: scaled_mm_on_meta(16, 64, 40))
    report("case 2 and 3 padded to multiples of 16", lambda: scaled_mm_on_meta(16, 48, 48))
    report("case 4, _grouped_mm K=4 (bf16)", lambda: grouped_mm(4))
    report("case 4 padded to K=8", lambda: grouped_mm(8))


if __name__ == "__main__":
    main()
