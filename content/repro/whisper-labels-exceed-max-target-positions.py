"""Reproduce Whisper refusing label sequences longer than max_target_positions.

Needs `transformers` next to torch (the project's torch environment has it).
Run with transformers 5.25.0, and with 4.44.0 (all cases) and 4.42.0 (cases
1 to 3; the audit also ran cases 1 to 3 with 4.23.0, 4.26.0, 4.36.0, 4.43.0
and 4.44.2) for the behaviour before the check existed (a scratch virtual
environment with `pip install transformers==4.44.0 accelerate==0.34.2
datasets==2.21.0` and a .pth line pointing at the torch environment).
Nothing is downloaded: the model is a one-layer Whisper built from a config
with the real decoder limit of 448 positions and a tiny vocabulary. Runs on
the CPU in a few seconds.

Cases:
1. labels of 449 tokens: transformers 4.45 and later raise the ValueError
   "Labels' sequence length 449 cannot exceed the maximum allowed length of
   448 tokens." before the decoder runs. Older releases fail inside the
   decoder: 4.43 and 4.44 look up position 448 in the 448-row table
   ("IndexError: index 448 is out of bounds for dimension 0 with size 448"
   on the CPU), 4.42 and older slice the table to 448 rows and cannot add it
   to 449 token embeddings ("RuntimeError: The size of tensor a (449) must
   match the size of tensor b (448) at non-singleton dimension 1").
2. 300 real tokens padded with -100 to a fixed width of 512: the check counts
   the padded width, so it fails although no transcript is too long.
3. exactly 448 label tokens: the loss is computed.
4. a Seq2SeqTrainer run whose third example is too long: the first steps
   train, then the run stops at the step that draws the long example.
5. the fixes: drop examples whose labels are longer than the limit before
   training, or cut labels to the limit; both train.
"""
import os
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.simplefilter("ignore")

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import WhisperConfig, WhisperForConditionalGeneration  # noqa: E402

transformers.logging.set_verbosity_error()
print(f"transformers {transformers.__version__}, torch {torch.__version__}, python {sys.version.split()[0]}", flush=True)

VOCAB, PAD, START, EOS = 64, 0, 1, 2
cfg = WhisperConfig(
    vocab_size=VOCAB, num_mel_bins=8, d_model=16, encoder_layers=1, decoder_layers=1,
    encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
    max_source_positions=8, max_target_positions=448, pad_token_id=PAD, bos_token_id=START,
    eos_token_id=EOS, decoder_start_token_id=START,
)
torch.manual_seed(0)
model = WhisperForConditionalGeneration(cfg)
print(f"config.max_target_positions = {model.config.max_target_positions}", flush=True)
FRAMES = 2 * cfg.max_source_positions  # the encoder wants exactly this many mel frames


def features(batch=1):
    return torch.randn(batch, cfg.num_mel_bins, FRAMES)


def tokens(n):
    return torch.randint(3, VOCAB, (1, n))


def forward(title, **kwargs):
    print(f"\n=== {title}", flush=True)
    try:
        out = model(input_features=features(), **kwargs)
        print(f"ok, loss={out.loss.item():.3f}" if out.loss is not None else "ok", flush=True)
    except Exception:
        traceback.print_exc(limit=-1, file=sys.stdout)
        sys.stdout.flush()


forward("1. labels of 449 tokens", labels=tokens(449))
padded = torch.full((1, 512), -100)
padded[:, :300] = tokens(300)
forward("2. 300 real label tokens padded with -100 to a fixed width of 512", labels=padded)
forward("3. exactly 448 label tokens", labels=tokens(448))

from torch.utils.data import Dataset  # noqa: E402
from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments  # noqa: E402


class Transcripts(Dataset):
    def __init__(self, lengths):
        torch.manual_seed(1)
        self.rows = [{"input_features": features()[0], "labels": tokens(n)[0]} for n in lengths]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def collate(rows):
    width = max(len(r["labels"]) for r in rows)
    labels = torch.full((len(rows), width), -100)
    for i, r in enumerate(rows):
        labels[i, : len(r["labels"])] = r["labels"]
    return {"input_features": torch.stack([r["input_features"] for r in rows]), "labels": labels}


class StepLog(transformers.TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        print(f"step {state.global_step} done", flush=True)


def train(title, lengths, cut=None):
    print(f"\n=== {title}", flush=True)
    data = Transcripts(lengths)
    if cut is not None:
        for r in data.rows:
            r["labels"] = r["labels"][:cut]
    with tempfile.TemporaryDirectory() as out:
        args = Seq2SeqTrainingArguments(output_dir=out, per_device_train_batch_size=1, max_steps=len(data),
                                        report_to=[], use_cpu=True, save_strategy="no", logging_strategy="no",
                                        disable_tqdm=True)
        trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=data, data_collator=collate,
                                 callbacks=[StepLog()])
        trainer._get_train_sampler = lambda *a, **k: torch.utils.data.SequentialSampler(data)
        try:
            trainer.train()
            print(f"trained {len(data)} steps: ok", flush=True)
        except Exception:
            traceback.print_exc(limit=-1, file=sys.stdout)
            sys.stdout.flush()


LENGTHS = [40, 120, 460, 80]
train("4. Seq2SeqTrainer, label lengths 40, 120, 460, 80", LENGTHS)
limit = model.config.max_target_positions
train(f"5a. fix: drop examples with more than {limit} label tokens", [n for n in LENGTHS if n <= limit])
train(f"5b. fix: cut labels to {limit} tokens", LENGTHS, cut=limit)
