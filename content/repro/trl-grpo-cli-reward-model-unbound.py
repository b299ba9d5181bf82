"""Reproduce TRL's GRPO command-line script failing when no reward model path is given.

Needs `trl`, `transformers`, `accelerate` and `datasets` next to torch. Nothing is
downloaded: a one-layer GPT-2, a GPT-2 sequence classifier (the reward model), a
word-level tokenizer and a four-row prompt dataset are written to a temporary
directory, and TRL's own `trl/scripts/grpo.py` (the script `trl grpo` launches through
`accelerate launch`) is run on them in this process: its parser reads the
arguments and its `main()` is called, as its `__main__` guard does. Runs on the
CPU in well under a minute. Checked with two stacks:

* TRL 1.16.0 + transformers 5.25.0 (the torch environment itself): the script
  collects a `reward_funcs` list, so case 1 and case 3 build the trainer and
  train one step, case 2 (no reward flag at all) stops in GRPOTrainer with
  "No reward source provided", and case 4 with the script's "Could not load
  reward function" ValueError.
* TRL 0.19.1 + transformers 4.53.3 (a scratch venv whose site-packages has a .pth
  line pointing at the torch environment; `pip install --no-deps trl==0.19.1
  transformers==4.53.3 'tokenizers<0.22' huggingface_hub==0.34.4 datasets==3.6.0
  accelerate==1.8.1 fsspec==2025.3.0 kernels==0.4.4` plus requests and its
  dependencies): cases 1 and 2 stop with the UnboundLocalError for
  `reward_model` after the model, tokenizer and dataset are loaded; case 3 trains;
  case 4 prints the same "Could not load reward function" ValueError.

Cases:
1. --reward_funcs grpo_cli_rewards.length_reward only (a module written next to the data).
2. Neither --reward_model_name_or_path nor --reward_funcs.
3. --reward_model_name_or_path <local reward model> only.
4. --reward_funcs length_reward: a name with no dot that the script's registry lacks.
"""
import json
import os
import shutil
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
scratch = tempfile.mkdtemp(prefix="grpo-cli-")
os.environ["HF_HOME"] = os.path.join(scratch, "hf-home")
os.environ["HF_DATASETS_CACHE"] = os.path.join(scratch, "hf-cache")
os.environ["WANDB_DISABLED"] = "true"
warnings.simplefilter("ignore")

import torch  # noqa: E402
import transformers  # noqa: E402
import trl  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import GPT2Config, GPT2ForSequenceClassification, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402

transformers.logging.set_verbosity_error()
print(f"trl {trl.__version__}, transformers {transformers.__version__}, torch {torch.__version__}, "
      f"python {sys.version.split()[0]}", flush=True)

WORDS = "<pad> <eos> <unk> the cat sat on a mat what is two plus four hello answer <think> </think>".split()
backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
tokenizer.padding_side = "left"
config = GPT2Config(vocab_size=len(WORDS), n_positions=64, n_embd=16, n_layer=1, n_head=2,
                    bos_token_id=1, eos_token_id=1, pad_token_id=0)

policy_dir = os.path.join(scratch, "tiny-policy")
reward_dir = os.path.join(scratch, "tiny-reward")
data_dir = os.path.join(scratch, "prompts")
torch.manual_seed(0)
GPT2LMHeadModel(config).save_pretrained(policy_dir)
tokenizer.save_pretrained(policy_dir)
reward_config = GPT2Config(**config.to_dict())
reward_config.num_labels = 1
GPT2ForSequenceClassification(reward_config).save_pretrained(reward_dir)
tokenizer.save_pretrained(reward_dir)
os.makedirs(data_dir)
with open(os.path.join(data_dir, "train.jsonl"), "w") as f:
    for p in ["the cat sat", "what is two plus two", "hello", "a mat"]:
        f.write(json.dumps({"prompt": p}) + "\n")
# a reward function the script imports from its dotted path (TRL 0.18.0 and later)
with open(os.path.join(scratch, "grpo_cli_rewards.py"), "w") as f:
    f.write("def length_reward(completions, **kwargs):\n    return [float(len(c)) for c in completions]\n")
sys.path.insert(0, scratch)

base = ["--model_name_or_path", policy_dir, "--dataset_name", data_dir,
        "--output_dir", os.path.join(scratch, "out"), "--max_steps", "1",
        "--per_device_train_batch_size", "2", "--num_generations", "2",
        "--max_completion_length", "4", "--report_to", "none", "--use_cpu", "true",
        "--save_strategy", "no", "--logging_steps", "1"]

from trl.scripts import grpo as grpo_script  # noqa: E402


def run(title, extra):
    """What `python trl/scripts/grpo.py <args>` does under its __main__ guard, in this process."""
    print(f"\n=== {title}", flush=True)
    print("args:", " ".join(extra) or "(no reward flag)", flush=True)
    parsed = grpo_script.make_parser().parse_args_and_config(args=base + extra)
    try:
        grpo_script.main(*parsed)
        print("main() returned: trainer built, one step trained", flush=True)
    except Exception:
        tb = traceback.format_exc().rstrip().splitlines()
        frames = [i for i, ln in enumerate(tb) if ln.lstrip().startswith("File ")]
        for ln in tb[frames[-1]:] if frames else tb[-1:]:
            print(ln, flush=True)


run("1. --reward_funcs only", ["--reward_funcs", "grpo_cli_rewards.length_reward"])
run("2. neither reward flag", [])
run("3. --reward_model_name_or_path only", ["--reward_model_name_or_path", reward_dir])
run("4. --reward_funcs with a bare name that is not in the registry", ["--reward_funcs", "length_reward"])


shutil.rmtree(scratch, ignore_errors=True)
