"""Reproduce GradScaler refusing fp16 gradients.

A small model is cast to float16 with .half(), so its parameters, and
therefore their .grad tensors, are float16. A dynamic loss scaler
(torch.amp.GradScaler, on CPU here; the CUDA scaler runs the same check)
scales the loss and backward() runs. When the scaler unscales the gradients
in scaler.step() (or an explicit scaler.unscale_() before gradient clipping),
it finds a float16 gradient and raises:

    ValueError: Attempting to unscale FP16 gradients.

The script first prints the dtypes of the trainable parameters and their
gradients, which is the quickest way to see the cause in a real job.
"""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).half()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cpu")
    x = torch.randn(8, 16).half()
    loss = model(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    dtypes = sorted({(str(p.dtype), str(p.grad.dtype)) for p in model.parameters() if p.grad is not None})
    print(f"trainable (param dtype, grad dtype): {dtypes}", flush=True)
    scaler.step(opt)  # unscales first and raises on the first float16 gradient


if __name__ == "__main__":
    main()
