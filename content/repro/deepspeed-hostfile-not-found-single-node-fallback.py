"""The deepspeed launcher does not find its hostfile and shrinks a multi-node job to this machine.

Runs the real launcher (deepspeed.launcher.runner, what the `deepspeed` command calls) on CPU
four times, from a scratch folder that holds no file named `hostfile`:

1. `--hostfile hostfile --master_addr 10.0.0.1`: the path does not exist, so the runner logs
   "Unable to find hostfile, will proceed with training with local resources only.", builds a
   pool of `localhost` only, replaces the given address with 127.0.0.1 and starts one local
   launcher; the worker reports WORLD_SIZE equal to the local device count.
2. The same with a directory named `hostfile/` (as when a volume is mounted where the file
   should be): os.path.isfile() is false, so the result is the same.
3. `--hostfile hostfile --num_nodes 2`: a node count above one makes the same missing file fatal,
   "ValueError: Num nodes is >1 but no extra nodes available via hostfile".
4. `--hostfile hostfile --include worker-1:0`: a filter that names another host fails against the
   localhost-only pool with "ValueError: Hostname 'worker-1' not found in hostfile".

Needs DeepSpeed next to PyTorch (recorded with torch 2.13.0 CPU and deepspeed 0.19.4; the
runner's wording is the same from 0.3.0 to 0.19.5, and in 0.1.0-0.2.0 under
deepspeed/pt/deepspeed_run.py). DS_ACCELERATOR=cpu makes the launcher count
CPU "devices" instead of GPUs.
"""
import os
import subprocess
import sys

WORKER = """import os
print("worker: RANK", os.environ.get("RANK"), "WORLD_SIZE", os.environ.get("WORLD_SIZE"),
      "MASTER_ADDR", os.environ.get("MASTER_ADDR"), flush=True)
"""


def launch(*args):
    cmd = [sys.executable, "-m", "deepspeed.launcher.runner", *args]
    print("$ deepspeed " + " ".join(args), flush=True)
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=150,
                         env=dict(os.environ, DS_ACCELERATOR="cpu"))
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    keep = [line for line in lines if "real_accelerator.py" not in line and "pynvml" not in line]
    print("\n".join(keep[-12:]), flush=True)
    print(f"exit status {run.returncode}\n", flush=True)


if __name__ == "__main__":
    with open("worker.py", "w") as f:
        f.write(WORKER)
    if os.path.exists("hostfile"):
        sys.exit("run this from a folder without a file named hostfile")
    launch("--hostfile", "hostfile", "--master_addr", "10.0.0.1", "--master_port", "29561", "worker.py")
    os.mkdir("hostfile")
    launch("--hostfile", "hostfile", "--master_port", "29562", "worker.py")
    os.rmdir("hostfile")
    launch("--hostfile", "hostfile", "--num_nodes", "2", "worker.py")
    launch("--hostfile", "hostfile", "--include", "worker-1:0", "worker.py")
