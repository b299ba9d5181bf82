"""Reproduce mergekit's "Tensor ... required but not present in model ..." error.

Needs: torch, transformers, safetensors, pyyaml and mergekit (checked with the
PyPI release 0.1.5; 0.0.5 to 0.1.4 print the same wording from
mergekit/io/tasks.py). It ran here with torch 2.13.0+cpu and transformers 5.25.

Two cases on tiny random 2-layer Llama checkpoints saved under /tmp:
1. a linear merge where one checkpoint had model.norm.weight deleted from its
   safetensors file (the architecture definition requires it);
2. a passthrough slice with layer_range [0, 4] on a 2-layer model (mergekit
   asks for model.layers.2.* which the file does not have).
With mergekit up to v0.0.3.2 the same cases end in `RuntimeError: No rule to
produce <model>:<tensor>` instead. CPU only, a few seconds.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import torch
from safetensors.torch import load_file, save_file
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


def make_model(name, drop=(), seed=0):
    """Save a tiny random 2-layer Llama checkpoint (safetensors), optionally without some tensors."""
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=128, hidden_size=64, intermediate_size=128,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
        max_position_embeddings=64, tie_word_embeddings=False,
    )
    path = os.path.join(ROOT, name)
    LlamaForCausalLM(cfg).save_pretrained(path, safe_serialization=True)
    if drop:
        f = os.path.join(path, "model.safetensors")
        state = load_file(f)
        for key in drop:
            state.pop(key)
        save_file(state, f, metadata={"format": "pt"})
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
        c = make_model("tiny-no-norm", drop=["model.norm.weight"], seed=2)
        run_case("linear-missing-norm", f"""
            models:
              - model: {a}
                parameters: {{weight: 0.5}}
              - model: {c}
                parameters: {{weight: 0.5}}
            merge_method: linear
            dtype: float32
        """)
        run_case("passthrough-0-4", f"""
            slices:
              - sources:
                  - model: {a}
                    layer_range: [0, 4]
            merge_method: passthrough
            dtype: float32
        """)
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
