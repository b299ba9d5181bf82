"""Reproduce a model whose forward() rejects the `logits_to_keep` keyword that TRL passes.

Needs `trl`, `transformers`, `accelerate` and `datasets` next to torch. Nothing is
downloaded at run time: the model is a one-layer GPT-2 built from a config and the
tokenizer a word-level `tokenizers` object built in memory. Runs on the CPU in a
few seconds. Checked with two stacks:

* TRL 1.16.0 + transformers 5.25.0 (the torch environment itself): GRPO no longer
  passes `logits_to_keep` (it scores completions through its fused LM head), so
  case 1 trains; cases 2 and 3 replay, on a model class without the keyword, the
  exact calls TRL 0.15.0-0.19.1 and 0.14.0 make, and case 4 shows the signature
  check that TRL 0.20.0 and later run before passing the keyword.
* TRL 0.15.2 + transformers 4.46.3 (a scratch venv whose site-packages has a .pth
  line pointing at the torch environment; `pip install --no-deps trl==0.15.2
  transformers==4.46.3 'tokenizers<0.21' 'huggingface_hub<1.0' datasets==3.2.0`
  plus their small pure-Python dependencies): GPT2LMHeadModel.forward of 4.46.3
  has neither `logits_to_keep` nor **kwargs, so case 1, a real GRPOTrainer run,
  stops at its first step with the TypeError.

Cases:
1. GRPOTrainer on a tiny GPT-2, one step.
2. The call of TRL 0.15.0-0.19.1 `_get_per_token_logps`:
   model(input_ids=..., attention_mask=..., logits_to_keep=n + 1).
3. The call of TRL 0.14.0 GRPO: model(input_ids, num_logits_to_keep=n + 1).
4. The check of TRL 0.20.0 and later: "logits_to_keep" in
   inspect.signature(model.forward).parameters, and the fix for a custom model
   (accept the keyword and slice the hidden states before the LM head).
"""
import inspect
import os
import shutil
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
scratch = tempfile.mkdtemp(prefix="grpo-ltk-")
os.environ["HF_HOME"] = os.path.join(scratch, "hf-home")
os.environ["HF_DATASETS_CACHE"] = os.path.join(scratch, "hf-cache")
warnings.simplefilter("ignore")

import datasets  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
import trl  # noqa: E402
from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402
from transformers.modeling_outputs import CausalLMOutputWithCrossAttentions  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

datasets.disable_progress_bars()
transformers.logging.set_verbosity_error()
print(f"trl {trl.__version__}, transformers {transformers.__version__}, datasets {datasets.__version__}, "
      f"torch {torch.__version__}, python {sys.version.split()[0]}", flush=True)

WORDS = "<pad> <eos> <unk> the cat sat on a mat what is two plus four hello answer".split()
backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
tokenizer.padding_side = "left"
CONFIG = GPT2Config(vocab_size=len(WORDS), n_positions=64, n_embd=16, n_layer=1, n_head=2,
                    bos_token_id=1, eos_token_id=1, pad_token_id=0)


def tiny_gpt2():
    torch.manual_seed(0)
    return GPT2LMHeadModel(CONFIG)


class LegacyLM(torch.nn.Module):
    """A custom causal LM written before `logits_to_keep` existed: no such parameter, no **kwargs."""

    def __init__(self):
        super().__init__()
        self.inner = tiny_gpt2()

    def forward(self, input_ids=None, attention_mask=None, labels=None):
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, labels=labels)


class FixedLM(LegacyLM):
    """The fix for a custom model: accept the keyword and keep only the last n positions."""

    def forward(self, input_ids=None, attention_mask=None, labels=None, logits_to_keep=0):
        hidden = self.inner.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        if logits_to_keep:
            hidden = hidden[:, -logits_to_keep:, :]
        return CausalLMOutputWithCrossAttentions(logits=self.inner.lm_head(hidden))


def reward_len(completions, **kwargs):
    return [float(len(c)) for c in completions]


def show(exc_lines=-2):
    traceback.print_exc(limit=exc_lines, file=sys.stdout)
    sys.stdout.flush()


print("\n=== 1. GRPOTrainer on a tiny GPT-2 (one step)", flush=True)
print("GPT2LMHeadModel.forward accepts logits_to_keep:",
      "logits_to_keep" in inspect.signature(GPT2LMHeadModel.forward).parameters, flush=True)
args = dict(output_dir=os.path.join(scratch, "out"), max_steps=1, per_device_train_batch_size=2,
            num_generations=2, max_completion_length=4, report_to=[], use_cpu=True, logging_steps=1)
if "max_prompt_length" in GRPOConfig.__dataclass_fields__:  # a field up to the 0.2x releases, gone in 1.16.0
    args["max_prompt_length"] = 8
try:
    trainer = GRPOTrainer(model=tiny_gpt2(), reward_funcs=reward_len, args=GRPOConfig(**args),
                          train_dataset=Dataset.from_dict({"prompt": ["the cat sat", "what is two plus two"] * 2}),
                          processing_class=tokenizer)
    trainer.train()
    print("trained one step: ok", flush=True)
except Exception:
    show(-3)

input_ids = torch.tensor([[3, 4, 5, 6, 7, 8]])
attention_mask = torch.ones_like(input_ids)
n = 3  # completion length

print("\n=== 2. the call of TRL 0.15.0-0.19.1 on a model without the keyword", flush=True)
try:
    LegacyLM()(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=n + 1)
except TypeError:
    show()

print("\n=== 3. the call of TRL 0.14.0 on a model without the keyword", flush=True)
try:
    LegacyLM()(input_ids, num_logits_to_keep=n + 1)
except TypeError:
    show()

print("\n=== 4. the check of TRL 0.20.0 and later, and the fix for a custom model", flush=True)
for model in (LegacyLM(), FixedLM()):
    keys = inspect.signature(model.forward).parameters.keys()
    kwargs = {"logits_to_keep": n + 1} if "logits_to_keep" in keys else {}
    logits = model(input_ids=input_ids, attention_mask=attention_mask, **kwargs).logits
    logits = logits[:, :-1, :][:, -n:, :]  # TRL drops the last position and keeps n, whatever the model did
    print(f"{type(model).__name__}: passes logits_to_keep={'logits_to_keep' in keys}, "
          f"logits {tuple(logits.shape)}", flush=True)
shutil.rmtree(scratch, ignore_errors=True)
