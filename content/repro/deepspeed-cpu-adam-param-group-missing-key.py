"""DeepSpeedCPUAdam stepping parameter groups that another optimizer built: KeyError: 'bias_correction'.

Needs DeepSpeed next to PyTorch (checked with DeepSpeed 0.19.4, torch 2.13.0, CPU accelerator).
One process, gloo. DeepSpeed compiles its cpu_adam op on first use (g++ and ninja; about a minute
the first time, cached under ~/.cache/torch_extensions afterwards).

Cases:
1. Plain PyTorch: DeepSpeedCPUAdam.load_state_dict() of a torch.optim.AdamW state dict replaces
   the parameter groups with AdamW's, which have no 'bias_correction'; the next step() raises
   KeyError: 'bias_correction'.
2. DeepSpeed ZeRO-2 and ZeRO-3: a checkpoint written by a run without optimizer offload
   ("AdamW" with torch_adam, so the base optimizer is torch.optim.AdamW) is resumed by a run with
   offload_optimizer on the CPU (base optimizer DeepSpeedCPUAdam). load_checkpoint() succeeds;
   the first engine.step() raises KeyError: 'bias_correction' inside cpu_adam.py.
3. The same resume from a torch Adagrad checkpoint fails one key earlier: KeyError: 'betas'.
4. Ways out, ZeRO-2: (a) load_checkpoint(load_optimizer_states=False) starts CPU Adam fresh;
   (b) after loading, fill the missing keys from the optimizer's defaults; both train.
5. The reverse direction (CPU Adam checkpoint resumed with torch AdamW) trains.
6. If transformers and accelerate are importable (checked with 5.25.0 and 1.16.0): a Trainer run
   with a ZeRO-2 config and no "optimizer" section saves checkpoint-2 with its torch AdamW; the
   same run resumed with offload_optimizer added (Accelerate swaps in DeepSpeedCPUAdam) raises
   KeyError: 'bias_correction' at its first step, and resumes when the config also sets
   "zero_force_ds_cpu_optimizer": false (no swap, torch AdamW steps on the CPU).
All checkpoints go to temporary folders that are removed at the end.
"""
import os
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29593")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.simplefilter("ignore")
import torch  # noqa: E402
import deepspeed  # noqa: E402
from deepspeed.ops.adam import DeepSpeedCPUAdam  # noqa: E402

deepspeed.init_distributed(dist_backend="gloo")
print(f"torch {torch.__version__}, deepspeed {deepspeed.__version__}", flush=True)

ADAMW_TORCH = {"type": "AdamW", "params": {"lr": 1e-3, "torch_adam": True}}
ADAMW = {"type": "AdamW", "params": {"lr": 1e-3}}
ADAGRAD = {"type": "Adagrad", "params": {"lr": 1e-3}}


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def engine(stage, optimizer, offload):
    zero = {"stage": stage}
    if offload:
        zero["offload_optimizer"] = {"device": "cpu"}
    cfg = {"train_batch_size": 1, "optimizer": optimizer, "zero_optimization": zero}
    net = model()
    return deepspeed.initialize(model=net, model_parameters=net.parameters(), config=cfg)[0]


def train(eng, steps=1):
    for _ in range(steps):
        loss = eng(torch.randn(1, 8)).pow(2).sum()
        eng.backward(loss)
        eng.step()
    return loss.item()


def saved(stage, optimizer, offload, folder):
    eng = engine(stage, optimizer, offload)
    train(eng, 2)
    eng.save_checkpoint(folder, tag="t")
    return type(eng.basic_optimizer).__name__


def attempt(label, fn):
    try:
        print(f"--- {label}: trained, loss {fn():.4f}", flush=True)
    except KeyError:
        print(f"--- {label}: raised", flush=True)
        traceback.print_exc()
        sys.stderr.flush()


# 1. Plain PyTorch, no engine.
def plain():
    src, dst = model(), model()
    adamw = torch.optim.AdamW(src.parameters(), lr=1e-3)
    src(torch.randn(1, 8)).sum().backward()
    adamw.step()
    cpu_adam = DeepSpeedCPUAdam(dst.parameters(), lr=1e-3)
    cpu_adam.load_state_dict(adamw.state_dict())
    print("    groups after load:", sorted(k for k in cpu_adam.param_groups[0] if k != "params"), flush=True)
    dst(torch.randn(1, 8)).sum().backward()
    cpu_adam.step()
    return 0.0


