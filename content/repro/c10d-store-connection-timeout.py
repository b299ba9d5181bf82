"""Reproduce c10d TCPStore connection timeouts (client and server side).

1. Client side: a non-master rank creates a TCPStore client for
   127.0.0.1:<port> where nothing listens (the master never started, crashed,
   or MASTER_ADDR/MASTER_PORT point to the wrong place). The client retries
   until its timeout (3 s here, 30 min by default in init_process_group) and
   then raises:
       torch.distributed.DistNetworkError: The client socket has timed out after 3000ms while trying to connect to (127.0.0.1, <port>).
2. Server side: the master's TCPStore is created for world_size=2 with
   wait_for_workers=True, but only one client (the master itself) ever
   joins, so after its timeout the master raises:
       torch.distributed.DistStoreError: Timed out after 4 seconds waiting for clients. 1/2 clients joined.

3. A client is connected to a store whose server process then goes away
   (the rank or agent that hosted it crashed or exited):
   - the server is stopped while a get waits for its reply and then killed,
     so the kernel resets the connection: the client raises
       torch.distributed.DistNetworkError: Connection reset by peer
   - a get waits on a key while the server exits cleanly: the client raises
       torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?
   - the next call writes to the closed connection:
       torch.distributed.DistNetworkError: Broken pipe
   - a rendezvous handler of the elastic agent (torchrun's c10d backend) on
     that store cannot shut its rendezvous down and logs that it "has failed
     to shutdown the rendezvous ... due to an error of type
     RendezvousConnectionError".
4. A get on a key that no rank ever sets, on a live store, ends after the
   store timeout with
       torch.distributed.DistStoreError: wait timeout after 2000ms, keys: /missing

Everything stays on 127.0.0.1; the port is a free one found by binding to
port 0. The store servers of step 3 run in child processes of this script.
"""
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from datetime import timedelta

import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVER = """
import sys
from datetime import timedelta
import torch.distributed as dist
store = dist.TCPStore("127.0.0.1", int(sys.argv[1]), 2, True, timedelta(seconds=30), wait_for_workers=False)
print("up", flush=True)
sys.stdin.readline()  # exit cleanly when told to
"""


def start_server():
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return server, port


def connect(server, port):
    """Wait until a child's TCPStore server is up and return a client connected to it."""
    server.stdout.readline()
    return dist.TCPStore("127.0.0.1", port, world_size=2, is_master=False,
                         timeout=timedelta(seconds=20))


def later(seconds, action):
    threading.Thread(target=lambda: (time.sleep(seconds), action())).start()


def attempt(call):
    try:
        call()
    except Exception:
        traceback.print_exc()


def server_goes_away():
    # The three store servers import torch in parallel, which saves time.
    (a, port_a), (b, port_b), (c, port_c) = start_server(), start_server(), start_server()

    print("== 3a. server stopped, then killed, while a get waits for its reply", flush=True)
    client = connect(a, port_a)
    os.kill(a.pid, signal.SIGSTOP)
    later(1, a.kill)
    attempt(lambda: client.get("k"))
    a.wait()

    print("== 3b. server exits while a get waits; then the next calls", flush=True)
    client = connect(b, port_b)
    later(1, lambda: (b.stdin.write("exit\n"), b.stdin.flush()))
    attempt(lambda: client.get("never-set"))
    b.wait()
    for _ in range(3):  # the first write after the close may still go out
        try:
            client.set("k", "v")
        except Exception:
            traceback.print_exc()
            break
        time.sleep(0.2)

    print("== 3c. elastic rendezvous handler shut down after its store host died", flush=True)
    from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import C10dRendezvousBackend
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import DynamicRendezvousHandler

    client = connect(c, port_c)
    backend = C10dRendezvousBackend(client, "repro")
    handler = DynamicRendezvousHandler.from_backend("repro", client, backend, min_nodes=1, max_nodes=1)
    c.kill()
    c.wait()
    print("shutdown returned", handler.shutdown(), flush=True)

    print("== 4. get on a key nobody sets", flush=True)
    store = dist.TCPStore("127.0.0.1", free_port(), world_size=1, is_master=True,
                          timeout=timedelta(seconds=2))
    attempt(lambda: store.get("missing"))


def main():
    print("== 1. client connecting to a port where no store listens", flush=True)
    try:
        dist.TCPStore("127.0.0.1", free_port(), world_size=2, is_master=False,
                      timeout=timedelta(seconds=3))
    except Exception:
        traceback.print_exc()

    print("== 2. master store waiting for a client that never comes", flush=True)
    try:
        dist.TCPStore("127.0.0.1", free_port(), world_size=2, is_master=True,
                      timeout=timedelta(seconds=3), wait_for_workers=True)
    except Exception:
        traceback.print_exc()
    server_goes_away()
    raise SystemExit(1)


if __name__ == "__main__":
    main()
