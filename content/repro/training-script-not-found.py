"""Reproduce "can't open file ... [Errno 2] No such file or directory" under torchrun.

Run without arguments, the script works in the current (scratch) folder. It
writes a tiny training script to project/train.py and starts torchrun (the
one next to this Python, else `python -m torch.distributed.run`) on the CPU,
without any process group, four times:

1. `torchrun --nproc-per-node 2 does_not_exist.py`: both workers are
   started, neither finds its script, CPython prints one line per worker and
   exits with status 2, and the elastic agent summarises it:

       .../python3: can't open file '<scratch>/does_not_exist.py': [Errno 2] No such file or directory
       ... failed (exitcode: 2) local_rank: 0 (pid: N) of binary: .../python3
       torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
         exitcode  : 2 (pid: N)

2. `torchrun --nproc-per-node 2 train.py` from the scratch folder although
   the file is project/train.py: the relative path is resolved against the
   workers' working directory (torchrun's own, the workers inherit it), and
   from Python 3.9 on the message shows that absolute path. Started from
   project/ (or with an absolute path) the same command runs.

3. `torchrun --standalone 2 project/train.py`: `--standalone` takes no
   value, so "2" becomes the script name and the real script its argument.

4. `torchrun --nproc-per-node 1 project/`: a directory (an empty script
   variable in `"$DIR/$SCRIPT"`) is run as a package, and CPython prints
   "can't find '__main__' module in '<dir>'" with status 1.
"""
import os
import socket
import subprocess
import sys

TRAIN = '''\
import os
print(f"== train.py runs: rank {os.environ.get('RANK')} of {os.environ.get('WORLD_SIZE')}, cwd {os.getcwd()}", flush=True)
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launcher():
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    if os.path.exists(torchrun):
        return [torchrun]
    return [sys.executable, "-m", "torch.distributed.run"]


def run(args, cwd="."):
    cmd = launcher() + args
    print(f"\n$ (cd {os.path.abspath(cwd)}) " + " ".join(cmd), flush=True)
    rc = subprocess.call(cmd, cwd=cwd, timeout=60)
    print(f"== exit status {rc}", flush=True)
    return rc


def main():
    os.makedirs("project", exist_ok=True)
    with open(os.path.join("project", "train.py"), "w") as f:
        f.write(TRAIN)
    rdzv = ["--master-addr", "127.0.0.1"]

    # 1. the script does not exist at all
    run(["--nproc-per-node", "2"] + rdzv + ["--master-port", str(free_port()), "does_not_exist.py", "--epochs", "1"])
    # 2. the script exists, but not relative to the directory the workers run in
    run(["--nproc-per-node", "2"] + rdzv + ["--master-port", str(free_port()), "train.py", "--epochs", "1"])
    run(["--nproc-per-node", "2"] + rdzv + ["--master-port", str(free_port()), "train.py", "--epochs", "1"], cwd="project")
    run(["--nproc-per-node", "2"] + rdzv + ["--master-port", str(free_port()),
         os.path.abspath(os.path.join("project", "train.py")), "--epochs", "1"])
    # 3. a flag given a value: the value is taken as the script
    run(["--standalone", "2", os.path.join("project", "train.py")])
    # 4. a directory instead of a file
    run(["--nproc-per-node", "1"] + rdzv + ["--master-port", str(free_port()), "project" + os.sep])
    return 0


if __name__ == "__main__":
    sys.exit(main())
