"""Logit distillation with a teacher and a student whose output layers have different vocab sizes.

Needs TRL next to PyTorch (checked with trl 1.16.0 and torch 2.13.0, CPU only); no model is loaded:
the logits are random tensors shaped like Qwen2.5-1.5B (student, vocab_size 151936) and Qwen2.5-7B
(teacher, vocab_size 152064) output.

Cases:
1. TRL GKD's generalized_jsd_loss with the default beta=0.5: the mixture is built with torch.stack
   over the two log-prob tensors, which refuses the different last dimension
   ("stack expects each tensor to be equal size, but got [...] at entry 0 and [...] at entry 1").
2. The same loss with beta=0.0 (forward KL only): F.kl_div broadcasts the two tensors and raises
   "The size of tensor a (152064) must match the size of tensor b (151936) at non-singleton dimension 2".
3. A hand-written forward-KL KD loss (teacher probabilities times student log-probs), the form most KD
   trainers use: the elementwise product raises the same broadcasting error.
4. Fix: both sides sliced to the shared vocabulary (the smaller size, which covers every id the
   shared tokenizer can produce) before the loss; the loss is finite.
"""
import traceback
import warnings

warnings.simplefilter("ignore")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from trl.experimental.gkd import GKDTrainer  # noqa: E402

STUDENT_VOCAB, TEACHER_VOCAB = 151936, 152064
torch.manual_seed(0)
student_logits = torch.randn(2, 8, STUDENT_VOCAB)
teacher_logits = torch.randn(2, 8, TEACHER_VOCAB)
labels = torch.randint(0, 151665, (2, 8))


def case(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print(f"loss = {out.item():.4f}", flush=True)
    except Exception:
        traceback.print_exc()


def forward_kl(student, teacher):
    teacher_probs = F.softmax(teacher, dim=-1, dtype=torch.float32)
    logprobs = F.log_softmax(student, dim=-1, dtype=torch.float32)
    return -(teacher_probs * logprobs).sum(-1).mean()


case("1. GKD generalized_jsd_loss, beta=0.5",
     lambda: GKDTrainer.generalized_jsd_loss(student_logits, teacher_logits, labels, beta=0.5))
case("2. GKD generalized_jsd_loss, beta=0.0",
     lambda: GKDTrainer.generalized_jsd_loss(student_logits, teacher_logits, labels, beta=0.0))
case("3. forward-KL KD loss", lambda: forward_kl(student_logits, teacher_logits))

shared = min(student_logits.size(-1), teacher_logits.size(-1))
case("4. fix: slice both to the shared vocabulary",
     lambda: GKDTrainer.generalized_jsd_loss(student_logits[..., :shared], teacher_logits[..., :shared], labels, beta=0.5))
