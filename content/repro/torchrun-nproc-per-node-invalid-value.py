"""Reproduce torchrun's refusal of a --nproc-per-node value it cannot read.

Run without arguments, the script writes a tiny training script and an
MMAction2-style wrapper (CONFIG=$1, GPUS=$2, then
`python -m torch.distributed.launch --nproc_per_node=$GPUS ... train.py $CONFIG
--launcher pytorch ${@:3}`) into the current (scratch) folder and calls the
wrapper the right way and the wrong ways, on the CPU, one process, without a
process group:

1. `bash dist_train.sh cfg.py --work-dir out 1`: the arguments are out of
   order, so GPUS is "--work-dir" and the launcher stops before any worker
   starts with

       ValueError: Unsupported nproc_per_node value: --work-dir

2. `bash dist_train.sh cfg.py`: GPUS is empty, and the same error names an
   empty value.

3. `torchrun --nproc-per-node=gpu` (and `=xpu`) on a machine without the
   device: "Cuda is not available." / "Xpu is not available."; `=cuda` is not
   a keyword at all.

4. `bash dist_train.sh cfg.py 1 --work-dir out` and `torchrun
   --nproc-per-node=1`: both start the worker. (`auto` would also work here,
   but starts one worker per CPU core when no accelerator is present.)
"""
import os
import subprocess
import sys

TRAIN = '''\
import argparse, os
p = argparse.ArgumentParser()
p.add_argument("config")
p.add_argument("--launcher", default="none")
p.add_argument("--work-dir", default=None)
p.add_argument("--local-rank", "--local_rank", dest="local_rank", type=int, default=0)
a = p.parse_args()
print(f"== train.py runs: config={a.config} work_dir={a.work_dir} "
      f"LOCAL_RANK={os.environ.get('LOCAL_RANK')} LOCAL_WORLD_SIZE={os.environ.get('LOCAL_WORLD_SIZE')}", flush=True)
'''

WRAPPER = '''\
#!/usr/bin/env bash
CONFIG=$1
GPUS=$2
PORT=${PORT:-29500}
"$PYTHON" -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \\
    $(dirname "$0")/train.py $CONFIG --launcher pytorch ${@:3}
'''


def run(cmd, env):
    print("\n$ " + " ".join(cmd), flush=True)
    rc = subprocess.call(cmd, timeout=60, env=env)
    print(f"== exit status {rc}", flush=True)
    return rc


def main():
    with open("train.py", "w") as f:
        f.write(TRAIN)
    with open("dist_train.sh", "w") as f:
        f.write(WRAPPER)
    with open("cfg.py", "w") as f:
        f.write("model = dict()\n")
    py = sys.executable
    env = dict(os.environ, PYTHON=py, PORT="0", PYTHONWARNINGS="ignore::FutureWarning",
               CUDA_VISIBLE_DEVICES="")

    # 1. arguments out of order: GPUS receives "--work-dir"
    run(["bash", "dist_train.sh", "cfg.py", "--work-dir", "out", "1"], env)
    # 2. GPU count forgotten: GPUS is empty
    run(["bash", "dist_train.sh", "cfg.py"], env)

    torchrun = [py, "-m", "torch.distributed.run", "--master-port", "0"]
    # 3. device keywords without the device, and a keyword that does not exist
    for value in ("gpu", "xpu", "cuda"):
        run(torchrun + [f"--nproc-per-node={value}", "train.py", "cfg.py"], env)

    # 4. the fixes: right order, or an explicit number
    run(["bash", "dist_train.sh", "cfg.py", "1", "--work-dir", "out"], env)
    env_auto = dict(env, OMP_NUM_THREADS="1")
    run(torchrun + ["--nproc-per-node=1", "train.py", "cfg.py"], env_auto)


if __name__ == "__main__":
    main()
