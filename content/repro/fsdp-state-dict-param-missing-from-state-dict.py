"""Reproduce FSDP1's "FSDP assumes <fqn> is in the state_dict" assertion.

The wrapped model overrides state_dict() to keep only its trainable head and
deletes the encoder's entries from the dict that nn.Module.state_dict() fills.
FSDP's post-state_dict hook of the root unit runs after that and looks up every
parameter the unit manages; encoder.weight is gone, so rank 0 raises

    AssertionError: FSDP assumes encoder.weight is in the state_dict but the state_dict only has odict_keys([...]). ...

With FullStateDictConfig(rank0_only=True) and use_orig_params=True, the other
rank pops the same key instead and fails with KeyError: 'encoder.weight'.

Two ranks, gloo backend, CPU (FSDP with device_id=cpu, use_orig_params=True),
started with torch.multiprocessing.spawn, process group timeout 10 s. Each
rank prints its own error and leaves with os._exit, because a process that
stops inside FSDP's unshard context can abort in interpreter teardown.
"""
import os
import socket
import sys
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

WORLD_SIZE = 2


class HeadOnlyCheckpoint(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(8, 8)
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.encoder(x))

    def state_dict(self, *args, **kwargs):
        sd = super().state_dict(*args, **kwargs)
        for key in [k for k in sd if k.split(".")[-2] == "encoder"]:
            del sd[key]  # "save only the head": drops keys FSDP still expects
        return sd


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=10))
    code = 0
    try:
        model = FSDP(HeadOnlyCheckpoint(), device_id=torch.device("cpu"), use_orig_params=True)
        config = FullStateDictConfig(rank0_only=True)
        with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, config):
            state = model.state_dict()
        print(f"rank {rank}: saved {sorted(state)}", flush=True)
    except Exception:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main():
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
