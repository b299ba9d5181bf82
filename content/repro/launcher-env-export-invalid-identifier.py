"""Reproduce `colossalai run`'s environment export being rejected by bash.

Run without arguments, the script starts a "launcher" child process twice, each
time with one environment entry whose name bash cannot export:

1. an entry with an empty name (the C string `=/usr/bin/supervisord`), passed
   with `subprocess` and no shell in between, as a notebook kernel or a
   service would pass it;
2. a dotted name, `MY.VAR=x`.

The child collects its environment the way ColossalAI's launcher does
(`colossalai/cli/launcher/run.py`: every entry with a non-empty, single-line
value) and then:

* if `fabric` is importable and COLOSSALAI_LAUNCHER_SRC names one or more
  folders (separated by `:`) holding a copy of ColossalAI's
  `colossalai/cli/launcher/multinode_runner.py` and `hostinfo.py` at some tag,
  it runs ColossalAI's own `MultiNodeRunner` for host 127.0.0.1 with the torchrun
  command that release builds; ColossalAI prints `Error: failed to run ...` and
  the host reports `failure`;
* otherwise it runs the line that invoke would build, `cd <dir> && export
  <name="value" ...> && torchrun ...`, with `/bin/bash -c`, and prints bash's
  exit status.

Either way /bin/bash prints, for example:

    /bin/bash: line 1: export: `=/usr/bin/supervisord': not a valid identifier
    /bin/bash: line 1: export: `MY.VAR=x': not a valid identifier

and torchrun is never started (a stub `torchrun` on PATH would say so).
"""
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import importlib.util, os, subprocess, sys, types

env = {k: v for k, v in os.environ.items() if v and "\n" not in v}  # as run.py does
workdir = os.path.abspath(".")
srcs = [p for p in os.environ.get("COLOSSALAI_LAUNCHER_SRC", "").split(":") if p]
try:
    import fabric  # noqa: F401
except ImportError:
    srcs = []

def load(src):
    pkg = types.ModuleType("cai_launcher"); pkg.__path__ = [src]; sys.modules["cai_launcher"] = pkg
    mods = {}
    for name in ("hostinfo", "multinode_runner"):
        spec = importlib.util.spec_from_file_location("cai_launcher." + name, os.path.join(src, name + ".py"))
        mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
        mods[name] = mod
    return mods

def command(src):
    text = open(os.path.join(src, "multinode_runner.py")).read()
    if "is localhost" in text:  # v0.3.1 and later: master_addr/master_port
        return ("torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 "
                "--master_addr=127.0.0.1 --master_port=29500 train.py")
    return ("torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --rdzv_backend=c10d "
            "--rdzv_endpoint=127.0.0.1:29500 --rdzv_id=colossalai-default-job train.py")

if srcs:
    for src in srcs:
        print(f"--- ColossalAI launcher code from {src}", flush=True)
        mods = load(src)
        HostInfo, HostInfoList = mods["hostinfo"].HostInfo, mods["hostinfo"].HostInfoList
        pool = HostInfoList(); pool.append(HostInfo(hostname="127.0.0.1", port=None))
        runner = mods["multinode_runner"].MultiNodeRunner()
        runner.connect(host_info_list=pool, workdir=workdir, env=env)
        runner.send(hostinfo=pool.hostinfo_list[0], cmd=command(src))
        for host, msg in runner.recv_from_all().items():
            print(f"{host}: {msg}", flush=True)
        runner.stop_all(); runner.recv_from_all()
else:
    env_msg = " ".join([f'{k}="{v}"' for k, v in env.items()])
    line = f"cd {workdir} && export {env_msg} && torchrun --nproc_per_node=4 train.py"
    rc = subprocess.run(["/bin/bash", "-c", line]).returncode
    print(f"bash exit status: {rc}", flush=True)
'''


def main() -> int:
    work = tempfile.mkdtemp(prefix="launcher-env-export-")
    stub_dir = os.path.join(work, "bin")
    os.makedirs(stub_dir)
    stub = os.path.join(stub_dir, "torchrun")
    with open(stub, "w") as f:
        f.write("#!/bin/sh\necho 'torchrun started'\n")
    os.chmod(stub, 0o755)
    base = {"PATH": stub_dir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work}
    for key in ("PYTHONPATH", "COLOSSALAI_LAUNCHER_SRC"):
        if key in os.environ:
            base[key] = os.environ[key]
    cases = [("empty name", {"": "/usr/bin/supervisord"}), ("dotted name", {"MY.VAR": "x"})]
    for label, extra in cases:
        print(f"=== launcher environment with an entry of {label}", flush=True)
        subprocess.run([sys.executable, "-c", CHILD], env={**extra, **base}, cwd=work,
                       stderr=subprocess.STDOUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
