"""Reproduce checkpoint rename and rotation races between ranks on CPU (gloo, 2 ranks).

Each scenario runs the same save code on both ranks of one job, in the shape of the
Hugging Face Trainer code that did this in released versions, and uses barriers so that
the losing rank is always rank 1:

1. Every rank renames the staging folder `tmp-checkpoint-N` to `checkpoint-N` (the rename
   line of Transformers 4.36.0 `_save_checkpoint`). Rank 0 wins; rank 1 finds no source:
       FileNotFoundError: [Errno 2] No such file or directory: 'out/tmp-checkpoint-10' -> 'out/checkpoint-10'
2. A slower rank writes its file after the rename, which re-creates the staging folder,
   then renames it onto the now non-empty final folder:
       OSError: [Errno 39] Directory not empty: 'out/tmp-checkpoint-20' -> 'out/checkpoint-20'
3. Every rank deletes the checkpoints beyond the limit with `shutil.rmtree(checkpoint)`, the
   line Transformers 4.25.1 runs on every rank in its end-of-training deletion (its
   `_rotate_checkpoints` runs only where `should_save` is true, so it meets this race only with
   several such processes on one folder). Rank 0 deletes them; rank 1's rmtree finds nothing:
       FileNotFoundError: [Errno 2] No such file or directory: 'out/checkpoint-10'
4. The fix: one process renames and rotates, the others wait at a barrier. No error.
"""
import os
import shutil
import sys
import tempfile
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

RUN_DIR = "out"


def _save_checkpoint(rank, step, every_rank_renames=True, late_rank=None):
    output_dir = os.path.join(RUN_DIR, f"checkpoint-{step}")
    staging_output_dir = os.path.join(RUN_DIR, f"tmp-checkpoint-{step}")
    if rank != late_rank:
        os.makedirs(staging_output_dir, exist_ok=True)
        torch.save({"step": step}, os.path.join(staging_output_dir, f"rng_state_{rank}.pth"))
    dist.barrier()
    for turn in range(dist.get_world_size()):  # rank 0 first, then rank 1
        if turn == rank and (every_rank_renames or rank == 0):
            if rank == late_rank:  # this rank writes its file only now, after the rename
                os.makedirs(staging_output_dir, exist_ok=True)
                torch.save({"step": step}, os.path.join(staging_output_dir, f"rng_state_{rank}.pth"))
            os.rename(staging_output_dir, output_dir)
        dist.barrier()


def _rotate_checkpoints(rank, save_total_limit, every_rank_rotates=True):
    checkpoints_sorted = sorted(
        (os.path.join(RUN_DIR, d) for d in os.listdir(RUN_DIR) if d.startswith("checkpoint-")),
        key=lambda p: int(p.rsplit("-", 1)[1]),
    )
    to_delete = checkpoints_sorted[: max(0, len(checkpoints_sorted) - save_total_limit)]
    dist.barrier()  # both ranks have listed the folder before anyone deletes
    for turn in range(dist.get_world_size()):
        if turn == rank and (every_rank_rotates or rank == 0):
            for checkpoint in to_delete:
                print(f"[rank{rank}] Deleting older checkpoint [{checkpoint}] due to save_total_limit", flush=True)
                shutil.rmtree(checkpoint)
        dist.barrier()


def scenario(rank, title, fn):
    if rank == 0:
        print(f"== {title}", flush=True)
    dist.barrier()
    try:
        fn()
        print(f"[rank{rank}] ok", flush=True)
    except OSError:
        sys.stdout.write(f"[rank{rank}] failed:\n")
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        # keep the other rank from waiting forever at a barrier the failed rank skipped
        remaining = getattr(fn, "barriers_left", 0)
        for _ in range(remaining):
            dist.barrier()
    dist.barrier()


def worker(rank, world_size, workdir):
    os.chdir(workdir)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    if rank == 0:
        os.makedirs(RUN_DIR, exist_ok=True)
    dist.barrier()

    def every_rank_renames():
        _save_checkpoint(rank, 10)
    every_rank_renames.barriers_left = 1  # rank 1 fails in its turn, before the barrier that closes it
    scenario(rank, "1. every rank renames tmp-checkpoint-10", every_rank_renames)

    def late_writer():
        _save_checkpoint(rank, 20, late_rank=1)
    late_writer.barriers_left = 1
    scenario(rank, "2. rank 1 writes after rank 0 renamed, then renames too", late_writer)

    def every_rank_rotates():
        _save_checkpoint(rank, 30, every_rank_renames=False)
        _rotate_checkpoints(rank, save_total_limit=1)
    every_rank_rotates.barriers_left = 1
    scenario(rank, "3. every rank rotates (save_total_limit=1)", every_rank_rotates)

    def main_process_only():
        _save_checkpoint(rank, 40, every_rank_renames=False)
        _rotate_checkpoints(rank, save_total_limit=1, every_rank_rotates=False)
    scenario(rank, "4. fix: only rank 0 renames and rotates", main_process_only)

    if rank == 0:
        print("left in out/:", sorted(os.listdir(RUN_DIR)), flush=True)
    dist.destroy_process_group()


def main():
    world_size = 2
    with tempfile.TemporaryDirectory() as workdir:
        os.environ["MASTER_PORT"] = str(29500 + os.getpid() % 1000)
        mp.spawn(worker, args=(world_size, workdir), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
