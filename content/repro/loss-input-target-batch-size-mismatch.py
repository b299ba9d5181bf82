"""Reproduce "Expected input batch_size (N) to match target batch_size (M)." on CPU.

cross_entropy and nll_loss compare only the first dimension of the logits
with the first dimension of the target. Each case below builds logits and
labels the way a training script does and gets them out of step in one of
the usual ways:

1. a causal-LM shift applied to the logits but not to the labels;
2. labels flattened to (B*T,) while the logits stay (B, T, V);
3. a collator that pads input_ids and labels to different lengths, with the
   loss computed the way Hugging Face causal LMs do (labels padded by one
   and shifted, both sides flattened);
4. a model that reshapes with a hard-coded batch size, on the smaller last
   batch of an epoch (DataLoader drop_last=False);
5. one-hot labels flattened with view(-1);
6. the same mistake as 1 under torch.compile with dynamic shapes, where the
   sizes are symbolic and the ValueError is wrapped in a TorchRuntimeError.

Each one prints (case 2b shows the different error raised when dimension 0
agrees but the class dimension is in the wrong place)

    ValueError: Expected input batch_size (N) to match target batch_size (M).

Then the shape check from the entry is run on the bad and the fixed pairs,
and the fixed versions compute a loss.
"""
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
B, T, V = 4, 6, 11


def run(title, fn):
    print(f"== {title}", flush=True)
    try:
        loss = fn()
        print(f"loss OK: {loss.item():.4f}", flush=True)
    except Exception:
        traceback.print_exc()


def check_loss_shapes(logits, labels, where=""):
    """Raise a readable error before cross_entropy does (class dim = 1 for >2-D)."""
    if logits.dim() >= 2 and logits.shape[0] != labels.shape[0]:
        raise ValueError(
            f"{where}: logits {tuple(logits.shape)} and labels {tuple(labels.shape)} "
            f"disagree on dim 0 ({logits.shape[0]} vs {labels.shape[0]})"
        )
    print(f"{where}: logits {tuple(logits.shape)} labels {tuple(labels.shape)} OK", flush=True)


def hf_style_causal_lm_loss(logits, labels, ignore_index=-100):
    # As in transformers' ForCausalLMLoss from 4.49: pad labels by one, shift, flatten.
    labels = F.pad(labels, (0, 1), value=ignore_index)
    shift_labels = labels[..., 1:].contiguous()
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), shift_labels.view(-1),
                           ignore_index=ignore_index)


class FixedBatchHead(nn.Module):
    """Pools per-point features per sample, using the configured batch size."""

    def __init__(self, batch_size, features=5, classes=3):
        super().__init__()
        self.batch_size = batch_size
        self.fc = nn.Linear(features, classes)

    def forward(self, points):  # points: (n_samples * points_per_sample, features)
        per_sample = points.view(self.batch_size, -1, points.size(-1))  # should use the real n
        return self.fc(per_sample.mean(dim=1))


def main():
    logits = torch.randn(B, T, V)
    labels = torch.randint(0, V, (B, T))

    run("1. shift applied to the logits only",
        lambda: F.cross_entropy(logits[:, :-1].reshape(-1, V), labels.reshape(-1)))
    run("2. labels flattened, logits left 3-D",
        lambda: F.cross_entropy(logits, labels.reshape(-1)))
    run("2b. neighbouring error: (B, T, V) logits with (B, T) labels, dim 0 agrees",
        lambda: F.cross_entropy(logits, labels))

    labels_long = torch.randint(0, V, (B, T + 2))  # collator padded labels to a longer length
    run("3. labels padded to another length than input_ids (HF-style loss)",
        lambda: hf_style_causal_lm_loss(logits, labels_long))

    head = FixedBatchHead(batch_size=8)
    # 10 samples with batch_size=8: the last batch holds 2 samples of 4 points each
    last_batch = torch.randn(2 * 4, 5)
    last_labels = torch.randint(0, 3, (2,))
    run("4. hard-coded batch size on the last, smaller batch",
        lambda: F.cross_entropy(head(last_batch), last_labels))

    cls_logits = torch.randn(B, 3)
    one_hot = F.one_hot(torch.randint(0, 3, (B,)), 3)
    run("5. one-hot labels flattened with view(-1)",
        lambda: F.cross_entropy(cls_logits, one_hot.view(-1)))

    def shifted_loss(lg, lb):
        return F.cross_entropy(lg[:, :-1].reshape(-1, lg.size(-1)), lb.reshape(-1))

    compiled = torch.compile(shifted_loss, dynamic=True)
    run("6. case 1 under torch.compile(dynamic=True)", lambda: compiled(logits, labels))

    print("== shape check on the bad and the fixed pairs", flush=True)
    try:
        check_loss_shapes(logits[:, :-1].reshape(-1, V), labels.reshape(-1), "case 1 as written")
    except ValueError as e:
        print("check:", e, flush=True)
    shift_logits = logits[:, :-1].reshape(-1, V)
    shift_labels = labels[:, 1:].reshape(-1)
    check_loss_shapes(shift_logits, shift_labels, "case 1 fixed")
    run("1 fixed: shift both, then flatten both",
        lambda: F.cross_entropy(shift_logits, shift_labels))
    run("2 fixed: class dim second, labels (B, T)",
        lambda: F.cross_entropy(logits.permute(0, 2, 1), labels))
    run("4 fixed: reshape with the real number of samples",
        lambda: F.cross_entropy(head.fc(last_batch.view(len(last_labels), -1, 5).mean(dim=1)), last_labels))
    run("5 fixed: class indices, not one-hot",
        lambda: F.cross_entropy(cls_logits, one_hot.argmax(dim=1)))


if __name__ == "__main__":
    main()
