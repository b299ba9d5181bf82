"""DeepSpeed engines without an optimizer: only ZeRO stage 0 or 3 can be built for inference.

Needs DeepSpeed next to PyTorch (checked with 0.19.4); runs on the CPU accelerator, one process,
gloo, in a few seconds. If accelerate and transformers are importable (checked with 1.16.0 and
5.25.0) it also runs their paths; without them those parts are skipped.

Cases:
1. deepspeed.initialize(model=..., config=...) without an optimizer, ZeRO stages 0 to 3:
   stages 1 and 2 stop with "AssertionError: zero stage N requires an optimizer"; stage 0 gives a
   plain engine and stage 3 a parameter-partitioning engine (DeepSpeedZeRoOffload), and both run a
   forward pass.
2. Stage 2 with an "optimizer" section in the config: DeepSpeed builds that optimizer itself, so
   the engine is created (it then holds optimizer states it will never use).
3. Accelerate: accelerator.prepare(model) alone with a stage-2 plugin reaches the same assertion;
   stage 3 works.
4. Transformers Trainer.evaluate() before any training: with a stage-2 config it raises
   "ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your config"; with stage 3
   it evaluates; with stage 2 after train() it evaluates through the training engine.
5. The workaround TRL uses for reference models: a copy of the config with the stage set to 0.
"""
import copy
import os
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29547")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.simplefilter("ignore")
import torch  # noqa: E402
import deepspeed  # noqa: E402

deepspeed.init_distributed(dist_backend="gloo")
print(f"torch {torch.__version__}, deepspeed {deepspeed.__version__}", flush=True)


def tiny():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def attempt(title, call):
    sys.stdout.flush()
    try:
        result = call()
        print(f"--- {title}: ok, {result}", flush=True)
    except (AssertionError, ValueError):
        print(f"--- {title}: raised", flush=True)
        traceback.print_exc()
        sys.stderr.flush()


def plain_engine(stage, extra=None):
    config = {"train_batch_size": 1, "zero_optimization": {"stage": stage}}
    config.update(extra or {})
    engine = deepspeed.initialize(model=tiny(), config=config)[0]
    with torch.no_grad():
        out = engine(torch.randn(1, 8))
    return f"optimizer={type(engine.optimizer).__name__}, output {tuple(out.shape)}"


for stage in (0, 1, 2, 3):
    attempt(f"deepspeed.initialize without optimizer, stage {stage}", lambda: plain_engine(stage))
attempt("stage 2 with an 'optimizer' section in the config",
        lambda: plain_engine(2, {"optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "torch_adam": True}}}))

try:
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState
    from accelerate.utils import DeepSpeedPlugin
except ImportError:
    Accelerator = None
    print("accelerate not importable: skipping its cases", flush=True)

if Accelerator is not None:
    def accelerate_prepare(stage):
        plugin = DeepSpeedPlugin(hf_ds_config={"train_micro_batch_size_per_gpu": 1,
                                               "zero_optimization": {"stage": stage}})
        accelerator = Accelerator(deepspeed_plugin=plugin)
        try:
            model = accelerator.prepare(tiny())
            with torch.no_grad():
                out = model(torch.randn(1, 8))
            return f"{type(model).__name__}, output {tuple(out.shape)}"
        finally:
            AcceleratorState._reset_state(True)

    for stage in (2, 3):
        attempt(f"accelerate prepare(model) only, stage {stage}", lambda: accelerate_prepare(stage))

try:
    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
    transformers.logging.set_verbosity_error()
except ImportError:
    transformers = None
    print("transformers not importable: skipping the Trainer cases", flush=True)


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        ids = (torch.arange(8) + i) % 16
        return {"input_ids": ids, "labels": ids}


def trainer_for(stage):
    config = {"train_micro_batch_size_per_gpu": "auto", "train_batch_size": "auto",
              "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": stage}}
    args = TrainingArguments(output_dir=tempfile.mkdtemp(), deepspeed=config, per_device_train_batch_size=2,
                             per_device_eval_batch_size=2, max_steps=1, report_to=[], save_strategy="no",
                             disable_tqdm=True)
    model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=16, n_positions=16,
                                       bos_token_id=0, eos_token_id=0))
    return Trainer(model=model, args=args, train_dataset=Tokens(), eval_dataset=Tokens())


def evaluate(stage, train_first=False):
    trainer = trainer_for(stage)
    if train_first:
        trainer.train()
    return {k: round(v, 3) for k, v in trainer.evaluate().items() if k == "eval_loss"}


if transformers is not None:
    print(f"transformers {transformers.__version__}", flush=True)
    attempt("Trainer.evaluate() before training, stage 2", lambda: evaluate(2))
    attempt("Trainer.evaluate() before training, stage 3", lambda: evaluate(3))
    attempt("Trainer.train() then evaluate(), stage 2", lambda: evaluate(2, train_first=True))


def stage0_copy():
    # what TRL's prepare_deepspeed does for a frozen reference model when the run is not ZeRO-3
    training_config = {"train_batch_size": 1, "zero_optimization": {"stage": 2}}
    inference_config = copy.deepcopy(training_config)
    inference_config["zero_optimization"]["stage"] = 0
    engine = deepspeed.initialize(model=tiny(), config=inference_config)[0]
    engine.eval()
    with torch.no_grad():
        return f"output {tuple(engine(torch.randn(1, 8)).shape)}"


attempt("frozen model with a stage-0 copy of a stage-2 config", stage0_copy)
