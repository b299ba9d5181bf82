"""DistDGL sampler process dies with KeyError: 'dataloader-N' when the collate function does not pickle.

Needs dgl next to PyTorch (checked with dgl 1.1.3 on torch 2.13.0 CPU). A ring graph of 1000
nodes is saved as one partition; one DistGraph server and one trainer with one sampler process
(DGL_NUM_SAMPLER=1) run on 127.0.0.1 in distributed mode. Two runs:

1. The trainer's first DistDataLoader gets a nested function as collate_fn: the queue's feeder
   thread prints "Can't pickle local object" and drops the SET_COLLATE_FN message, and the
   sampler fails with KeyError: 'dataloader-0' at the first batch request.
2. The first loader (a module-level class's bound method) gives its two batches; the second loader's
   collate object holds a threading.Lock: "cannot pickle '_thread.lock' object", then
   KeyError: 'dataloader-1'.

The trainer's result-queue wait (1800 s by default) is shortened to 3 s so the script ends, and
the trainer kills its sampler processes before it exits.
"""
import multiprocessing as mp
import os
import queue
import socket
import sys
import tempfile
import threading
import time

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
    # one trainer and its one sampler process are the server's two clients
    dgl.distributed.DistGraphServer(0, ip_config, 1, 2, part_config).start()


class Picklable:
    def __init__(self, g):
        self.g = g

    def collate(self, seeds):
        return list(seeds)


class HoldsLock:
    def __init__(self):
        self.lock = threading.Lock()

    def collate(self, seeds):
        return list(seeds)


def drain(loader):
    try:
        for i, _ in enumerate(loader):
            print(loader.name, "batch", i, flush=True)
    except queue.Empty:
        print(loader.name, ": no batch within 3 s (queue.Empty)", flush=True)


def train(ip_config, part_config, scenario):
    os.environ["DGL_NUM_SERVER"] = "1"
    os.environ["DGL_NUM_SAMPLER"] = "1"
    os.environ["DGL_ROLE"] = "default"
    dgl.distributed.initialize(ip_config)
    dl = dgl.distributed.DistDataLoader
    dl._get_data_from_result_queue.__defaults__ = (3,)
    g = dgl.distributed.DistGraph("repro", part_config=part_config)
    ids = th.arange(100)

    def nested(seeds):
        return list(seeds)

    if scenario == 1:
        drain(dl(ids, batch_size=50, collate_fn=nested))
    else:
        keep = dl(ids, batch_size=50, collate_fn=Picklable(g).collate)
        drain(keep)
        drain(dl(ids, batch_size=50, collate_fn=HoldsLock().collate))
    # end the sampler processes still alive, so that none keeps the output pipe open
    pool, _ = dgl.distributed.dist_context.get_sampler_pool()
    for proc in pool.process_list:
        proc.kill()
        proc.join()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run(scenario):
    print("run", scenario, "start", time.strftime("%X"), flush=True)
    work = tempfile.mkdtemp()
    src = th.arange(N)
    g = dgl.graph((src, (src + 1) % N))
    dgl.distributed.partition_graph(g, "repro", 1, work)
    part_config = os.path.join(work, "repro.json")
    ip_config = os.path.join(work, "ip_config.txt")
    with open(ip_config, "w") as f:
        f.write(f"127.0.0.1 {free_port()}\n")
    ctx = mp.get_context("spawn")
    server = ctx.Process(target=serve, args=(ip_config, part_config))
    server.start()
    trainer = ctx.Process(target=train, args=(ip_config, part_config, scenario))
    trainer.start()
    trainer.join(60)
    for p in (trainer, server):
        if p.is_alive():
            p.kill()
        p.join()


if __name__ == "__main__":
    run(1)
    run(2)
