"""Reproduce Optuna TorchDistributedTrial's rank checks on two CPU processes (gloo).

Needs `optuna` and `optuna-integration` next to torch (optuna 3.6 and later
re-export the class from optuna-integration): a scratch virtual environment
whose site-packages has a .pth line pointing at the torch environment, or
PYTHONPATH pointing at a folder that holds them (`pip install --target DIR
optuna optuna-integration`). Checked with optuna and optuna-integration 4.5.0
on PyTorch 2.13.0 (CPU). Each case starts two fresh processes with
torch.multiprocessing and a gloo process group; nothing is downloaded.

Cases:
1. The trial holder is chosen by the wrong number: global rank 0 runs
   study.optimize but wraps None, rank 1 wraps None too. Rank 0 raises
   "Rank 0 node expects an optuna.trial.Trial instance as the trial argument."
   (Optuna logs "Trial 0 failed with parameters: {} because of the following
   error: ValueError(...)" first); rank 1 passed its check, waits in the first
   broadcast and fails when rank 0's process exits.
2. Every process runs its own study and wraps its own trial: rank 1 raises
   "Non-rank 0 node is supposed to receive None as the trial argument."
3. The right split, then a final re-run with study.best_trial (a FrozenTrial)
   on rank 0: accepted from optuna 3.2.0 on, no error.
"""
import datetime
import logging
import os
import socket
import sys
import traceback
import warnings

import torch.distributed as dist
import torch.multiprocessing as mp

import optuna
from optuna.integration import TorchDistributedTrial


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def show(rank, exc):
    line = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
    print(f"[rank{rank}] {line}", flush=True)


def worker(rank, case, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=30))
    optuna.logging.get_logger("optuna").handlers.clear()
    optuna.logging.disable_default_handler()
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("[%(levelname).1s] %(message)s"))
    logging.getLogger("optuna").addHandler(handler)
    logging.getLogger("optuna").setLevel(logging.WARNING)
    warnings.simplefilter("ignore")   # ExperimentalWarning and system_attrs FutureWarning
    try:
        if case == 1:
            def objective(trial):
                t = TorchDistributedTrial(trial if rank == 1 else None)   # wrong holder
                return t.suggest_float("x", -1.0, 1.0) ** 2
            if rank == 0:
                optuna.create_study().optimize(objective, n_trials=1)
            else:
                objective(None)
        elif case == 2:
            def objective(trial):
                t = TorchDistributedTrial(trial)                          # a trial on every rank
                return t.suggest_float("x", -1.0, 1.0) ** 2
            optuna.create_study().optimize(objective, n_trials=1)
        else:
            def objective(trial):
                t = TorchDistributedTrial(trial if rank == 0 else None)
                return t.suggest_float("x", -1.0, 1.0) ** 2
            if rank == 0:
                study = optuna.create_study()
                study.optimize(objective, n_trials=2)
                value = objective(study.best_trial)                        # a FrozenTrial
                print(f"[rank0] best_trial re-run accepted ({type(study.best_trial).__name__}), value {value:.4f}", flush=True)
            else:
                for _ in range(3):
                    objective(None)
                print("[rank1] no error", flush=True)
            dist.destroy_process_group()
    except (ValueError, RuntimeError) as exc:
        show(rank, exc)
    sys.stdout.flush()
    os._exit(0)   # leave at once, as a crashed rank would: the peer sees the closed connection


if __name__ == "__main__":
    import torch
    print(f"torch {torch.__version__}, optuna {optuna.__version__}", flush=True)
    titles = {1: "1. trial holder chosen by the wrong rank (rank 0 wraps None)",
              2: "2. every rank runs its own study and wraps its own trial",
              3: "3. right split, then study.best_trial re-run on rank 0"}
    for case, title in titles.items():
        print(f"--- {title}", flush=True)
        mp.spawn(worker, args=(case, free_port()), nprocs=2, join=True)
