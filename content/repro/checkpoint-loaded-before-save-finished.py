"""Reproduce a checkpoint read by one rank while another rank is still writing it (CPU, gloo, 2 ranks).

Rank 0 saves `best.pt` with torch.save; rank 1 calls torch.load on the same path with nothing
that orders the load after the save. A real save of a large state_dict takes long enough for
the other rank to open the file while it is empty or half written; here the writer is paused
at a chosen byte count (its file object blocks, after flushing, until the reader has tried), so
every run shows the same thing instead of depending on timing:

1. Rank 1 loads while the file is still empty (the writer has created it and written nothing).
   weights_only=False, as trainers use for full checkpoints with optimizer state:
       EOFError: Ran out of input
   (the traceback passes through `magic_number = pickle_module.load(f, **pickle_load_args)`
   in torch/serialization.py). With the default weights_only=True of PyTorch 2.6 and newer
   the same empty file ends in a bare `EOFError` with no text.
2. Rank 1 loads while half of the zip archive is on disk, so it has no central directory yet:
       RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory ...
3. Same with the legacy (non-zip) format, _use_new_zipfile_serialization=False:
       RuntimeError: unexpected EOF, expected N more bytes. The file might be corrupted.
4. The fix: rank 0 saves, every rank calls dist.barrier(), then rank 1 loads. It loads.

Observed with torch 2.13.0+cpu. An unpaused version of scenario 1 (rank 1 polling until the path
exists, a 256 MiB state_dict) gave `EOFError: Ran out of input` in most of 5 runs and
`failed finding central directory` in the rest.
"""
import os
import sys
import tempfile
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


class PausingFile:
    """A binary file that flushes and waits for the reader once `pause_at` bytes are written."""

    def __init__(self, path, pause_at, store, tag):
        self.f = open(path, "wb")
        self.pause_at, self.store, self.tag, self.written, self.paused = pause_at, store, tag, 0, False

    def _maybe_pause(self):
        if not self.paused and self.written >= self.pause_at:
            self.paused = True
            self.f.flush()
            os.fsync(self.f.fileno())
            self.store.set(f"{self.tag}/writer_paused", "1")
            self.store.wait([f"{self.tag}/reader_done"])

    def write(self, data):
        data = memoryview(data).cast("B")
        total = len(data)
        if not self.paused and self.written + len(data) > self.pause_at:
            head = self.pause_at - self.written  # write up to the pause point, wait, then the rest
            self.f.write(data[:head])
            self.written += head
            data = data[head:]
            self._maybe_pause()
        self.f.write(data)
        self.written += len(data)
        return total

    def flush(self):
        self.f.flush()

    def close(self):
        self._maybe_pause()  # a writer paused before its first byte still lets the reader go first
        self.f.close()


def state_dict():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 8))
    return model.state_dict()


def race(rank, store, path, tag, pause_fraction, legacy=False, weights_only_modes=(False,)):
    sd = state_dict()
    if rank == 0:
        # size of the finished file, to pick the pause point
        with tempfile.TemporaryDirectory() as scratch:
            probe = os.path.join(scratch, "probe.pt")
            torch.save(sd, probe, _use_new_zipfile_serialization=not legacy)
            full = os.path.getsize(probe)
        f = PausingFile(path, int(full * pause_fraction), store, tag)
        torch.save(sd, f, _use_new_zipfile_serialization=not legacy)
        f.close()
        print(f"[rank0] finished writing {path} ({full} bytes)", flush=True)
    else:
        store.wait([f"{tag}/writer_paused"])
        size = os.path.getsize(path)
        for weights_only in weights_only_modes:
            print(f"[rank1] torch.load({os.path.basename(path)}, weights_only={weights_only}) "
                  f"while it has {size} bytes", flush=True)
            try:
                torch.load(path, map_location="cpu", weights_only=weights_only)
                print("[rank1] loaded", flush=True)
            except Exception:
                traceback.print_exc(file=sys.stdout)
                sys.stdout.flush()
        store.set(f"{tag}/reader_done", "1")
    dist.barrier()


def fixed(rank, path):
    if rank == 0:
        torch.save(state_dict(), path)
    dist.barrier()  # no rank reads until the writer has returned from torch.save
    if rank == 1:
        sd = torch.load(path, map_location="cpu", weights_only=True)
        print(f"[rank1] loaded {len(sd)} tensors after the barrier", flush=True)
    dist.barrier()


def worker(rank, world_size, workdir, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    store = dist.distributed_c10d._get_default_store()

    def title(text):
        if rank == 0:
            print(f"== {text}", flush=True)
        dist.barrier()

    title("1. load while the file is still empty")
    race(rank, store, os.path.join(workdir, "best1.pt"), "s1", 0.0, weights_only_modes=(False, True))
    title("2. load while half of the zip archive is written")
    race(rank, store, os.path.join(workdir, "best2.pt"), "s2", 0.5)
    title("3. load while half of a legacy-format file is written")
    race(rank, store, os.path.join(workdir, "best3.pt"), "s3", 0.5, legacy=True)
    title("4. fix: barrier between the save and the load")
    fixed(rank, os.path.join(workdir, "best4.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as workdir:
        mp.spawn(worker, args=(2, workdir, 29561), nprocs=2)
