"""Reproduce a training script that stops at argument parsing because a required option is missing.

Run without arguments, in a scratch folder, on the CPU, with no process group and no GPU.
The script writes a small `train.py` whose options come from dataclasses the way
transformers' HfArgumentParser builds them (a field without a default becomes a required
option spelled `--dataset_name` and `--dataset-name`), then:

1. starts it with plain `python` and without the required options: argparse prints the usage
   line and `train.py: error: the following arguments are required: --dataset_name/--dataset-name,
   --output_dir` and the process exits with status 2, before anything is imported or loaded;
2. starts the same command under `python -m torch.distributed.run --nproc-per-node 1` (torchrun):
   the worker prints the same line, and the elastic agent adds `failed (exitcode: 2) local_rank: 0`
   and the ChildFailedError box, whose exitcode is 2;
3. shows the launch-script cause seen in public threads: a commented-out line inside a `\\`
   continuation ends the command there, so the options after it never reach the script, and
   the shell then tries to run them as a command of their own;
4. builds the dataclass from a config dict without the key (what parse_dict, parse_yaml_file and
   parse_json_file do), which raises a TypeError instead of the argparse error;
5. runs torchrun without a training script, so that the launcher's own parser reports its
   required positional arguments.
"""
import os
import shutil
import subprocess
import sys

TRAIN = '''\
import argparse
import dataclasses
import sys
from dataclasses import dataclass, field


@dataclass
class ScriptArguments:
    dataset_name: str = field(metadata={"help": "Dataset name."})   # no default: required
    dataset_split: str = "train"


@dataclass
class TrainingArguments:
    output_dir: str = field(metadata={"help": "Where to write checkpoints."})
    learning_rate: float = 1e-5


def build_parser(*dataclass_types):
    # same rule as transformers' HfArgumentParser: --name and --name-with-dashes,
    # required=True when the field has neither a default nor a default_factory
    parser = argparse.ArgumentParser()
    for dtype in dataclass_types:
        for f in dataclasses.fields(dtype):
            names = ["--" + f.name]
            if "_" in f.name:
                names.append("--" + f.name.replace("_", "-"))
            kwargs = {"type": f.type if isinstance(f.type, type) else str, "dest": f.name}
            if f.default is not dataclasses.MISSING:
                kwargs["default"] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                kwargs["default"] = f.default_factory()
            else:
                kwargs["required"] = True
            parser.add_argument(*names, **kwargs)
    return parser


if len(sys.argv) == 3 and sys.argv[1] == "--from-dict":
    # the config-file path: build each dataclass from the keys that match its fields
    config = {"dataset": "trl-lib/tldr", "output_dir": "out"}   # key misnamed: 'dataset'
    for dtype in (ScriptArguments, TrainingArguments):
        names = {f.name for f in dataclasses.fields(dtype)}
        dtype(**{k: v for k, v in config.items() if k in names})
else:
    ns = build_parser(ScriptArguments, TrainingArguments).parse_args()
    print(f"== train.py parsed its arguments: {vars(ns)}", flush=True)
'''


def run(cmd, **kwargs):
    shown = cmd if isinstance(cmd, str) else " ".join(cmd)
    print("\n$ " + shown, flush=True)
    rc = subprocess.call(cmd, timeout=90, **kwargs)
    print(f"== exit status {rc}", flush=True)
    return rc


def main():
    with open("train.py", "w") as f:
        f.write(TRAIN)
    py = sys.executable
    torchrun = [py, "-m", "torch.distributed.run", "--nproc-per-node", "1",
                "--master-addr", "127.0.0.1", "--master-port", "0"]

    # 1. plain python, required options missing: argparse exits with status 2
    run([py, "train.py", "--learning_rate", "2e-5"])
    # 2. the same under torchrun: one error per worker, then the agent's exitcode 2
    run(torchrun + ["train.py", "--learning_rate", "2e-5"])
    # 3. a commented-out line inside a backslash continuation drops every option after it
    bash = shutil.which("bash")
    if bash:
        script = (f"{py} train.py \\\n"
                  "    --dataset_name trl-lib/tldr \\\n"
                  "    # --learning_rate 2e-5 \\\n"
                  "    --output_dir out\n")
        with open("launch.sh", "w") as f:
            f.write(script)
        run([bash, "launch.sh"])
    # the fixed command line runs
    run([py, "train.py", "--dataset_name", "trl-lib/tldr", "--output_dir", "out"])
    # 4. config-file path: the dataclass is built without the key
    run([py, "train.py", "--from-dict", "config.yaml"])
    # 5. the launcher's own parser: no training script given
    run([py, "-m", "torch.distributed.run", "--nproc-per-node", "1"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
