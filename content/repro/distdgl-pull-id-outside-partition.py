"""DistDGL feature reads with node IDs outside the partition book, on one host.

Needs dgl next to PyTorch (checked with dgl 1.1.3, and with 2.1.0, whose GraphBolt library
must match the installed torch). A ring graph of 1000 nodes is saved as one partition; one
DistGraph server and one trainer run on 127.0.0.1 in distributed mode (not standalone mode,
which reads through PyTorch indexing instead of the C++ fast pull). The trainer reads
g.ndata["feat"] twice and prints each Python traceback:

1. IDs [0, 1, -1]: the -1 is placed in partition 0 (this trainer's own), becomes row -1 and
   fails "Check failed: l_id < local_data_shape[0] (18446744073709551615 vs. 1000)".
2. IDs [0, 1000]: 1000 is past the last partition, so its partition number is 1 and the check
   "p_id < machine_count (1 vs. 1) : Invalid partition ID." fails before anything is sent.
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
    server = dgl.distributed.DistGraphServer(0, ip_config, 1, 1, part_config)
    server.start()


def train(ip_config, part_config):
    os.environ["DGL_NUM_SERVER"] = "1"
    os.environ["DGL_ROLE"] = "default"
    dgl.distributed.initialize(ip_config)
    g = dgl.distributed.DistGraph("repro", part_config=part_config)
    feat = g.ndata["feat"]
    print("rows:", feat.shape[0], "machine ID:", dgl.distributed.rpc.get_machine_id(),
          "partition:", g.get_partition_book().partid, flush=True)
    for ids in (th.tensor([0, 1, -1]), th.tensor([0, N])):
        try:
            feat[ids]
            print("read", ids.tolist(), "without an error", flush=True)
        except dgl.DGLError:
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
