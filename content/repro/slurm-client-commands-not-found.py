"""Reproduce a Slurm client command that is not on PATH of the process that calls it.

Submitters such as TorchX's slurm scheduler and submitit run the Slurm client
commands (sbatch, sacct, scancel, squeue, ...) as child processes, by bare
name, without a shell. On a host where none of those programs is on PATH
(a laptop, a CI runner, a container image without the Slurm client), CPython's
subprocess module raises FileNotFoundError naming the program before anything
is sent to Slurm. When the command goes through a shell instead (a submit
script, `subprocess.call(..., shell=True)` as in PyTorch Lightning's
auto-requeue fallback, `$(scontrol show hostnames ...)` in a job script run
inside a container), the shell prints its own "not found" line and exits 127.

Needs nothing beyond the standard library; it removes every directory holding a
Slurm client program from PATH first, so it behaves the same on a Slurm login
node. The calls mirror those in torchx/schedulers/slurm_scheduler.py (0.7.0)
and submitit's CommandFunction (1.5.4); neither package is imported.

Cases:
1. sbatch --parsable <script> with subprocess.run(check=True) (TorchX schedule)
2. sacct --parsable2 -j <id> (TorchX describe, behind `torchx status`/`cancel`)
3. scancel <id> (TorchX cancel)
4. squeue --json -j <id> with check_output (TorchX main branch describe)
5. sbatch <script> through subprocess.Popen (submitit's submission)
6. scontrol requeue <id> through /bin/sh (Lightning's fallback after a
   FileNotFoundError) and the exit status it gets back
7. bash running a submit line and a job-script line that call Slurm commands,
   and bash started as /bin/sh (what /bin/sh is on RHEL-family images) running
   Lightning's fallback command
8. The fix: the same call as case 1 once a directory with an sbatch program is
   on PATH (a stub that prints a job id stands in for the real client here)
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

SLURM_CLIENTS = ("sbatch", "srun", "salloc", "squeue", "sacct", "scancel", "sinfo", "scontrol")


def path_without_slurm():
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    keep = [d for d in dirs if not any(os.path.exists(os.path.join(d, c)) for c in SLURM_CLIENTS)]
    return os.pathsep.join(keep or ["/usr/bin", "/bin"])


def show(title, fn):
    print(f"--- {title}", flush=True)
    try:
        out = fn()
        print(f"no error: {out!r}", flush=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"{type(exc).__name__}: {exc}", flush=True)


def main():
    os.environ["PATH"] = path_without_slurm()
    for name in SLURM_CLIENTS:
        assert shutil.which(name) is None, name

    with open("torchx-sbatch.sh", "w") as f:
        f.write("#!/bin/bash\n#SBATCH --job-name=train-0\nsrun python train.py\n")

    show("1. TorchX schedule: sbatch --parsable",
         lambda: subprocess.run(["sbatch", "--parsable", "torchx-sbatch.sh"], stdout=subprocess.PIPE, check=True))
    show("2. TorchX describe: sacct",
         lambda: subprocess.run(["sacct", "--parsable2", "-j", "123456"], stdout=subprocess.PIPE, check=True))
    show("3. TorchX cancel: scancel",
         lambda: subprocess.run(["scancel", "123456"], check=True))
    show("4. TorchX (main) describe: squeue --json",
         lambda: subprocess.check_output(["squeue", "--json", "-j", "123456"], stderr=subprocess.PIPE, encoding="utf-8"))
    show("5. submitit-style submission: Popen(['sbatch', file])",
         lambda: subprocess.Popen(["sbatch", "torchx-sbatch.sh"], stdout=subprocess.PIPE, stderr=subprocess.PIPE).wait())

    print("--- 6. Lightning fallback: call('scontrol requeue 123456', shell=True)", flush=True)
    code = subprocess.call("scontrol requeue 123456", shell=True)
    print(f"exit status {code}", flush=True)
    code = subprocess.call("sbatch --parsable torchx-sbatch.sh", shell=True)
    print(f"exit status {code}", flush=True)

    if shutil.which("bash"):
        print("--- 7. bash", flush=True)
        code = subprocess.call(["bash", "-c", "sbatch --parsable torchx-sbatch.sh"])
        print(f"exit status {code}", flush=True)
        with open("launch.sh", "w") as f:
            f.write('#!/bin/bash\nMASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'
                    'echo "MASTER_ADDR=[$MASTER_ADDR]"\n')
        code = subprocess.call(["bash", "launch.sh"])
        print(f"exit status {code}", flush=True)
        # argv[0] is /bin/sh, so bash runs in POSIX mode as it does where /bin/sh links to bash
        code = subprocess.call(["/bin/sh", "-c", "scontrol requeue 123456"], executable=shutil.which("bash"))
        print(f"exit status {code}", flush=True)

    print("--- 8. fix: put a directory with sbatch on PATH (stub client)", flush=True)
    stub_dir = tempfile.mkdtemp(prefix="slurm-bin-")
    stub = os.path.join(stub_dir, "sbatch")
    with open(stub, "w") as f:
        f.write("#!/bin/sh\necho 424242\n")
    os.chmod(stub, os.stat(stub).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.environ["PATH"] = stub_dir + os.pathsep + os.environ["PATH"]
    print("which sbatch ->", shutil.which("sbatch"), flush=True)
    show("1 again", lambda: subprocess.run(["sbatch", "--parsable", "torchx-sbatch.sh"],
                                           stdout=subprocess.PIPE, check=True).stdout.decode().strip())
    shutil.rmtree(stub_dir)
    print(f"python {sys.version.split()[0]}", flush=True)


if __name__ == "__main__":
    main()
