"""Reproduce the dtype-mismatch errors of mixed fp16/bf16/fp32 models on CPU.

Seven common set-ups, each printing the message PyTorch raises:

1. model.half() but the inputs stay float32 (Linear with a bias -> addmm):
       mat1 and mat2 must have the same dtype, but got Float and Half
2. a module whose autocast is switched off receives bf16 activations while
   its own weights are float32:
       mat1 and mat2 must have the same dtype, but got BFloat16 and Float
3. a convolution converted to half, fed float32 images:
       Input type (float) and bias type (c10::Half) should be the same
   (without a bias: expected scalar type Float but found Half)
4. (last, uncaught) a LoRA-style adapter kept in float32 on top of a float16 base model; the
   bias-free adapter matmul goes through mm:
       expected m1 and m2 to have the same dtype, but got: c10::Half != float
   (the CUDA kernel words it "expected mat1 and mat2 to have the same dtype").
5. a Linear whose weight was cast to half but whose bias stayed float32:
       self and mat2 must have the same dtype, but got Float and Half
6. a LayerNorm cast to half (model.half()) fed float32 activations on CPU:
       mixed dtype (CPU): expect parameter to have scalar type of Float
7. a bf16 query vector scored against a float32 embedding matrix with `@`
   (matrix-vector product; PyTorch releases after 2.10):
       addmv input tensors must have the same dtype, but got BFloat16, Float, and BFloat16

Autocast makes the same float32 module accept bf16 inputs (shown at the end
of case 2), which is the usual fix for 1 and 2.
"""
import torch


class LoRALinear(torch.nn.Module):
    def __init__(self, base: torch.nn.Linear, r=4):
        super().__init__()
        self.base = base
        self.lora_A = torch.nn.Linear(base.in_features, r, bias=False)   # float32 by default
        self.lora_B = torch.nn.Linear(r, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


def attempt(label, fn):
    try:
        fn()
        print(f"{label}: ok", flush=True)
    except RuntimeError as e:
        print(f"{label}: RuntimeError: {e}", flush=True)


def main():
    torch.manual_seed(0)
    x32 = torch.randn(2, 16)

    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).half()
    attempt("1 half model, float input", lambda: model(x32))

    head = torch.nn.Linear(16, 4)                       # float32 head, e.g. a reward/value head
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = torch.nn.Linear(16, 16)(x32)                # bf16 activations under autocast
        with torch.autocast("cpu", enabled=False):
            attempt("2 autocast disabled in a custom module", lambda: head(h))
        print("2 same head with autocast on ->", head(h).dtype, flush=True)

    conv = torch.nn.Conv2d(3, 8, 3).half()
    attempt("3 half conv, float image", lambda: conv(torch.randn(1, 3, 8, 8)))
    conv_nb = torch.nn.Conv2d(3, 8, 3, bias=False).half()
    attempt("3b bias-free half conv, float image", lambda: conv_nb(torch.randn(1, 3, 8, 8)))

    lin = torch.nn.Linear(16, 16).half()
    lin.bias.data = lin.bias.data.float()               # bias left in float32
    attempt("5 half weight, float bias", lambda: lin(x32.half()))

    norm = torch.nn.LayerNorm(16).half()                # norm cast with the model
    attempt("6 half LayerNorm, float activations", lambda: norm(x32))

    table = torch.randn(8, 16)                          # float32 cached embeddings
    query = torch.randn(16, dtype=torch.bfloat16)       # bf16 model output
    attempt("7 float matrix @ bf16 vector", lambda: table @ query)

    base = torch.nn.Linear(16, 16, bias=False).half()
    lora = LoRALinear(base)                             # adapter left in float32
    lora(x32.half())


if __name__ == "__main__":
    main()
