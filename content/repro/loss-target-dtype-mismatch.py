"""Reproduce loss functions refusing a target of the wrong dtype, on CPU.

Every loss compares the target's dtype with what its kernel expects, and the
message depends on the loss, not on the mistake:

- BCELoss / HuberLoss with integer or float64 labels (TensorIterator):
      RuntimeError: Found dtype Long but expected Float
      RuntimeError: Found dtype Double but expected Float
- BCEWithLogitsLoss with integer multi-hot labels (an in-place multiply into
  the Long target):
      RuntimeError: result type Float can't be cast to the desired output type Long
- CrossEntropyLoss / NLLLoss with float (or int32) class indices:
      RuntimeError: expected target dtype to be Long or Byte, but got Float
- CrossEntropyLoss with integer one-hot rows (same shape as the logits, so
  they are read as class probabilities):
      RuntimeError: Expected floating point type for target with class probabilities, got Long
- MultiMarginLoss / MultiLabelMarginLoss with float targets (typed pointer):
      RuntimeError: expected scalar type Long but found Float

Cases follow the way training code gets there: labels from a DataLoader
(Python ints collate to int64, Python floats to float64), one-hot labels,
a half-precision model, CPU autocast. MSELoss and L1Loss with Long targets
are run too: this release promotes and computes them. Each case is then
run again with the target converted, and the fixed versions compute a loss.
"""
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

torch.manual_seed(0)
N, C = 8, 4


def run(title, fn):
    print(f"== {title}", flush=True)
    try:
        loss = fn()
        loss.backward()
        print(f"loss OK: {loss.item():.4f} (target dtype handled)", flush=True)
    except Exception:
        traceback.print_exc()


def check_target(loss_fn, logits, target):
    """The check from the entry: what each loss family wants as target dtype."""
    index_losses = (nn.CrossEntropyLoss, nn.NLLLoss, nn.MultiMarginLoss, nn.MultiLabelMarginLoss)
    if isinstance(loss_fn, index_losses) and target.shape != logits.shape:
        ok = target.dtype == torch.long
        want = "torch.long class indices"
    else:
        ok = target.dtype == logits.dtype
        want = f"{logits.dtype} like the input"
    print(f"check {type(loss_fn).__name__}: target {target.dtype}, wants {want}: "
          f"{'OK' if ok else 'MISMATCH'}", flush=True)


def main():
    feats = torch.randn(N, 16)
    head = nn.Linear(16, C)

    # Multi-label head; labels read as Python ints -> default_collate gives int64.
    multi_hot = [[int(v) for v in row] for row in torch.randint(0, 2, (N, C))]
    loader = DataLoader(list(zip(feats, multi_hot)), batch_size=N,
                        collate_fn=lambda b: (torch.stack([x for x, _ in b]), torch.tensor([y for _, y in b])))
    x, y_int = next(iter(loader))
    print("multi-hot labels from the loader:", y_int.dtype, flush=True)
    run("1. BCELoss on sigmoid outputs, int64 multi-hot labels",
        lambda: nn.BCELoss()(torch.sigmoid(head(x)), y_int))
    run("2. BCEWithLogitsLoss, int64 multi-hot labels",
        lambda: nn.BCEWithLogitsLoss()(head(x), y_int))

    # Binary labels stored as Python floats -> default_collate gives float64.
    ds = [(feats[i], float(i % 2)) for i in range(N)]
    xb, y_f64 = next(iter(DataLoader(ds, batch_size=N)))
    print("binary labels from default_collate:", y_f64.dtype, flush=True)
    bin_head = nn.Linear(16, 1)
    run("3. BCELoss, float64 labels from default_collate",
        lambda: nn.BCELoss()(torch.sigmoid(bin_head(xb)).squeeze(1), y_f64))

    # Regression head with integer targets.
    reg_head = nn.Linear(16, 1)
    y_reg = torch.randint(0, 10, (N, 1))
    run("4. HuberLoss, int64 regression targets",
        lambda: nn.HuberLoss()(reg_head(feats), y_reg))
    run("4b. MSELoss, int64 regression targets (promoted in this release)",
        lambda: nn.MSELoss()(reg_head(feats), y_reg))
    run("4c. L1Loss, int64 regression targets (promoted in this release)",
        lambda: nn.L1Loss()(reg_head(feats), y_reg))

    # Class-index losses.
    logits = head(feats)
    idx = torch.randint(0, C, (N,))
    run("5. CrossEntropyLoss, class indices stored as float",
        lambda: nn.CrossEntropyLoss()(logits, idx.float()))
    run("6. NLLLoss, class indices stored as int32",
        lambda: nn.NLLLoss()(F.log_softmax(logits, dim=1), idx.int()))
    run("7. CrossEntropyLoss, int64 one-hot rows",
        lambda: nn.CrossEntropyLoss()(logits, F.one_hot(idx, C)))
    run("8. MultiMarginLoss, class indices stored as float",
        lambda: nn.MultiMarginLoss()(logits, idx.float()))
    run("9. CrossEntropyLoss, 2-D segmentation mask stored as float",
        lambda: nn.CrossEntropyLoss()(torch.randn(2, C, 5, 5), torch.randint(0, C, (2, 5, 5)).float()))

    # Precision: a model in half precision against float32 labels.
    half_probs = torch.sigmoid(head(x)).half()
    run("10. BCELoss, half-precision outputs against float32 labels",
        lambda: nn.BCELoss()(half_probs, y_int.float()))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = head(x)
        print("under CPU autocast the head returns", out.dtype, flush=True)
        run("11. BCEWithLogitsLoss under CPU autocast, int64 labels",
            lambda: nn.BCEWithLogitsLoss()(out, y_int))
        run("12. CrossEntropyLoss under CPU autocast, float class indices",
            lambda: nn.CrossEntropyLoss()(out, idx.float()))

    print("== target check on the bad and the fixed pairs", flush=True)
    check_target(nn.BCEWithLogitsLoss(), logits, y_int)
    check_target(nn.BCEWithLogitsLoss(), logits, y_int.float())
    check_target(nn.CrossEntropyLoss(), logits, idx.float())
    check_target(nn.CrossEntropyLoss(), logits, idx)

    run("1 fixed: BCELoss, labels .float()",
        lambda: nn.BCELoss()(torch.sigmoid(head(x)), y_int.float()))
    run("2 fixed: BCEWithLogitsLoss, labels .to(logits.dtype)",
        lambda: (lambda z: nn.BCEWithLogitsLoss()(z, y_int.to(z.dtype)))(head(x)))
    run("3 fixed: BCELoss, labels .float()",
        lambda: nn.BCELoss()(torch.sigmoid(bin_head(xb)).squeeze(1), y_f64.float()))
    run("4 fixed: HuberLoss, targets .float()",
        lambda: nn.HuberLoss()(reg_head(feats), y_reg.float()))
    run("5 fixed: CrossEntropyLoss, indices .long()",
        lambda: nn.CrossEntropyLoss()(head(feats), idx.float().long()))
    run("7 fixed: CrossEntropyLoss, one-hot .float() (probabilities) or argmax (indices)",
        lambda: nn.CrossEntropyLoss()(head(feats), F.one_hot(idx, C).float())
        + nn.CrossEntropyLoss()(head(feats), F.one_hot(idx, C).argmax(dim=1)))
    run("10 fixed: BCEWithLogitsLoss on the logits, output cast to float32",
        lambda: nn.BCEWithLogitsLoss()(head(x).half().float(), y_int.float()))


if __name__ == "__main__":
    main()
