"""Megatron-Core's TransformerConfig refuses MoE router combinations at construction time.

Needs megatron-core next to PyTorch (no GPU, no process group, no Transformer Engine).
Run with the megatron_core 0.11.0, 0.12.3, 0.13.1, 0.14.0 and 0.16.1 wheels from PyPI
(Python 3.11.7, torch 2.13.0+cpu). The config object alone is built, with a two-layer
model and eight experts, and each router setting below is tried on its own; the script
prints the exception line Python would end the traceback with, e.g.

    ValueError: Please use --moe-router-pre-softmax when topk is 1.
    AssertionError: num_moe_experts (8) should be divisible by moe_router_num_groups (3).

Settings a release does not know yet (the group fields before 0.11, routing-map padding
before 0.13) give a TypeError for the unknown keyword, which the script reports as
"not in this release". The FP8 dispatcher check is skipped: with fp8 set, the config
first asks for Transformer Engine's version, which a CPU-only install lacks. The last
case is the corrected combination of the entry's verify step, which is accepted.

The script exits 0.
"""
import warnings

warnings.simplefilter("ignore")

import megatron.core  # noqa: E402
from megatron.core.transformer.transformer_config import TransformerConfig  # noqa: E402

print(f"megatron-core {megatron.core.__version__}", flush=True)

BASE = dict(num_layers=2, hidden_size=64, num_attention_heads=4, num_moe_experts=8, add_bias_linear=False)

CASES = [
    ("expert bias with the default softmax score", dict(moe_router_enable_expert_bias=True)),
    ("top-1 softmax routing without pre-softmax", dict(moe_router_topk=1)),
    ("group top-k without a group count", dict(moe_router_group_topk=2)),
    ("3 groups for 8 experts", dict(moe_router_group_topk=2, moe_router_num_groups=3)),
    ("3 groups for 64 experts", dict(num_moe_experts=64, moe_router_group_topk=2, moe_router_num_groups=3)),
    ("4 selected groups of 2", dict(moe_router_group_topk=4, moe_router_num_groups=2)),
    ("2 selected groups of 2 (allowed)", dict(moe_router_group_topk=2, moe_router_num_groups=2)),
    ("old and new group fields together",
     dict(moe_router_group_topk=2, moe_router_num_groups=2, moe_router_topk_limited_devices=2)),
    ("capacity factor with sinkhorn",
     dict(moe_expert_capacity_factor=1.0, moe_router_load_balancing_type="sinkhorn",
          moe_token_dispatcher_type="alltoall")),
    ("routing-map padding without fp8", dict(moe_router_padding_for_fp8=True)),
    ("corrected aux-loss-free group-limited router",
     dict(num_moe_experts=64, moe_router_topk=6, moe_router_score_function="sigmoid",
          moe_router_enable_expert_bias=True, moe_router_num_groups=8, moe_router_group_topk=4)),
]

for name, router in CASES:
    print(f"--- {name}: {router}", flush=True)
    kwargs = dict(BASE, **router)
    try:
        TransformerConfig(**kwargs)
    except TypeError as err:
        if "unexpected keyword argument" not in str(err):
            raise
        print(f"not in this release ({err})", flush=True)
    except (ValueError, AssertionError) as err:
        print(f"{type(err).__name__}: {err}", flush=True)
    else:
        print("accepted", flush=True)
