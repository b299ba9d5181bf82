"""DistDGL DistTensor writes whose ID count differs from the value's row count.

Needs dgl next to PyTorch (checked with dgl 1.1.3 on torch 2.13.0 CPU). A ring graph of 1000
nodes with a (1000, 1) feature is saved as one partition; one DistGraph server and one trainer
run on 127.0.0.1 in distributed mode (standalone mode would write through PyTorch indexing).
The trainer writes into g.ndata["feat"] and prints each traceback or "ok":

1. 3 IDs, 2 rows          -> AssertionError: The data must has the same row size with ID.
2. 2 IDs, 3 rows          -> the same assertion
3. 3 IDs, one (1, 1) row  -> the same assertion (no broadcasting)
4. 1 ID, one (1, 1) row   -> ok
5. a Python float value   -> AttributeError: 'float' object has no attribute 'shape'
"""
import multiprocessing as mp
import os
import socket
import sys
import tempfile
import traceback

os.environ["DGL_DIST_MODE"] = "distributed"
os.environ.setdefault("OMP_NUM_THREADS", "1")

import dgl
import torch as th

N = 1000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(ip_config, part_config):
    os.environ["DGL_ROLE"] = "server"
    dgl.distributed.DistGraphServer(0, ip_config, 1, 1, part_config).start()


def train(ip_config, part_config):
    os.environ["DGL_NUM_SERVER"] = "1"
    os.environ["DGL_ROLE"] = "default"
    dgl.distributed.initialize(ip_config)
    g = dgl.distributed.DistGraph("repro", part_config=part_config)
    feat = g.ndata["feat"]
    writes = (
        (th.tensor([0, 1, 2]), th.zeros(2, 1)),
        (th.tensor([0, 1]), th.zeros(3, 1)),
        (th.tensor([0, 1, 2]), th.zeros(1, 1)),
        (th.tensor([5]), th.zeros(1, 1)),
        (th.tensor([0, 1, 2]), 1.0),
    )
    for ids, val in writes:
        print("write", ids.tolist(), "value shape", tuple(getattr(val, "shape", ())), flush=True)
        try:
            feat[ids] = val
            print("ok", flush=True)
        except (AssertionError, AttributeError):
            traceback.print_exc(file=sys.stdout)
            sys.stdout.flush()
    dgl.distributed.exit_client()


def main():
    work = tempfile.mkdtemp()
    src = th.arange(N)
    g = dgl.graph((src, (src + 1) % N))
    g.ndata["feat"] = th.arange(N, dtype=th.float32).unsqueeze(1)
    dgl.distributed.partition_graph(g, "repro", 1, work)
    part_config = os.path.join(work, "repro.json")
    ip_config = os.path.join(work, "ip_config.txt")
    with open(ip_config, "w") as f:
        f.write(f"127.0.0.1 {free_port()}\n")
    ctx = mp.get_context("spawn")
    server = ctx.Process(target=serve, args=(ip_config, part_config))
    server.start()
    trainer = ctx.Process(target=train, args=(ip_config, part_config))
    trainer.start()
    trainer.join(120)
    server.join(30)
    for p in (trainer, server):
        if p.is_alive():
            p.kill()


if __name__ == "__main__":
    main()
