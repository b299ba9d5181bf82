"""Reproduce torchtune's loss-parallel check on a tensor-parallel plan without an `output` entry.

torchtune is not installed here (no release after 0.6.1 carries the check), so
the two versions of `LinearCrossEntropyLoss.patch_tp_plan` are copied below
verbatim from meta-pytorch/torchtune: the one added in commit 9983bbc1d
("Enable loss parallel, Ungate FP8 (#2782)") and the one on main since
b22a3ae68 ("actually patch tp plan (#2897)"). Around them, a tiny model with
the same layout as torchtune's decoders (an `output` linear, or
`decoder.output` for the Llama4 wrapper) goes through the same steps as
`_setup_model` in recipes/full_finetune_distributed.py on main: instantiate
the plan, let the loss patch it, then `parallelize_module` on the "tp" mesh.
One torchrun job (two CPU ranks, gloo) runs three cases in turn; the
uncaught one gets the `[rank0]:` prefix that PyTorch's distributed excepthook
puts on every traceback line:

  fixed    the plan with an `output` entry, loss computed under
           loss_parallel() and compared with the unsharded loss       -> ok
  llama4   a `decoder.output` plan with the June 2025 check          -> KeyError (caught, printed)
  custom   a user plan that names the final projection `lm_head`     -> KeyError (uncaught)
"""
import os
import subprocess
import sys
import traceback

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    SequenceParallel,
    loss_parallel,
    parallelize_module,
)


# --- torchtune/modules/loss/cross_entropy_loss.py at 9983bbc1d (June 2025) ---
def patch_tp_plan_9983bbc(tp_plan) -> dict:
    if "output" not in tp_plan:
        raise KeyError("`tp_plan` requires `output` key")

    tp_plan["output"] = ColwiseParallel(
        input_layouts=Shard(1),
        output_layouts=Shard(-1),
        use_local_output=False,
    )
    return tp_plan


# --- the same method on main from b22a3ae68 (August 2025) to bd2a0fc7c ---
def patch_tp_plan_main(tp_plan) -> dict:
    if "output" not in tp_plan and "decoder.output" not in tp_plan:
        raise KeyError("`tp_plan` requires `output` key")
    key = "output" if "output" in tp_plan else "decoder.output"
    tp_plan[key] = ColwiseParallel(
        input_layouts=Shard(1),
        output_layouts=Shard(-1),
        use_local_output=False,
    )
    return tp_plan


class TinyDecoder(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        return self.output(self.norm(self.tok_embeddings(tokens)))


class TinyEarlyFusion(nn.Module):  # Llama4 layout: the projection is decoder.output
    def __init__(self):
        super().__init__()
        self.decoder = TinyDecoder()

    def forward(self, tokens):
        return self.decoder(tokens)


def base_plan(prefix="", output_name="output"):
    return {
        f"{prefix}tok_embeddings": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
        f"{prefix}norm": SequenceParallel(),
        f"{prefix}{output_name}": ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate()),
    }


def setup_model(model, tp_mesh, tp_plan, patch):
    # the order of recipes/full_finetune_distributed.py::_setup_model on main
    tp_plan = patch(tp_plan)
    parallelize_module(model, tp_mesh, parallelize_plan=tp_plan)
    return model


def run_fixed(tp_mesh):
    reference = TinyDecoder()
    model = TinyDecoder()
    model.load_state_dict(reference.state_dict())
    setup_model(model, tp_mesh, base_plan(), patch_tp_plan_main)
    tokens = torch.randint(0, 32, (2, 8))
    labels = torch.randint(0, 32, (2, 8))
    with loss_parallel():
        logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
        loss.backward()
    ref = F.cross_entropy(reference(tokens).flatten(0, 1), labels.flatten())
    if dist.get_rank() == 0:
        print(f"fixed plan: logits placements {logits.placements}, "
              f"loss {loss.full_tensor().item():.6f} vs unsharded {ref.item():.6f}", flush=True)


def worker():
    dist.init_process_group("gloo")
    tp_mesh = init_device_mesh("cpu", (dist.get_world_size(),), mesh_dim_names=("tp",))["tp"]
    torch.manual_seed(0)
    run_fixed(tp_mesh)
    try:
        setup_model(TinyEarlyFusion(), tp_mesh, base_plan(prefix="decoder."), patch_tp_plan_9983bbc)
    except KeyError:
        if dist.get_rank() == 0:
            print("llama4 layout with the 9983bbc1d check:", flush=True)
            traceback.print_exc()
            sys.stderr.flush()
    # a custom plan that calls the projection lm_head: left uncaught, as in the recipe
    if dist.get_rank() == 0:
        print("custom plan naming the projection lm_head:", flush=True)
    setup_model(TinyDecoder(), tp_mesh, base_plan(output_name="lm_head"), patch_tp_plan_main)


def main():
    out = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", __file__, "worker"],
        capture_output=True, text=True, check=False, timeout=170,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    for ln in (out.stdout + out.stderr).splitlines():
        if ln.startswith(("fixed plan:", "llama4 layout", "custom plan")) or (
                "KeyError" in ln or "patch" in ln or "lm_head" in ln) or "ChildFailedError" in ln:
            print(ln, flush=True)
    print(f"torchrun exit code {out.returncode}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["worker"]:
        worker()
    else:
        main()
