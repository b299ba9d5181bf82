"""TRL's ZeRO-3 hook helper called with the bare Transformers model instead of the DeepSpeed engine.

Needs transformers and trl next to PyTorch (checked with torch 2.13.0, transformers 5.25.0 and
trl 1.16.0); runs on the CPU, one process, in well under a minute. No DeepSpeed engine is built:
the failing line runs before anything DeepSpeed-specific is touched.

The installed TRL carries the `hasattr(model, "optimizer")` guard added in commit cf97133d (first
released in 0.15.0). The main-branch commits fecaa991 .. 7134a1e7 had the same `remove_hooks` body
without those two guard lines. This script builds that unguarded variant at run time from the
installed source (it drops the guard and nothing else), writes it to a temporary module so that the
traceback shows the failing source line, and calls both variants on a tiny bare `Qwen2ForCausalLM`
(what GRPO handed over at the affected commits): the guarded helper returns without doing anything;
the unguarded one raises "AttributeError: 'Qwen2ForCausalLM' object has no attribute 'optimizer'".
"""
import importlib.util
import inspect
import os
import shutil
import sys
import tempfile
import traceback
import warnings

warnings.simplefilter("ignore")
import torch  # noqa: E402
import transformers  # noqa: E402
import trl  # noqa: E402
from transformers import Qwen2Config, Qwen2ForCausalLM  # noqa: E402
from trl.models import utils as trl_utils  # noqa: E402

print(f"torch {torch.__version__}, transformers {transformers.__version__}, trl {trl.__version__}", flush=True)

GUARD = 'if not hasattr(model, "optimizer")'
guarded_src = inspect.getsource(trl_utils.remove_hooks)
lines = guarded_src.splitlines(keepends=True)
cut = [i for i, line in enumerate(lines) if GUARD in line]
if len(cut) != 1 or lines[cut[0] + 1].strip() != "return":
    sys.exit(f"trl {trl.__version__}: remove_hooks does not have the expected guard; nothing to compare")
unguarded_src = "".join(lines[: cut[0]] + lines[cut[0] + 2 :])
module_path = os.path.join(tempfile.mkdtemp(), "trl_remove_hooks_unguarded.py")
with open(module_path, "w") as f:
    f.write("from trl.models.utils import iter_params\n\n\n" + unguarded_src)
spec = importlib.util.spec_from_file_location("trl_remove_hooks_unguarded", module_path)
unguarded = importlib.util.module_from_spec(spec)
spec.loader.exec_module(unguarded)


def tiny_qwen2():
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32)
    return Qwen2ForCausalLM(config)


def attempt(title, call):
    sys.stdout.flush()
    try:
        print(f"--- {title}: ok, returned {call()!r}", flush=True)
    except (AttributeError, RuntimeError, ValueError, AssertionError):
        print(f"--- {title}: raised", flush=True)
        traceback.print_exc()
        sys.stderr.flush()


bare = tiny_qwen2()
print(f"bare model: {type(bare).__name__}, hasattr(model, 'optimizer') = {hasattr(bare, 'optimizer')}", flush=True)
attempt("guarded remove_hooks(bare model)", lambda: trl_utils.remove_hooks(bare))
attempt("unguarded remove_hooks(bare model)", lambda: unguarded.remove_hooks(bare))
shutil.rmtree(os.path.dirname(module_path))  # the temporary module was only needed for the traceback

