"""Reproduce TRL's SFTTrainer given a dataset without the text column it reads.

Needs `trl`, `transformers`, `accelerate` and `datasets` next to torch: a
scratch virtual environment whose site-packages has a .pth line pointing at the
torch environment works (`pip install trl==1.16.0 transformers accelerate
datasets` there), or PYTHONPATH pointing at a folder that holds them. Nothing is
downloaded at run time: the model is a one-layer GPT-2 built from a config and
the tokenizer a word-level `tokenizers` object built in memory. Runs on the CPU
in a few seconds per case; checked with TRL 0.11.4, 0.12.2 and 1.16.0 (and
with 0.9.6 and 0.18.2 by the audit).

Cases:
1. Columns `question`/`answer`, nothing configured: TRL 0.12 and later read the
   default `dataset_text_field="text"` and stop with KeyError: 'text' in the
   tokenizing map, inside the SFTTrainer constructor (0.11.x refuses earlier
   with its "You need to provide either `dataset_text_field` or
   `formatting_func`" ValueError, and 0.9.x looks up the unset field and
   stops with KeyError: None).
2. `dataset_text_field` names a column the dataset does not have: KeyError
   with that name.
3. The same dataset as 1 with packing=True: the same KeyError (up to 0.14 the
   packer's generator fails inside `Dataset.from_generator`, which TRL turns
   into "Error occurred while packing the dataset"; 0.11 and older, with no
   field set, stop earlier with a ValueError asking for one).
4. A `text` column that holds integers: from TRL 0.17 the EOS step calls
   `.endswith` on it (AttributeError); older releases hand it to the tokenizer,
   which refuses it with "text input must be of type `str` ...".
5. A fix that names the wrong source column: datasets' rename_column raises
   "Original column name ... not in the dataset".
6-9. The fixes: rename_column to `text`, dataset_text_field set to the real
   column, a formatting_func, and the conversational `messages` format. Each
   trains one step (the rename alone is not enough on 0.11 and older, whose
   dataset_text_field has no default: that case ends in the same error as 1).
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
scratch = tempfile.mkdtemp(prefix="sft-text-")
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
from trl import SFTTrainer  # noqa: E402

try:
    from trl import SFTConfig
except ImportError:  # TRL 0.8.6 and older
    SFTConfig = None

datasets.disable_progress_bars()
transformers.logging.set_verbosity_error()
print(f"trl {trl.__version__}, transformers {transformers.__version__}, datasets {datasets.__version__}, "
      f"torch {torch.__version__}, python {sys.version.split()[0]}", flush=True)

WORDS = "<pad> <eos> <unk> the cat sat on a mat what is two plus four hello answer".split()
backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"


def tiny_model():
    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(vocab_size=len(WORDS), n_positions=64, n_embd=16, n_layer=1, n_head=2))


def config(**sft_options):
    base = dict(output_dir=os.path.join(scratch, "out"), max_steps=1, per_device_train_batch_size=2,
                report_to=[], use_cpu=True)
    if SFTConfig is None:
        return transformers.TrainingArguments(**base)
    return SFTConfig(**base, **sft_options)


def case(title, dataset, formatting_func=None, **sft_options):
    print(f"\n=== {title}", flush=True)
    kwargs = dict(model=tiny_model(), args=config(**sft_options), train_dataset=dataset)
    if formatting_func is not None:
        kwargs["formatting_func"] = formatting_func
    # TRL 0.11 and older call the tokenizer argument `tokenizer`
    name = "processing_class" if "processing_class" in inspect.signature(SFTTrainer.__init__).parameters else "tokenizer"
    kwargs[name] = tokenizer
    try:
        trainer = SFTTrainer(**kwargs)
        trainer.train()
        print("trained one step: ok", flush=True)
    except Exception:
        traceback.print_exc(limit=-3, file=sys.stdout)
        sys.stdout.flush()


qa = {"question": ["what is two plus two", "hello"], "answer": ["four", "hello"]}
content = {"content": ["the cat sat", "on a mat"]}


def qa_to_text(example):
    # TRL 0.14 and older call it with a batch (lists), 0.15 and later with one example
    if isinstance(example["question"], list):
        return [q + " answer " + a for q, a in zip(example["question"], example["answer"])]
    return example["question"] + " answer " + example["answer"]


case("1. columns question/answer, no text column, nothing configured", Dataset.from_dict(qa))
case("2. dataset_text_field='body' on a dataset whose column is 'content'", Dataset.from_dict(content), dataset_text_field="body")
length = "max_length" if SFTConfig is not None and "max_length" in SFTConfig.__dataclass_fields__ else "max_seq_length"
case("3. columns question/answer with packing=True", Dataset.from_dict(qa), packing=True, **{length: 8})
case("4. a 'text' column that holds integers", Dataset.from_dict({"text": [1, 2]}))
print("\n=== 5. a fix that names the wrong source column", flush=True)
try:
    Dataset.from_dict(content).rename_column("contents", "text")
except Exception:
    traceback.print_exc(limit=-1, file=sys.stdout)
case("6. fix: rename_column('content', 'text')", Dataset.from_dict(content).rename_column("content", "text"))
case("7. fix: dataset_text_field='content'", Dataset.from_dict(content), dataset_text_field="content")
case("8. fix: formatting_func builds the text", Dataset.from_dict(qa), formatting_func=qa_to_text)
chats = [[{"role": "user", "content": "what is two plus two"}, {"role": "assistant", "content": "four"}]] * 2
case("9. fix: conversational 'messages' column", Dataset.from_dict({"messages": chats}))
shutil.rmtree(scratch, ignore_errors=True)
