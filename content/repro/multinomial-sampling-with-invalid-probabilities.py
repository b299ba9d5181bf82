"""Reproduce torch.multinomial rejecting a probability tensor with NaN in it.

A toy language-model head runs in float16, as a policy does in an fp16 RLHF
or GRPO rollout. One hidden state is large enough that a logit overflows
the float16 range (max 65504) and becomes inf; softmax over a row holding
inf yields NaN for the whole row, and sampling the next token fails:

    RuntimeError: probability tensor contains either `inf`, `nan` or element < 0

The script also shows the related checks: a row of all-zero weights (every
token filtered out), and NaN through the with-replacement path that
torch.distributions.Categorical(..., validate_args=False).sample() uses
(one draw takes the same fast-path check; several draws reach the kernel).
"""
import torch


def sample_next_token(lm_head, hidden):
    logits = lm_head(hidden)                      # float16 logits
    print("non-finite logits:", (~torch.isfinite(logits)).sum().item(), flush=True)
    probs = torch.softmax(logits.float(), dim=-1)  # upcasting after the overflow is too late
    print("NaN probabilities:", torch.isnan(probs).sum().item(), flush=True)
    return torch.multinomial(probs, num_samples=1)


def main():
    torch.manual_seed(0)
    vocab, dim = 32, 16
    lm_head = torch.nn.Linear(dim, vocab, bias=False).half()
    hidden = torch.randn(2, dim).half()
    print("healthy step ->", sample_next_token(lm_head, hidden).flatten().tolist(), flush=True)

    nan_row = torch.full((1, vocab), float("nan"))
    for name, probs, draws, replacement in [
        ("all-zero row", torch.zeros(1, vocab), 1, False),
        ("NaN row, one draw with replacement", nan_row, 1, True),
        ("NaN row, two draws with replacement", nan_row, 2, True),
    ]:
        try:
            torch.multinomial(probs, draws, replacement=replacement)
        except RuntimeError as e:
            print(f"{name}: RuntimeError: {e}", flush=True)

    # activation blow-up in one sequence: large values aligned with a row of the head
    hidden[1] = 50000.0 * torch.sign(lm_head.weight[0].detach())
    sample_next_token(lm_head, hidden)


if __name__ == "__main__":
    main()
