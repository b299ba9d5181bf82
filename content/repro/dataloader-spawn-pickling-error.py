"""Reproduce the pickling failures of DataLoader workers started with spawn.

With the spawn (and forkserver) start method a worker is a fresh Python
process: the dataset, the collate_fn, worker_init_fn and everything they hold
are pickled in the main process and unpickled in the worker. Windows and macOS
use spawn by default; here it is requested with multiprocessing_context="spawn"
so the script shows the same failures on Linux:

1. collate_fn defined inside a function: pickling fails in the main process
   while the worker is being started,

       AttributeError: Can't pickle local object 'main.<locals>.local_collate'

   (recent PyTorch first warns "Got pickle error when attempting to start a
   worker Process. ...").
2. A dataset holding an open file handle:

       TypeError: cannot pickle '_io.BufferedReader' object

3. A dataset class defined in an interactive __main__ (a notebook cell,
   `python -c`, a REPL): pickling by reference works in the parent, but the
   spawned worker cannot find the class when it unpickles it and exits,

       AttributeError: Can't get attribute 'Squares' on <module '__main__' (built-in)>

   and the main process only reports "DataLoader worker (pid(s) N) exited
   unexpectedly". The interactive session is simulated with `python -c`.
4. A script without the `if __name__ == "__main__":` guard: the spawned
   worker re-imports the script as `__mp_main__`, reaches the DataLoader again
   and multiprocessing refuses to start a process from a process that is
   still starting:

       RuntimeError:
               An attempt has been made to start a new process before the
               current process has finished its bootstrapping phase.

The fix (a module-level collate function, files opened lazily in the worker,
the main guard) is checked by the entry's verify steps; it is left out here to
keep the script under a minute.

Cases 3 and 4 run as child Pythons at the same time, to keep the script short.
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import traceback

import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        return torch.tensor([idx * idx])


class HoldsOpenFile(Squares):
    def __init__(self, path):
        self.fh = open(path, "rb")  # noqa: SIM115 - opened in the main process: not picklable


def iterate(label, dataset, **kwargs):
    print(f"== {label}", flush=True)
    try:
        loader = DataLoader(dataset, batch_size=4, num_workers=1,
                            multiprocessing_context="spawn", **kwargs)
        total = sum(int(b.sum()) for b in loader)
        print("ok, sum of squares:", total, flush=True)
        return True
    except Exception:  # noqa: BLE001 - pickling raises AttributeError, TypeError or PicklingError
        traceback.print_exc()
        return False


INTERACTIVE = textwrap.dedent("""
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Squares(Dataset):
        def __len__(self):
            return 8
        def __getitem__(self, idx):
            return torch.tensor([idx * idx])

    loader = DataLoader(Squares(), batch_size=4, num_workers=1, multiprocessing_context="spawn")
    for batch in loader:
        print(batch.tolist())
""")


NO_MAIN_GUARD = textwrap.dedent("""
    import torch
    from torch.utils.data import DataLoader

    loader = DataLoader(list(range(8)), batch_size=4, num_workers=1, multiprocessing_context="spawn")
    for batch in loader:  # runs again in every spawned worker: no __main__ guard
        print(batch.tolist())
""")


def main():
    def local_collate(batch):
        return torch.cat(batch)

    results = [
        iterate("1. collate_fn defined inside main()", Squares(), collate_fn=local_collate),
        iterate("2. dataset holding an open file", HoldsOpenFile(__file__)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train_no_guard.py")
        with open(script, "w") as f:
            f.write(NO_MAIN_GUARD)
        children = {
            "3. dataset class defined in an interactive __main__ (python -c)":
                subprocess.Popen([sys.executable, "-c", INTERACTIVE], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True),
            "4. script without the __main__ guard":
                subprocess.Popen([sys.executable, script], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True),
        }
        for label, child in children.items():
            out, _ = child.communicate(timeout=150)
            print(f"== {label} (exit status {child.returncode})", flush=True)
            print(out, flush=True)
            results.append(child.returncode == 0)
    if not all(results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
