"""Reproduce spawned children that cannot find a function or class of an interactive __main__.

A Jupyter cell, a REPL, `python -c` and `python -` all run code in a __main__
module that has no importable file. Functions and classes defined there are
pickled by reference ("__main__.<name>"). A child started with the spawn or
forkserver start method is a fresh interpreter whose own __main__ is empty,
and multiprocessing has no script to re-run in it, so unpickling the target
fails in the child:

    AttributeError: Can't get attribute 'train' on <module '__main__' (built-in)>

(CPython 3.6 to 3.11; 3.12 and 3.13 print the module as
`<module '__main__' (<class '_frozen_importlib.BuiltinImporter'>)>`, and 3.14
prints `AttributeError: module '__main__' has no attribute 'train'`, or
`Can't resolve path 'Trainer.step' on module '__main__'` for a dotted name.)
With `python -` the parent's __main__ claims the file '<stdin>', so the child
fails earlier, trying to re-run a file that does not exist.

The interactive session is simulated with `python -c` (and `python -` for the
last failing case). Every case is a child Python of this script; they run at
the same time to stay under a minute:

1. multiprocessing.Process, spawn context,
2. the same with the forkserver context (the Linux default from Python 3.14),
3. torch.multiprocessing.spawn (always spawn): the parent raises
   ProcessExitedException,
4. a DataLoader with a Dataset class defined in __main__ and spawn workers:
   the parent reports the worker that exited unexpectedly,
5. concurrent.futures.ProcessPoolExecutor with spawn: BrokenProcessPool,
6. code piped to `python -`: FileNotFoundError for '<stdin>',
7. the fix: the same function written to a module file and imported; the
   child finds it by module name and exits with status 0,
8. the same spawn failure, for a plain function and for a static method of a
   class (a dotted qualified name), under each of python3.12, python3.13 and
   python3.14 that is found on PATH and runs (skipped otherwise): 3.12 and
   3.13 print the BuiltinImporter form, 3.14 its own two wordings.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

PROCESS = """
    import multiprocessing as mp

    def work(i):
        print("child got", i, flush=True)

    if __name__ == "__main__":
        p = mp.get_context("{method}").Process(target=work, args=(1,))
        p.start()
        p.join()
        print("child exit code:", p.exitcode)
"""

CASES = {
    "1. multiprocessing.Process, spawn, function defined in python -c": ("-c", PROCESS.format(method="spawn")),
    "2. multiprocessing.Process, forkserver, function defined in python -c": ("-c", PROCESS.format(method="forkserver")),
    "3. torch.multiprocessing.spawn, function defined in python -c": ("-c", """
        import torch.multiprocessing as mp

        def train(rank, world_size):
            print("rank", rank, "of", world_size, flush=True)

        if __name__ == "__main__":
            mp.spawn(train, args=(1,), nprocs=1)
    """),
    "4. DataLoader, spawn workers, Dataset class defined in python -c": ("-c", """
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Squares(Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, idx):
                return torch.tensor([idx * idx])

        if __name__ == "__main__":
            loader = DataLoader(Squares(), batch_size=4, num_workers=1, multiprocessing_context="spawn")
            for batch in loader:
                print(batch.tolist())
    """),
    "5. ProcessPoolExecutor, spawn, function defined in python -c": ("-c", """
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        def square(x):
            return x * x

        if __name__ == "__main__":
            with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
                print(list(ex.map(square, range(4))))
    """),
    "6. multiprocessing.Process, spawn, code piped to python -": ("-", PROCESS.format(method="spawn")),
    "7. the fix: the function lives in a module file and is imported": ("-c", """
        import multiprocessing as mp

        from notebook_helpers import work  # written next to this session, importable by children

        if __name__ == "__main__":
            p = mp.get_context("spawn").Process(target=work, args=(1,))
            p.start()
            p.join()
            print("child exit code:", p.exitcode)
    """),
}

HELPER = """
def work(i):
    print("child got", i, flush=True)
"""

# Run by other interpreters, when present: a function and a static method of a class, both
# defined in `python -c`, as spawn targets.
OTHER = """
import multiprocessing as mp

def work(i):
    print("child got", i, flush=True)

class Trainer:
    @staticmethod
    def step(i):
        print("step", i, flush=True)

if __name__ == "__main__":
    for target in (work, Trainer.step):
        p = mp.get_context("spawn").Process(target=target, args=(1,))
        p.start()
        p.join()
        print("child exit code:", p.exitcode, "for", target.__qualname__, flush=True)
"""
OTHER_PYTHONS = ("python3.12", "python3.13", "python3.14")


def other_interpreters():
    """Yield (name, path, version) for each of OTHER_PYTHONS on PATH that really runs."""
    for name in OTHER_PYTHONS:
        path = shutil.which(name)
        if path is None:
            print(f"== 8. {name}: not on PATH, skipped", flush=True)
            continue
        try:
            probe = subprocess.run([path, "-c", "import sys; print(sys.version.split()[0])"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            probe = None
        if probe is None or probe.returncode != 0:
            print(f"== 8. {name}: does not run, skipped", flush=True)
            continue
        yield name, path, probe.stdout.strip()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "notebook_helpers.py"), "w") as f:
            f.write(HELPER)
        children = {}
        for label, (how, code) in CASES.items():
            code = textwrap.dedent(code)
            if how == "-c":
                cmd, stdin = [sys.executable, "-c", code], None
            else:
                cmd, stdin = [sys.executable, "-"], code
            child = subprocess.Popen(cmd, cwd=tmp, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
            children[label] = (child, stdin)
        for name, path, version in other_interpreters():
            label = f"8. {name} ({version}): spawn, function and static method defined in python -c"
            child = subprocess.Popen([path, "-c", textwrap.dedent(OTHER)], cwd=tmp, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            children[label] = (child, None)
        for label, (child, stdin) in children.items():
            out, _ = child.communicate(input=stdin, timeout=150)
            print(f"== {label} (exit status {child.returncode})", flush=True)
            print(out, flush=True)


if __name__ == "__main__":
    main()
