"""Reproduce a checkpoint size mismatch on load_state_dict.

A model with a 1000-token embedding and output head is saved, then loaded
into the same architecture built with a 1003-token vocabulary (as after
adding special tokens to a tokenizer). Module.load_state_dict(strict=True)
raises a RuntimeError listing, for every parameter, the shape in the
checkpoint and the shape in the current model:

    size mismatch for embed.weight: copying a param with shape torch.Size([1000, 32]) from checkpoint, the shape in current model is torch.Size([1003, 32]).
"""
import os
import tempfile

import torch


class TinyLM(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, 32)
        self.head = torch.nn.Linear(32, vocab)

    def forward(self, x):
        return self.head(self.embed(x))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ckpt.pt")
        torch.save(TinyLM(1000).state_dict(), path)
        model = TinyLM(1003)  # vocabulary grew after the checkpoint was written
        state = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(state)


if __name__ == "__main__":
    main()
