"""DeepSpeed engine.load_checkpoint on folders without DeepSpeed's own files ('latest', global_step<N>/).

Needs DeepSpeed (checked with 0.19.4) next to PyTorch; runs on CPU, one process, gloo.
If transformers is importable (checked with 5.25.0, its wheel and dependencies on PYTHONPATH),
also calls its deepspeed_load_checkpoint; without it that part is skipped.
"""
import os
import sys
import tempfile
import traceback

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29537")
import torch
import deepspeed

deepspeed.init_distributed(dist_backend="gloo")


def engine(universal=False, stage=2):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    config = {"train_batch_size": 2, "zero_optimization": {"stage": stage}, "zero_allow_untested_optimizer": True}
    if universal:
        config["checkpoint"] = {"load_universal": True}
    return deepspeed.initialize(model=model, optimizer=opt, config=config)[0]


def show(title, call):
    sys.stdout.flush()
    try:
        result = call()
        print(f"--- {title}: returned {result[0]!r}", flush=True)
    except (AssertionError, ValueError):
        print(f"--- {title}: raised", flush=True)
        traceback.print_exc()
        sys.stderr.flush()


trained = engine()
for _ in range(2):
    trained.backward(trained(torch.randn(2, 8)).pow(2).mean())
    trained.step()
work = tempfile.mkdtemp()
full = os.path.join(work, "checkpoint-2")
trained.save_checkpoint(full)  # writes global_step2/ and then the 'latest' file
weights = os.path.join(work, "weights-only")  # what a weights-only save leaves behind
os.makedirs(weights)
torch.save(trained.module.state_dict(), os.path.join(weights, "pytorch_model.bin"))
for root, _, files in os.walk(work):
    print(os.path.relpath(root, work), sorted(files), flush=True)

fresh = engine()
show("weights-only folder", lambda: fresh.load_checkpoint(weights))
os.remove(os.path.join(full, "latest"))
show("full checkpoint without 'latest'", lambda: fresh.load_checkpoint(full))
show("same folder, tag='global_step2'", lambda: fresh.load_checkpoint(full, tag="global_step2"))
show("same folder, tag='global_step2', load_module_only=True",
     lambda: fresh.load_checkpoint(full, tag="global_step2", load_module_only=True))
show("tag that has no folder", lambda: fresh.load_checkpoint(full, tag="global_step999"))
show("weights-only folder, load_universal", lambda: engine(universal=True).load_checkpoint(weights))

# ZeRO-3: load_optimizer_states=False rebuilds the weights through zero_to_fp32 from load_dir without the tag,
# so an explicit tag does not help when 'latest' is missing
z3 = engine(stage=3)
z3.backward(z3(torch.randn(2, 8)).pow(2).mean())
z3.step()
full3 = os.path.join(work, "zero3")
z3.save_checkpoint(full3)
os.remove(os.path.join(full3, "latest"))
show("ZeRO-3 without 'latest', tag='global_step1', load_module_only=True",
     lambda: engine(stage=3).load_checkpoint(full3, tag="global_step1", load_module_only=True))
show("ZeRO-3 without 'latest', tag='global_step1', load_optimizer_states=False",
     lambda: engine(stage=3).load_checkpoint(full3, tag="global_step1", load_optimizer_states=False,
                                             load_lr_scheduler_states=False))

try:
    from transformers.integrations.deepspeed import deepspeed_load_checkpoint
except ImportError:
    print("transformers not importable: skipping deepspeed_load_checkpoint")
else:
    show("transformers, weights-only folder", lambda: deepspeed_load_checkpoint(fresh, weights))
    show("transformers, global_step2 without 'latest'", lambda: deepspeed_load_checkpoint(fresh, full))
