"""Reproduce CPython aborting a training process with a refcount fatal error.

A C extension that hands out a reference it does not own (for example it
returns Py_None without Py_INCREF) takes one reference away from None on
every call. The stand-in for that extension here is ctypes calling
Py_DecRef(None) a few thousand times per training step. On CPython 3.11 and
older, None's reference count eventually reaches zero and the interpreter
aborts (SIGABRT) with

    Fatal Python error: none_dealloc: deallocating None: bug likely caused by a refcount error in a C extension

(3.9 and 3.10 print the text without ': bug likely caused ...'). No Python
exception is raised, so no try/except and no `finally` block runs. Three
cases, each in its own process:

1. The None leak inside a single-process CPU training loop.
2. The same leak on True (Py_DecRef(True)): 'deallocating True or False'
   (CPython 3.11 only; 3.12+ make True, False and None immortal).
3. The None leak on one rank of a 2-rank torchrun job (gloo, CPU,
   127.0.0.1, a free port): the elastic agent reports exitcode -6 and
   'Signal 6 (SIGABRT) received by PID N'; the other rank is torn down.

On CPython 3.12 and later the same script trains to the end: Py_DecRef on
an immortal object does nothing.
"""
import ctypes
import os
import socket
import subprocess
import sys

STEPS = 400
LEAKS_PER_STEP = 4000

py_decref = ctypes.pythonapi.Py_DecRef
py_decref.argtypes = [ctypes.py_object]
py_decref.restype = None


def buggy_extension_call(obj):
    """Stands in for a C function that releases a reference it never took."""
    for _ in range(LEAKS_PER_STEP):
        py_decref(obj)


def train(obj, tag=""):
    import torch

    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(STEPS):
        x, y = torch.randn(32, 16), torch.randn(32, 1)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        buggy_extension_call(obj)
        if step % 5 == 0:
            print(f"{tag}step {step} loss {loss.item():.4f} sys.getrefcount(None)={sys.getrefcount(None)}", flush=True)
    print(f"{tag}finished {STEPS} steps (no abort: None/True are immortal on this Python)", flush=True)


def worker():
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    t = torch.ones(2)
    dist.all_reduce(t)
    print(f"rank {rank}: all_reduce ok {t.tolist()}", flush=True)
    if rank == 1:
        train(None, tag="rank 1: ")
    dist.barrier()  # rank 0 waits here for rank 1, which never arrives
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args, **kw):
    rc = subprocess.call([sys.executable, os.path.abspath(__file__)] + args, timeout=50, **kw)
    print(f"== exit status {rc} (negative: killed by that signal; -6 is SIGABRT)", flush=True)


if __name__ == "__main__":
    if "--none" in sys.argv:
        train(None)
    elif "--true" in sys.argv:
        train(True)
    elif "--worker" in sys.argv:
        worker()
    else:
        print("Python", sys.version.split()[0], flush=True)
        print("== 1. an extension that leaks references to None, single process", flush=True)
        run(["--none"])
        print("== 2. the same leak on True", flush=True)
        run(["--true"])
        print("== 3. the None leak on rank 1 of a 2-rank torchrun job", flush=True)
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=2",
               "--master-addr=127.0.0.1", f"--master-port={free_port()}", "--max-restarts=0",
               "--monitor-interval=0.5", os.path.abspath(__file__), "--worker"]
        rc = subprocess.call(cmd, timeout=50)
        print(f"== torchrun exit status {rc}", flush=True)
