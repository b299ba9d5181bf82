"""Reproduce mergekit's error for a layer_range past the model's last layer.

Needs: torch, transformers, safetensors, pyyaml and mergekit importable by this
Python. The message this entry is about, `RuntimeError: No rule to produce
<model>:model.layers.N...`, is printed by mergekit up to v0.0.3.2 (the
planner in mergekit/graph.py). PyPI has no usable wheel of that line (0.0.2 and
0.0.2.1 lack their subpackages), so put the v0.0.3.2 source tree on the path,
e.g. `git archive v0.0.3.2 | tar -x -C /tmp/mk-0032` in a clone of
arcee-ai/mergekit and `PYTHONPATH=/tmp/mk-0032` (it ran here with torch
2.13.0+cpu, transformers 5.25, pydantic 2.14, accelerate 1.16, peft 0.21).
With mergekit 0.0.5 to 0.1.5 installed instead, the same config ends in
`RuntimeError: Tensor model.layers.2.input_layernorm.weight required but not
present in model <path>` (entry mergekit-required-tensor-missing-from-model).

Two tiny random 2-layer Llama checkpoints are saved under /tmp; a passthrough
slice asks for layer_range [0, 4] of one of them, and a linear merge of
layer_range [0, 3] asks for layer 2 of both. A third case merges a 3-layer
and a 2-layer model with a plain `models:` list; every release from v0.0.3.1
to 0.1.5 stops it in the planner with `RuntimeError: All inputs to a slice
must contain the same number of layers`. CPU only, a few seconds.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import torch
from transformers import LlamaConfig, LlamaForCausalLM

ROOT = tempfile.mkdtemp(prefix="mk-repro-")

# Child process: the merge exactly as mergekit-yaml runs it, minus the CLI
# wrapper (the console script of some 0.0.x wheels is broken).
DRIVER = (
    "import sys, yaml\n"
    "from mergekit.config import MergeConfiguration\n"
    "from mergekit.merge import MergeOptions, run_merge\n"
    "cfg = MergeConfiguration.model_validate(yaml.safe_load(open(sys.argv[1])))\n"
    "run_merge(cfg, sys.argv[2], options=MergeOptions(copy_tokenizer=False))\n"
)


def make_model(name, layers=2, seed=0):
    """Save a tiny random Llama checkpoint (safetensors) with the given number of layers."""
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=128, hidden_size=64, intermediate_size=128,
        num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=4,
        max_position_embeddings=64, tie_word_embeddings=False,
    )
    path = os.path.join(ROOT, name)
    LlamaForCausalLM(cfg).save_pretrained(path, safe_serialization=True)
    return path


def run_case(name, config_yaml):
    cfg = os.path.join(ROOT, name + ".yaml")
    with open(cfg, "w") as fh:
        fh.write(textwrap.dedent(config_yaml))
    print(f"===== {name}", flush=True)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, cfg, os.path.join(ROOT, "out-" + name)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    lines = [l for l in (proc.stdout + proc.stderr).splitlines()
             if "Error" in l or "mismatch" in l or "Traceback" in l or 'File "' in l]
    print("\n".join(lines[-12:]))
    print(f"exit status {proc.returncode}", flush=True)


if __name__ == "__main__":
    try:
        a = make_model("tiny-a", seed=0)
        b = make_model("tiny-b", seed=1)
        deep = make_model("tiny-3layer", layers=3, seed=4)
        run_case("passthrough-0-4", f"""
            slices:
              - sources:
                  - model: {a}
                    layer_range: [0, 4]
            merge_method: passthrough
            dtype: float32
        """)
        run_case("linear-slices-0-3", f"""
            slices:
              - sources:
                  - model: {a}
                    layer_range: [0, 3]
                    parameters: {{weight: 0.5}}
                  - model: {b}
                    layer_range: [0, 3]
                    parameters: {{weight: 0.5}}
            merge_method: linear
            dtype: float32
        """)
        run_case("linear-3-vs-2-layers", f"""
            models:
              - model: {deep}
                parameters: {{weight: 0.5}}
              - model: {a}
                parameters: {{weight: 0.5}}
            merge_method: linear
            base_model: {deep}
            dtype: float32
        """)
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
