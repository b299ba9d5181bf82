"""Reproduce an id that an embedding table has no row for, on CPU.

A tiny "language model" has an nn.Embedding of 8 rows (vocabulary 0..7).
Three ways a real pipeline feeds it an id it does not have:

1. two tokens were added to the tokenizer (ids 8 and 9) but the embedding
   was not resized;
2. padding positions were filled with -100 (the loss's ignore value) in
   input_ids instead of only in labels;
3. the same out-of-range id sent straight through torch.index_select.

On CPU each one raises, at the lookup itself:

    IndexError: index out of range in self

(on a GPU the same lookups trip a device-side assertion instead).

4. the model compiled with torch.compile (Inductor, which needs a C++
   compiler): the generated kernel checks the id itself and raises

    RuntimeError: kernel, /tmp/torchinductor_.../....cpp:N, index out of bounds: 0 <= tmpK < 8L

Then the check this entry recommends is run on the bad batch, and the fix
(growing the table, the equivalent of resize_token_embeddings) is shown to
make the forward pass work.
"""
import traceback

import torch
import torch.nn as nn

VOCAB = 8
torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab, dim=4):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        return self.head(self.embed_tokens(input_ids))


def check_ids(model, input_ids):
    rows = model.embed_tokens.num_embeddings
    lo, hi = int(input_ids.min()), int(input_ids.max())
    print(f"ids span [{lo}, {hi}], embedding has {rows} rows -> "
          f"{'OK' if 0 <= lo and hi < rows else 'OUT OF RANGE'}", flush=True)


def run(title, fn):
    print(f"== {title}", flush=True)
    try:
        out = fn()
        print("forward OK, output shape", tuple(out.shape), flush=True)
    except Exception:  # IndexError eagerly; RuntimeError from compiled code
        traceback.print_exc()


def main():
    model = TinyLM(VOCAB)
    added_tokens = torch.tensor([[1, 2, 8, 3, 9]])           # <tool>=8, </tool>=9
    ignore_padded = torch.tensor([[1, 2, 3, -100, -100]])    # -100 meant for labels only

    run("1. ids from tokens added without resizing the embedding", lambda: model(added_tokens))
    run("2. padding written as -100 in input_ids", lambda: model(ignore_padded))
    run("3. index_select with the same ids",
        lambda: torch.index_select(model.embed_tokens.weight, 0, added_tokens.view(-1)))

    compiled = torch.compile(model)
    run("4. the same model under torch.compile", lambda: compiled(added_tokens))

    print("== check the bad batch against the table", flush=True)
    check_ids(model, added_tokens)
    check_ids(model, ignore_padded)

    # The fix for case 1: grow the table to the tokenizer's length, keeping the
    # trained rows (what transformers' resize_token_embeddings does).
    old = model.embed_tokens
    new = nn.Embedding(10, old.embedding_dim)
    with torch.no_grad():
        new.weight[: old.num_embeddings] = old.weight
    model.embed_tokens = new
    check_ids(model, added_tokens)
    run("5. after growing the embedding to 10 rows", lambda: model.embed_tokens(added_tokens))


if __name__ == "__main__":
    main()
