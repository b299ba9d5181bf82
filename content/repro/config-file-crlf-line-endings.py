"""Reproduce what a config or launch script saved with Windows (CRLF) line ends does on Linux.

Run without arguments, the script works in the current (scratch) folder. It
writes a tiny training script (argparse with `choices`, a data file it opens,
one gloo all-reduce on the CPU), a `config.env` whose lines end in CR LF, and
several launch scripts, then runs them with bash:

1. `launch.sh` (LF) sources `config.env` (CRLF). The blank line of the env
   file is a command named "\\r", and every value keeps a trailing CR:

       config.env: line 3: $'\\r': command not found
       train.py: error: argument --mixed_precision: invalid choice: 'bf16\\r' (choose from ...)

2. The same with a valid precision on the command line: the data path from
   the env file still ends in CR and the open fails:

       FileNotFoundError: [Errno 2] No such file or directory: 'data/train.jsonl\\r'

   A number (`EPOCHS=2\\r`) passes, because int() strips whitespace.

3. A CRLF launch script with a `for ... do` loop: bash stops at parse time
   with `syntax error near unexpected token `$'do\\r''`.

4. A CRLF launch script with a `#!/bin/bash` line, run as `./run.sh`: bash
   4.x-5.1 and 5.3 print `/bin/bash^M: bad interpreter`, bash 5.2 prints
   `cannot execute: required file not found`.

5. The fixed env file (CR stripped) trains one step.
"""
import os
import shutil
import subprocess
import sys

TRAIN = '''\
import argparse, os
import torch
import torch.distributed as dist

p = argparse.ArgumentParser(prog="train.py")
p.add_argument("--mixed_precision", choices=["no", "fp16", "bf16"], default="no")
p.add_argument("--data_path", required=True)
p.add_argument("--epochs", type=int, default=1)
args = p.parse_args()
with open(args.data_path) as f:
    n = sum(1 for _ in f)
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "0")
dist.init_process_group("gloo", rank=0, world_size=1, init_method="tcp://127.0.0.1:0")
t = torch.ones(2)
dist.all_reduce(t)
print(f"== trained on {n} samples, {args.epochs} epoch(s), precision {args.mixed_precision}, sum {t.tolist()}", flush=True)
dist.destroy_process_group()
'''

ENV = ("# training config, saved on Windows\n"
       "MIXED_PRECISION=bf16\n"
       "\n"
       "DATA_PATH=data/train.jsonl\n"
       "EPOCHS=2\n")


def crlf(text):
    return text.replace("\n", "\r\n").encode()


def run(cmd):
    print("\n$ " + " ".join(cmd), flush=True)
    rc = subprocess.call(cmd, timeout=60)
    print(f"== exit status {rc}", flush=True)
    return rc


def main():
    bash = shutil.which("bash")
    if not bash:
        print("bash not found: nothing to reproduce")
        return 0
    py = sys.executable
    os.makedirs("data", exist_ok=True)
    with open(os.path.join("data", "train.jsonl"), "w") as f:
        f.write('{"text": "a"}\n{"text": "b"}\n')
    with open("train.py", "w") as f:
        f.write(TRAIN)
    with open("config.env", "wb") as f:
        f.write(crlf(ENV))
    # the launcher itself has LF line ends; only the sourced file is CRLF
    with open("launch.sh", "w") as f:
        f.write("set -a\n. ./config.env\nset +a\n"
                f'{py} train.py --mixed_precision="$MIXED_PRECISION" --data_path="$DATA_PATH" --epochs="$EPOCHS" "$@"\n')
    with open("launch_fp.sh", "w") as f:
        f.write("set -a\n. ./config.env\nset +a\n"
                f'{py} train.py --mixed_precision=no --data_path="$DATA_PATH" --epochs="$EPOCHS"\n')

    # 1. sourced CRLF env file: $'\r' for the blank line, invalid choice for the value
    run([bash, "launch.sh"])
    # 2. precision given literally: the CR in the data path is what fails now
    run([bash, "launch_fp.sh"])
    # 3. a CRLF launch script with a loop: parse error
    with open("sweep.sh", "wb") as f:
        f.write(crlf(f"for seed in 1 2\ndo\n  {py} train.py --data_path data/train.jsonl\ndone\n"))
    run([bash, "sweep.sh"])
    # 4. a CRLF launch script with a shebang, executed directly
    with open("run.sh", "wb") as f:
        f.write(crlf(f"#!/bin/bash\n{py} train.py --data_path data/train.jsonl\n"))
    os.chmod("run.sh", 0o755)
    run([bash, "-c", "./run.sh; true"])
    # 5. the fix: strip the CRs and run again
    with open("config.env", "rb") as f:
        fixed = f.read().replace(b"\r\n", b"\n")
    with open("config.env", "wb") as f:
        f.write(fixed)
    run([bash, "launch.sh"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