attempt("DeepSpeedCPUAdam after load_state_dict(torch AdamW state)", plain)

# 2. and 3. Resume with optimizer offload from a checkpoint written without it.
for stage, optimizer in ((2, ADAMW_TORCH), (3, ADAMW_TORCH), (2, ADAGRAD)):
    with tempfile.TemporaryDirectory(prefix="ds-cpuadam-repro-") as folder:
        writer = saved(stage, optimizer, False, folder)
        eng = engine(stage, ADAMW, True)
        eng.load_checkpoint(folder, tag="t")
        attempt(f"ZeRO-{stage}, checkpoint from {writer}, resumed with {type(eng.basic_optimizer).__name__}",
                lambda eng=eng: train(eng))

# 4. Ways out (ZeRO-2).
with tempfile.TemporaryDirectory(prefix="ds-cpuadam-repro-") as folder:
    saved(2, ADAMW_TORCH, False, folder)
    eng = engine(2, ADAMW, True)
    eng.load_checkpoint(folder, tag="t", load_optimizer_states=False, load_lr_scheduler_states=False)
    attempt("fix (a): load_optimizer_states=False, fresh DeepSpeedCPUAdam state", lambda: train(eng, 2))

    eng = engine(2, ADAMW, True)
    eng.load_checkpoint(folder, tag="t")
    opt = eng.basic_optimizer
    for group in opt.param_groups:
        for key, value in opt.defaults.items():
            group.setdefault(key, value)
    attempt("fix (b): missing group keys filled from DeepSpeedCPUAdam defaults", lambda: train(eng, 2))

# 5. Reverse direction.
with tempfile.TemporaryDirectory(prefix="ds-cpuadam-repro-") as folder:
    saved(2, ADAMW, True, folder)
    eng = engine(2, ADAMW_TORCH, False)
    eng.load_checkpoint(folder, tag="t")
    attempt(f"ZeRO-2, checkpoint from DeepSpeedCPUAdam, resumed with {type(eng.basic_optimizer).__name__}",
            lambda: train(eng, 2))

# 6. Hugging Face Trainer (optional).
try:
    import transformers
    from accelerate.state import AcceleratorState
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
    transformers.logging.set_verbosity_error()
except ImportError:
    transformers = None
    print("transformers/accelerate not importable: skipping the Trainer cases", flush=True)


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        ids = (torch.arange(8) + i) % 16
        return {"input_ids": ids, "labels": ids}


def hf_trainer(out, zero, extra, steps):
    config = {"train_micro_batch_size_per_gpu": "auto", "train_batch_size": "auto",
              "gradient_accumulation_steps": "auto", "zero_optimization": zero, **extra}
    args = TrainingArguments(output_dir=out, deepspeed=config, per_device_train_batch_size=2, max_steps=steps,
                             report_to=[], save_strategy="steps", save_steps=2, disable_tqdm=True)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=16, n_positions=16,
                                       bos_token_id=0, eos_token_id=0))
    return Trainer(model=model, args=args, train_dataset=Tokens())


if transformers is not None:
    print(f"transformers {transformers.__version__}", flush=True)
    with tempfile.TemporaryDirectory(prefix="ds-cpuadam-repro-") as out:
        first = hf_trainer(out, {"stage": 2}, {}, 2)
        first.train()
        print(f"    Trainer run 1 (no offload) optimizer: {type(first.model_wrapped.basic_optimizer).__name__}",
              flush=True)
        offload = {"stage": 2, "offload_optimizer": {"device": "cpu"}}
        for label, extra in (("offload added", {}),
                             ("offload added, zero_force_ds_cpu_optimizer false",
                              {"zero_force_ds_cpu_optimizer": False})):
            AcceleratorState._reset_state(True)
            trainer = hf_trainer(out, offload, extra, 4)

            def resume(trainer=trainer):
                trainer.train(resume_from_checkpoint=os.path.join(out, "checkpoint-2"))
                return trainer.state.log_history[-1]["train_loss"]

            attempt(f"Trainer resume from checkpoint-2, {label}", resume)
            if hasattr(trainer.model_wrapped, "basic_optimizer"):
                print(f"    base optimizer: {type(trainer.model_wrapped.basic_optimizer).__name__}", flush=True)
