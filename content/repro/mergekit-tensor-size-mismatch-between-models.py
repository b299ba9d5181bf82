"""Reproduce mergekit's size-mismatch messages when models of different sizes are merged.

Needs: torch, transformers, safetensors, pyyaml and mergekit. The wording
depends on the release:
- up to 0.1.4, the linear method raises `RuntimeError: Tensor size mismatch for
  <name>, sizes: [torch.Size([...]), ...]` (merge_methods/linear.py) and the
  task-arithmetic family (task_arithmetic, ties, dare_*, ...) only logs
  `skipping <model>:<name> due to size mismatch` and finishes;
- 0.1.5 checks every method's inputs and raises `ValueError: Tensor size
  mismatch for <name>: [(...), (...)].` (merge_methods/base.py), with a hint
  about vocabulary axes for embedding tensors.
It ran here with the PyPI wheel 0.1.5 and with the v0.0.3.2 source tree on
PYTHONPATH (`git archive v0.0.3.2` of arcee-ai/mergekit), torch 2.13.0+cpu,
transformers 5.25.

Tiny random 2-layer Llama checkpoints saved under /tmp: hidden size 64 vs 128
(linear and ties), and the same hidden size with MLP widths 128 vs 256
(linear). CPU only, a few seconds.
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


def make_model(name, hidden=64, intermediate=None, seed=0):
    """Save a tiny random 2-layer Llama checkpoint (safetensors) of the given widths."""
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=128, hidden_size=hidden, intermediate_size=intermediate or 2 * hidden,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
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
        wide = make_model("tiny-wide", hidden=128, seed=3)
        fat = make_model("tiny-wide-mlp", intermediate=256, seed=5)
        run_case("linear-hidden-64-vs-128", f"""
            models:
              - model: {a}
                parameters: {{weight: 0.5}}
              - model: {wide}
                parameters: {{weight: 0.5}}
            merge_method: linear
            dtype: float32
        """)
        run_case("linear-mlp-128-vs-256", f"""
            models:
              - model: {a}
                parameters: {{weight: 0.5}}
              - model: {fat}
                parameters: {{weight: 0.5}}
            merge_method: linear
            dtype: float32
        """)
        run_case("ties-hidden-64-vs-128", f"""
            models:
              - model: {b}
                parameters: {{weight: 0.5, density: 0.5}}
              - model: {wide}
                parameters: {{weight: 0.5, density: 0.5}}
            merge_method: ties
            base_model: {a}
            dtype: float32
        """)
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
