"""Reproduce a VITS-style synthesizer that is asked for a speaker embedding it never built.

Everything runs on CPU; part 3 uses gloo on 127.0.0.1 with a free port.

The toy model below is written for this script; it keeps only the two
conditions that matter in VITS-family models.py files: the embedding table
`emb_g` is created when n_speakers > 1, but forward() looks it up whenever
n_speakers > 0. The class is named SynthesizerTrn so that the message reads as
it does in those projects.

1. n_speakers=1 (a one-speaker data set given to the multi-speaker script):
   the first forward stops with
       AttributeError: 'SynthesizerTrn' object has no attribute 'emb_g'
2. n_speakers=0: no error, the model simply ignores the speaker ids (silent).
3. The same model wrapped in DistributedDataParallel (gloo, world of 1): the
   lookup happens inside the wrapped module, so the message still names
   'SynthesizerTrn', not 'DistributedDataParallel'.
4. With n_speakers equal to the real number of speakers, forward runs and
   emb_g has one row per speaker.
5. A config whose "data" section has no n_speakers key, read through a small
   attribute-style wrapper like the HParams class of VITS-family utils.py:
   building the model stops earlier, with
       AttributeError: 'HParams' object has no attribute 'n_speakers'
"""
import os
import socket
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class SynthesizerTrn(nn.Module):
    def __init__(self, n_vocab=40, hidden=8, n_speakers=0, gin_channels=4):
        super().__init__()
        self.n_speakers = n_speakers
        self.enc_p = nn.Embedding(n_vocab, hidden)
        self.proj = nn.Linear(hidden + gin_channels, hidden)
        self.gin_channels = gin_channels
        if n_speakers > 1:
            self.emb_g = nn.Embedding(n_speakers, gin_channels)

    def forward(self, x, sid=None):
        h = self.enc_p(x)
        if self.n_speakers > 0:
            g = self.emb_g(sid).unsqueeze(1).expand(-1, h.shape[1], -1)
        else:
            g = torch.zeros(h.shape[0], h.shape[1], self.gin_channels)
        return self.proj(torch.cat([h, g], dim=-1))


def batch():
    x = torch.randint(0, 40, (2, 5))
    sid = torch.tensor([0, 0])
    return x, sid


def forward_printing_error(net_g):
    """Run one forward pass; print the AttributeError's traceback if it raises one."""
    try:
        net_g(*batch())
    except AttributeError:
        traceback.print_exc()


def part1():
    forward_printing_error(SynthesizerTrn(n_speakers=1))


def part2():
    net_g = SynthesizerTrn(n_speakers=0)
    x, sid = batch()
    out = net_g(x, sid)
    print(f"part 2: n_speakers=0 ran without error, output {tuple(out.shape)}, has emb_g: {hasattr(net_g, 'emb_g')}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def part3():
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_port())
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        forward_printing_error(DDP(SynthesizerTrn(n_speakers=1)))
    finally:
        dist.destroy_process_group()


def part4():
    net_g = SynthesizerTrn(n_speakers=3)
    x, sid = batch()
    out = net_g(x, sid)
    print(f"part 4: n_speakers=3 ran, output {tuple(out.shape)}, emb_g rows: {net_g.emb_g.num_embeddings}", flush=True)


class HParams:
    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, HParams(**v) if isinstance(v, dict) else v)


def part5():
    hps = HParams(data={"sampling_rate": 22050, "filter_length": 1024, "hop_length": 256},
                  model={"gin_channels": 256})
    try:
        SynthesizerTrn(n_speakers=hps.data.n_speakers)
    except AttributeError:
        traceback.print_exc()


if __name__ == "__main__":
    part1()
    part2()
    part3()
    part4()
    part5()
