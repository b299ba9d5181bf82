"""Reproduce torchtune 0.6.0's LoRA distributed recipe failing in _setup_data.

In the torchtune 0.6.0 release, recipes/lora_finetune_distributed.py builds its
sampler with `num_replicas=self.world_size, rank=self.rank`, but the recipe's
__init__ only does `_, rank = utils.get_world_size_and_rank()` and never stores
either value on `self` (the line that does, from "Reduce number of worlds
(#2391)", reached the release branch only for 0.6.1). Every run therefore stops
in recipe.setup() -> _setup_data() with

    AttributeError: 'LoRAFinetuneRecipeDistributed' object has no attribute 'world_size'

What this script runs depends on what is installed next to torch:

- torchtune importable (for example `pip install --no-deps --target DIR
  torchtune==0.6.0 torchdata==0.11.0 torchao==0.10.0 omegaconf
  antlr4-python3-runtime==4.9.3 sentencepiece tiktoken blobfile`, then
  PYTHONPATH=DIR): the installed recipe file is loaded from the wheel's
  `recipes/` folder and its real __init__ and _setup_data run on a four-row
  in-memory dataset in a one-process gloo group. With 0.6.0 this prints the
  AttributeError above (frame `num_replicas=self.world_size,` at line 615); with
  0.6.1 the dataloader is built. Seen with torchtune 0.6.0 and 0.6.1, torch
  2.13.0+cpu, Python 3.11.7. Setting only `world_size` by hand moves the failure
  to the next line, `'LoRAFinetuneRecipeDistributed' object has no attribute
  'rank'` (line 616), also seen with the 0.6.0 wheel.
- torchtune not importable (the default environment): a stand-in class with the
  same name and the same two code shapes (0.6.0: the values kept in locals;
  0.6.1: stored on self in __init__) runs the same attribute reads around a
  torch DistributedSampler. It is not torchtune's code; it shows that the
  message and the frame come from Python's attribute lookup, nothing else.

CPU only, no model, no download, a second or two.
"""
import os
import sys
import tempfile
import traceback
import importlib.util

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def tiny_dataset(tokenizer):  # the `_component_` the real recipe instantiates
    return [{"tokens": [1, 2, 3], "labels": [1, 2, 3]}] * 4


class _Tok:
    pad_id = 0


class _Loss:
    ignore_index = -100


def run_real_torchtune():
    import torchtune
    from omegaconf import OmegaConf

    spec = importlib.util.find_spec("recipes")  # does not execute recipes/__init__.py
    path = os.path.join(list(spec.submodule_search_locations)[0], "lora_finetune_distributed.py")
    mspec = importlib.util.spec_from_file_location("lora_finetune_distributed", path)
    mod = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(mod)
    print(f"torchtune {torchtune.__version__}: {path}", flush=True)

    cfg = OmegaConf.create(dict(
        device="cpu", dtype="fp32", output_dir=tempfile.mkdtemp(), seed=0, epochs=1,
        max_steps_per_epoch=1, resume_from_checkpoint=False, gradient_accumulation_steps=1,
        checkpointer={"model_type": "LLAMA3"}))
    recipe = mod.LoRAFinetuneRecipeDistributed(cfg=cfg)
    recipe._tokenizer, recipe._loss_fn = _Tok(), _Loss()
    try:
        dl = recipe._setup_data(
            cfg_dataset=OmegaConf.create({"_component_": "__main__.tiny_dataset"}),
            shuffle=True, batch_size=1, collate_fn="torchtune.data.padded_collate_sft")
        print(f"dataloader built: {type(dl).__name__} with {len(dl)} batches", flush=True)
    except AttributeError:
        traceback.print_exc()
        sys.stderr.flush()


def get_world_size_and_rank():
    return dist.get_world_size(), dist.get_rank()


class LoRAFinetuneRecipeDistributed:  # stand-in, 0.6.0 shape
    def __init__(self):
        _, rank = get_world_size_and_rank()
        self._is_rank_zero = rank == 0

    def _setup_data(self, ds, batch_size):
        world_size, rank = get_world_size_and_rank()
        sampler = DistributedSampler(
            ds,
            num_replicas=self.world_size,
            rank=self.rank,
            shuffle=True,
        )
        return DataLoader(ds, batch_size=batch_size, sampler=sampler)


class FixedRecipe(LoRAFinetuneRecipeDistributed):  # stand-in, 0.6.1 shape
    def __init__(self):
        self.world_size, self.rank = get_world_size_and_rank()
        self._is_rank_zero = self.rank == 0


def run_stand_in():
    print("torchtune not importable: stand-in recipe class (not torchtune code)", flush=True)
    ds = list(range(4))
    for cls in (LoRAFinetuneRecipeDistributed, FixedRecipe):
        print(f"--- {cls.__name__}", flush=True)
        try:
            dl = cls()._setup_data(ds, batch_size=1)
            print(f"dataloader built: {type(dl).__name__} with {len(dl)} batches", flush=True)
        except AttributeError:
            traceback.print_exc()
            sys.stderr.flush()


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29571")
    dist.init_process_group("gloo", rank=0, world_size=1)
    print(f"torch {torch.__version__}, world size {dist.get_world_size()}", flush=True)
    try:
        if importlib.util.find_spec("torchtune") is not None:
            run_real_torchtune()
        else:
            run_stand_in()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
