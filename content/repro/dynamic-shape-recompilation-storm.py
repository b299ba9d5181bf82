"""Reproduce a recompilation storm caused by changing input shapes.

A compiled model is fed batches whose sequence length changes every step
(unpadded variable-length text). The first new length triggers a recompile
that marks the dimension dynamic... but here the model is compiled with
dynamic=False (as many training scripts do to get static-shape kernels), so
every new length is a new static graph. TORCH_LOGS="recompiles" (set here
via torch._logging.set_logs) prints each recompile and its guard failure:

    Recompiling function forward in .../dynamic-shape-recompilation-storm.py:NN
        triggered by the following guard failure(s):
        - 0/0: tensor 'x' size mismatch at index 1. expected 5, actual 6

After 8 recompiles Dynamo gives up on the frame:
    torch._dynamo hit config.recompile_limit (8)
backend="eager" keeps it fast and free of a C++ compiler.
"""
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x):
        return self.proj(x).mean(dim=1)


def main():
    torch._logging.set_logs(recompiles=True)
    model = torch.compile(Model(), backend="eager", dynamic=False)
    for step, seq_len in enumerate(range(5, 17)):
        out = model(torch.randn(4, seq_len, 16))
        print(f"step {step}: seq_len={seq_len} out={tuple(out.shape)}", flush=True)


if __name__ == "__main__":
    main()
