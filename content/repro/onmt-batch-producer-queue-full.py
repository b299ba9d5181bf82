"""Reproduce a batch producer that fills bounded per-GPU queues without blocking.

The design being reproduced (OpenNMT-py's multi-GPU train.py between commits
b731e04f and 065c99f1, June 2019): one producer process hands batches round-robin
to one bounded queue per local trainer process. A semaphore sized
world_size x queue_size is acquired before each put and released by a trainer
after each get. The put itself does not block, so whenever the queue whose turn
it is happens to be full, the producer dies with a bare `queue.Full`, printed by
multiprocessing under "Process SpawnProcess-N:". Nobody tells the trainers: they
use up what is already queued and then wait for batches that never come.

The processes come from torch.multiprocessing's spawn context, as in OpenNMT-py,
but the batches are plain lists: the failure is in the queue handling, and
leaving tensors out keeps torch's own tensor sharing (which needs the sending
process alive) out of the picture. torch is imported only by the parent, so the
children start fast; the whole run takes about 15 s, mostly the trainers' 4 s
get() timeouts. No GPU, no OpenNMT-py and no file on disk are involved.

Cases (QUEUE_SIZE = 2 batches per queue):
1. one node, two trainers at different speeds, non-blocking put: the producer
   dies with queue.Full once the slow trainer's queue is full and a slot frees
   in the other one;
2. two trainers at the same speed, but the semaphore is sized for a world of
   four (what a second node adds to world_size): the semaphore never stops the
   producer before both local queues are full, so queue.Full comes as soon as
   the trainers fall behind;
3. case 1 with a blocking put: the producer waits for a free slot and both
   trainers get every batch they ask for.
"""
import itertools
import queue
import sys
import time

QUEUE_SIZE = 2
STEPS = 12
GET_TIMEOUT = 4.0


def say(line):
    sys.stdout.write(line + "\n")  # one write per line, so two trainers do not interleave
    sys.stdout.flush()


def producer(queues, semaphore, block):
    batches = ([i] * 32 for i in itertools.count())
    for _, q in itertools.cycle(enumerate(queues)):
        semaphore.acquire()
        q.put(next(batches), block)


def trainer(rank, q, semaphore, delay):
    got = 0
    while got < STEPS:
        try:
            q.get(timeout=GET_TIMEOUT)
        except queue.Empty:
            say(f"[trainer {rank}] no batch for {GET_TIMEOUT:.0f} s after {got} of {STEPS}: "
                "the producer is gone and nothing reported it")
            return
        semaphore.release()
        got += 1
        time.sleep(delay)
    say(f"[trainer {rank}] trained on all {STEPS} batches")


def run(ctx, title, world_size, delays, block):
    print(f"--- {title}", flush=True)
    semaphore = ctx.Semaphore(world_size * QUEUE_SIZE)
    queues = [ctx.Queue(QUEUE_SIZE) for _ in delays]
    trainers = [ctx.Process(target=trainer, args=(rank, q, semaphore, delay), daemon=True)
                for rank, (q, delay) in enumerate(zip(queues, delays))]
    for p in trainers:
        p.start()
    feeder = ctx.Process(target=producer, args=(queues, semaphore, block), daemon=True)
    feeder.start()
    for p in trainers:
        p.join(timeout=30)
    state = "alive, stopped by the parent" if feeder.is_alive() else f"exited with code {feeder.exitcode}"
    feeder.terminate()
    feeder.join()
    print(f"producer {state}; trainer exit codes: {[p.exitcode for p in trainers]}", flush=True)


if __name__ == "__main__":
    import torch
    import torch.multiprocessing as mp

    print(f"torch {torch.__version__}", flush=True)
    ctx = mp.get_context("spawn")
    run(ctx, "1. one node, uneven trainers, put(..., block=False)", 2, [0.05, 0.005], False)
    run(ctx, "2. two local queues, semaphore sized for world_size=4, put(..., block=False)", 4, [0.02, 0.02], False)
    run(ctx, "3. the fix: blocking put", 2, [0.05, 0.005], True)
