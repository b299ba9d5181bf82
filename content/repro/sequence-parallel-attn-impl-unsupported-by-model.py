"""Reproduce the sequence-parallel attention-implementation checks of DeepSpeed,
Accelerate and Transformers on a CPU.

Needs deepspeed, transformers and accelerate next to torch (checked with
DeepSpeed 0.19.4, Transformers 5.25.0 and Accelerate 1.16.0). Nothing is
downloaded: the model is a one-layer Llama built from a config.

Cases:
1. Accelerate's DeepSpeedSequenceParallelConfig refuses sp_attn_implementation
   'eager', 'flex_attention' and a name that is neither built in nor a hub
   flash-attention kernel ('flash_attn', the ms-swift / LLaMA-Factory spelling).
2. DeepSpeed's UlyssesSPAttentionHF.register_with_transformers (ALST) with a
   model loaded with eager attention and core_attn_implementation='eager':
   refused because eager needs a 4D mask.
3. The same model with core_attn_implementation='sdpa': refused because the
   model config still says 'eager' (DeepSpeed 0.19.0 and later).
4. The fix: model and core_attn_implementation both 'sdpa' pass the checks.
5. Transformers Trainer with torch context parallelism on a model that is not
   on SDPA.

Shortcuts, so that the script runs in one process without a GPU:
DeepSpeed's sequence-parallel group setup (parallel_state_sp.initialize_sequence_parallel,
which needs a world of sequence_parallel_size ranks) is replaced by a no-op,
since the checks come right after it; case 4 therefore stops at the first use of
the group, after the checks. Case 5 calls the real Trainer method
_prepare_context_parallel_inputs with a stand-in whose accelerator reports
context parallelism enabled with the torch backend.
"""
import os
import types
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.simplefilter("ignore")

import deepspeed.runtime.sequence_parallel.parallel_state_sp as mpu  # noqa: E402

mpu.initialize_sequence_parallel = lambda sequence_parallel_size: None

import torch  # noqa: E402
from accelerate.utils import DeepSpeedSequenceParallelConfig  # noqa: E402
from deepspeed.runtime.sequence_parallel.ulysses_sp import UlyssesSPAttentionHF  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, Trainer  # noqa: E402

print("== 1. accelerate DeepSpeedSequenceParallelConfig(sp_attn_implementation=...)", flush=True)
for impl in ["eager", "flex_attention", "flash_attn", "sdpa"]:
    try:
        DeepSpeedSequenceParallelConfig(sp_attn_implementation=impl)
        print(f"{impl}: accepted", flush=True)
    except ValueError as e:
        print(f"ValueError: {e}", flush=True)


def tiny_model(attn):
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=4, num_key_value_heads=2)
    cfg._attn_implementation = attn
    return LlamaForCausalLM(cfg)


for n, (model_attn, core) in enumerate([("eager", "eager"), ("eager", "sdpa"), ("sdpa", "sdpa")], start=2):
    print(f"== {n}. UlyssesSPAttentionHF.register_with_transformers: model {model_attn}, "
          f"core_attn_implementation={core}", flush=True)
    try:
        UlyssesSPAttentionHF.register_with_transformers(model_name_or_path=tiny_model(model_attn),
                                                        core_attn_implementation=core,
                                                        sequence_parallel_size=2, micro_batch_size=1)
        print("registered", flush=True)
    except ValueError as e:
        print(f"ValueError: {e}", flush=True)
    except AssertionError as e:
        print(f"attention checks passed; stopped at the stubbed group setup ({e})", flush=True)

print("== 5. transformers Trainer with torch context parallelism, model on eager", flush=True)
stand_in = types.SimpleNamespace(accelerator=types.SimpleNamespace(
    parallelism_config=types.SimpleNamespace(cp_enabled=True, cp_backend="torch")))
try:
    Trainer._prepare_context_parallel_inputs(stand_in, tiny_model("eager"),
                                             {"input_ids": torch.ones(1, 8, dtype=torch.long)})
except ValueError as e:
    print(f"ValueError: {e}", flush=True)
