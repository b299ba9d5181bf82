"""Fused-QKV LoRA with a grouped conv1d on multi-query / grouped-query shapes.

Runs on the CPU in a few seconds with any PyTorch. The small class below recomputes the
shapes that lit-gpt's LoRAQKVLinear used before commit ca21fc36 (2023-08-14): lora_B gets
n_embd rows for the query plus n_embd // (n_head // n_query_groups) rows for key and for
value, and the forward pass multiplies lora_A and lora_B with one conv1d whose groups equal
the number of enabled projections. Model sizes are lit-gpt's configs (falcon-7b: n_embd
4544, n_head 71, one query group; falcon-40b: 8192, 128, 8; Llama-2-70b: 8192, 64, 8).

Cases:
1. falcon-7b, LoRA on query, key and value: 4672 output rows do not split into 3 groups.
2. Llama-2-70b, the same: 10240 rows, the same error.
3. falcon-7b, query and value only (the script default then): 4608 rows split into 2, so
   nothing is raised although the two groups are not the query and value blocks.
4. The later layer: split lora_B by the real q/k/v sizes and run one conv1d per block.
"""
import sys
import traceback

import torch
import torch.nn.functional as F

print(f"torch {torch.__version__}", flush=True)


class OldQKVLoRA:
    def __init__(self, n_embd, n_head, n_query_groups, r, enable_lora):
        self.enable_lora = enable_lora
        self.kv_embd_size = n_embd // (n_head // n_query_groups)
        q, k, v = enable_lora
        self.qkv_shapes = [s for s in (n_embd * q, self.kv_embd_size * k, self.kv_embd_size * v) if s]
        self.lora_A = torch.randn(r * sum(enable_lora), n_embd) * 0.01
        self.lora_B = torch.randn(sum(self.qkv_shapes), r) * 0.01

    def forward(self, x):
        after_A = F.linear(x, self.lora_A)
        after_B = F.conv1d(
            after_A.transpose(-2, -1),
            self.lora_B.unsqueeze(-1),
            groups=sum(self.enable_lora),
        ).transpose(-2, -1)
        return after_B

    def forward_split(self, x):
        after_A = F.linear(x, self.lora_A).transpose(-2, -1)
        parts_A = after_A.chunk(sum(self.enable_lora), dim=1)
        parts_B = self.lora_B.unsqueeze(-1).split(self.qkv_shapes)
        return torch.cat([F.conv1d(a, b) for a, b in zip(parts_A, parts_B)], dim=1).transpose(-2, -1)


def run(title, n_embd, n_head, n_query_groups, enable_lora, split=False):
    layer = OldQKVLoRA(n_embd, n_head, n_query_groups, r=8, enable_lora=enable_lora)
    x = torch.randn(1, 4, n_embd)
    sys.stdout.flush()
    try:
        out = layer.forward_split(x) if split else layer.forward(x)
        print(f"--- {title}: ok, LoRA output {tuple(out.shape)}, q/k/v blocks {layer.qkv_shapes}", flush=True)
    except RuntimeError:
        traceback.print_exc()
        sys.stderr.flush()
        print(f"--- {title}: raised", flush=True)


run("1. falcon-7b, q+k+v", 4544, 71, 1, (True, True, True))
run("2. Llama-2-70b, q+k+v", 8192, 64, 8, (True, True, True))
run("3. falcon-7b, q+v (no error, wrong split)", 4544, 71, 1, (True, False, True))
run("4. falcon-7b, q+k+v, split by block sizes", 4544, 71, 1, (True, True, True), split=True)
