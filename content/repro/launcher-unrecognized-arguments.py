"""Reproduce argparse's "unrecognized arguments" at launch, from both sides.

Run without arguments, the script writes three tiny training scripts into the
current (scratch) folder and starts them with the launchers of the installed
PyTorch, one process each, on the CPU, without any process group:

1. `python -m torch.distributed.launch --nproc_per_node 1 legacy_train.py`
   where legacy_train.py declares only `--local_rank`. Since PyTorch 2.0.0 the
   launcher appends the dashed `--local-rank=0`, which that parser does not
   know, so the worker exits with argparse's status 2 before any training code
   runs:

       legacy_train.py: error: unrecognized arguments: --local-rank=0
       ... failed (exitcode: 2) local_rank: 0 (pid: N) of binary: .../python

2. The same launcher with `--use-env` (it then passes no argument and only sets
   LOCAL_RANK), and a script that declares both spellings without it: both run.

3. The launcher itself rejects an option it does not have, here DeepSpeed's
   `--num_gpus` given to torchrun and accelerate's `--num_processes` given to
   `python -m torch.distributed.launch`. Nothing is started; the launcher's
   own parser exits with status 2:

       torchrun: error: unrecognized arguments: --num_gpus
       launch.py: error: unrecognized arguments: --num_processes

   An empty shell variable has the same effect: with `--nproc_per_node $NGPU`
   and NGPU unset, the script path is taken as the process count and the
   script's first option reaches torchrun ("unrecognized arguments: --epochs").
"""
import os
import subprocess
import sys

LEGACY = '''\
import argparse
p = argparse.ArgumentParser()
p.add_argument("--local_rank", type=int, default=0)   # underscore only
p.add_argument("--epochs", type=int, default=1)
args = p.parse_args()
print(f"== legacy_train.py runs: args.local_rank={args.local_rank} LOCAL_RANK={__import__('os').environ.get('LOCAL_RANK')}", flush=True)
'''

BOTH = '''\
import argparse, os
p = argparse.ArgumentParser()
p.add_argument("--local-rank", "--local_rank", dest="local_rank", type=int,
               default=int(os.environ.get("LOCAL_RANK", 0)))
p.add_argument("--epochs", type=int, default=1)
args = p.parse_args()
print(f"== both_train.py runs: args.local_rank={args.local_rank} LOCAL_RANK={os.environ.get('LOCAL_RANK')}", flush=True)
'''


def run(cmd):
    print("\n$ " + " ".join(cmd), flush=True)
    env = dict(os.environ, PYTHONWARNINGS="ignore::FutureWarning")
    rc = subprocess.call(cmd, timeout=60, env=env)
    print(f"== exit status {rc}", flush=True)
    return rc


def main():
    with open("legacy_train.py", "w") as f:
        f.write(LEGACY)
    with open("both_train.py", "w") as f:
        f.write(BOTH)
    py = sys.executable
    launch = [py, "-m", "torch.distributed.launch", "--nproc_per_node", "1",
              "--master_addr", "127.0.0.1", "--master_port", "0"]

    # 1. the launcher appends --local-rank=0; the script only knows --local_rank
    run(launch + ["legacy_train.py", "--epochs", "2"])
    # 2. two ways out: no argument at all (--use-env), or accept both spellings
    run(launch + ["--use-env", "legacy_train.py", "--epochs", "2"])
    run(launch + ["both_train.py", "--epochs", "2"])

    # 3. the launcher's own parser refuses an option of another launcher
    torchrun = os.path.join(os.path.dirname(py), "torchrun")
    if os.path.exists(torchrun):
        run([torchrun, "--nproc_per_node", "1", "--num_gpus", "1", "both_train.py"])
        # `torchrun --nproc_per_node $NGPU both_train.py --epochs 2` with NGPU empty:
        # the script path becomes the value of --nproc_per_node, and the script's
        # own --epochs is left to torchrun's parser
        run([torchrun, "--nproc_per_node", "both_train.py", "--epochs", "2"])
    run([py, "-m", "torch.distributed.launch", "--num_processes", "1", "both_train.py"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
