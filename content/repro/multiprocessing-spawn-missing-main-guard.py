"""Reproduce the multiprocessing "bootstrapping phase" error of scripts without a main guard.

With the spawn and forkserver start methods a child process is a fresh Python
interpreter. Before it runs its target, multiprocessing re-executes the parent's
main script under the name "__mp_main__" so that functions and classes defined
there can be unpickled. Code at the top level of an unguarded script therefore
runs again in the child; when that code starts a process, the child is still in
its start-up ("bootstrapping") phase and multiprocessing/spawn.py refuses:

    RuntimeError:
            An attempt has been made to start a new process before the
            current process has finished its bootstrapping phase.
            ...

This script writes small unguarded training-style scripts into a temporary
folder and runs each with the current Python, at the same time to stay under a
minute:

1. multiprocessing.Process with the spawn context,
2. the same with the forkserver context,
3. torch.multiprocessing.spawn (always spawn), whose parent then raises
   ProcessExitedException for the child that exited with status 1,
4. a DataLoader with num_workers=1 and multiprocessing_context="spawn", whose
   parent reports the worker that exited unexpectedly,
5. a spawn Pool: the pool replaces each dead worker, so the error repeats until
   the script is killed (here after 8 seconds).

Then it runs case 1 again with the code under `if __name__ == "__main__":` to
show that the guard is the fix.
"""
import os
import subprocess
import sys
import tempfile
import textwrap

# Cases 1 and 2: one unguarded script, started with either start method.
UNGUARDED_PROCESS = """
    import multiprocessing as mp

    def work(i):
        print("child got", i)

    ctx = mp.get_context("{method}")
    p = ctx.Process(target=work, args=(1,))
    p.start()
    p.join()
    print("child exit code:", p.exitcode)
"""

CASES = {
    "1. multiprocessing.Process, spawn context, no main guard": UNGUARDED_PROCESS.format(method="spawn"),
    "2. multiprocessing.Process, forkserver context, no main guard": UNGUARDED_PROCESS.format(method="forkserver"),
    "3. torch.multiprocessing.spawn, no main guard": """
        import torch.multiprocessing as mp

        def train(rank):
            print("rank", rank, "training")

        mp.spawn(train, nprocs=2)
    """,
    "4. DataLoader with spawn workers, no main guard": """
        from torch.utils.data import DataLoader

        loader = DataLoader(list(range(8)), batch_size=4, num_workers=1,
                            multiprocessing_context="spawn")
        for batch in loader:
            print(batch.tolist())
    """,
    "5. multiprocessing Pool, spawn context, no main guard": """
        import multiprocessing as mp

        def work(i):
            return i * i

        with mp.get_context("spawn").Pool(2) as pool:
            print(pool.map(work, range(4)))
    """,
    "6. case 1 with the main guard (the fix)": """
        import multiprocessing as mp

        def work(i):
            print("child got", i, flush=True)

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            p = ctx.Process(target=work, args=(1,))
            p.start()
            p.join()
            print("child exit code:", p.exitcode)
    """,
}

TIMEOUTS = {"5": 8}


def main():
    with tempfile.TemporaryDirectory() as tmp:
        children = {}
        for label, code in CASES.items():
            path = os.path.join(tmp, f"train_case{label[0]}.py")
            with open(path, "w") as f:
                f.write(textwrap.dedent(code))
            children[label] = subprocess.Popen([sys.executable, path], cwd=tmp, stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True)
        for label, child in children.items():
            try:
                out, _ = child.communicate(timeout=TIMEOUTS.get(label[0], 50))
                status = f"exit status {child.returncode}"
            except subprocess.TimeoutExpired:
                child.kill()
                out, _ = child.communicate()
                status = "still running, killed"
            print(f"== {label} ({status}; the error appears {out.count('bootstrapping phase')} times)", flush=True)
            if label[0] == "5":
                # The same traceback repeats for every replacement worker; show the first one.
                out = out[: out.find("\nTraceback", out.find("bootstrapping phase"))]
            print(out, flush=True)


if __name__ == "__main__":
    main()
