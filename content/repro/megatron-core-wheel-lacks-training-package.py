"""Reproduce a Megatron-LM training script failing against a pip-installed megatron-core.

The megatron-core wheel (0.5.0, 0.6.0 and 0.16.1 inspected with `unzip -l`) holds
only megatron/core/...: there is no megatron/__init__.py and no
megatron/training, megatron/legacy or (before 0.6) megatron/optimizer. Python
therefore treats `megatron` as a namespace package that contains `core` only.

This script lays out the same files (not the real code) in a scratch folder:

    site/megatron/core/...            what `pip install megatron-core` puts in site-packages
    Megatron-LM/megatron/core/...     a source checkout (core_v0.6.0 to core_v0.16.x layout)
    Megatron-LM/megatron/training/...
    Megatron-LM/megatron/legacy/...
    job/train.py                      a training script that lives outside the checkout

and runs the training-side imports with only `site` on the path, the way a
framework, a Ray actor or a torchrun worker started elsewhere sees them. Every
import of a training-side module fails with CPython's own message, e.g.
    ModuleNotFoundError: No module named 'megatron.training'
then the same imports succeed once the checkout is put on PYTHONPATH, because
the namespace package `megatron` then spans both folders.
The same lines come from the real megatron_core 0.5.0 and 0.16.1 wheels
(installed with pip --target, Python 3.11.7). Observed with torch 2.13.0+cpu.
"""
import os
import subprocess
import sys
import tempfile
import textwrap


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))


def layout(root):
    # the wheel: megatron/core only, no megatron/__init__.py
    write(os.path.join(root, "site", "megatron", "core", "__init__.py"), "from . import parallel_state\n")
    write(os.path.join(root, "site", "megatron", "core", "parallel_state.py"), "def model_parallel_is_initialized():\n    return False\n")
    # the checkout: core plus the training-side packages
    mlm = os.path.join(root, "Megatron-LM", "megatron")
    write(os.path.join(mlm, "core", "__init__.py"), "")
    write(os.path.join(mlm, "training", "__init__.py"), "from .global_vars import get_args\n")
    write(os.path.join(mlm, "training", "global_vars.py"), "def get_args():\n    return 'args'\n")
    write(os.path.join(mlm, "training", "arguments.py"), "def parse_args():\n    return 'parsed'\n")
    write(os.path.join(mlm, "legacy", "__init__.py"), "")
    write(os.path.join(mlm, "legacy", "model", "__init__.py"), "class GPTModel:\n    pass\n")


def run(root, label, statement, with_checkout=False):
    job = os.path.join(root, "job")
    write(os.path.join(job, "train.py"), statement + "\nprint('imports ok; megatron spans', len(list(__import__('megatron').__path__)), 'folder(s)')\n")
    paths = [os.path.join(root, "Megatron-LM")] if with_checkout else []
    paths.append(os.path.join(root, "site"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    print(f"--- {label}: {statement}", flush=True)
    out = subprocess.run([sys.executable, "-s", os.path.join(job, "train.py")], env=env, cwd=job,
                         capture_output=True, text=True, check=False)
    text = (out.stdout + out.stderr).strip().splitlines()
    print("\n".join(text[-2:]) if out.returncode else text[-1], flush=True)


def main():
    with tempfile.TemporaryDirectory() as root:
        layout(root)
        run(root, "wheel only", "import megatron.core")
        run(root, "wheel only", "from megatron.training import get_args")
        run(root, "wheel only", "from megatron.training.arguments import parse_args")
        run(root, "wheel only", "from megatron.legacy.model import GPTModel")
        run(root, "wheel only, pre-0.6 script", "from megatron.optimizer import DistributedOptimizer")
        run(root, "wheel only, pre-0.6 script", "from megatron import get_args")
        run(root, "checkout on PYTHONPATH", "from megatron.training import get_args; from megatron.legacy.model import GPTModel",
            with_checkout=True)


if __name__ == "__main__":
    main()
