"""Reproduce "Permission denied" (EACCES) when the rendezvous store binds a port below 1024.

Linux lets a process bind a TCP port below net.ipv4.ip_unprivileged_port_start
(1024 by default) only if it holds CAP_NET_BIND_SERVICE. Ordinary users do not
hold it; root does. When this script runs as root it therefore re-executes
itself under `setpriv` with CAP_NET_BIND_SERVICE removed from its capability
sets, which is what the kernel sees for a normal user (the same EACCES comes
back for a real non-root account).

Then, on 127.0.0.1 and port 97 (the MASTER_PORT some published launch scripts
use), it tries what rank 0 or the launcher does:

1. a TCPStore server with the default backend (libuv since PyTorch 2.4),
2. a TCPStore server with the legacy socket backend (use_libuv=False),
3. init_process_group("gloo") with MASTER_ADDR/MASTER_PORT (env:// rendezvous),
4. torchrun --master-port=97 (static rendezvous; its agent hosts the store).

Expected on PyTorch 2.13:

    DistNetworkError: The server socket has failed to bind. port: 97, useIpv6: 0, code: -13, name: EACCES, message: permission denied
    [W ... socket.cpp:...] [c10d] The server socket has failed to bind to [::]:97 (errno: 13 - Permission denied).
"""
import os
import shutil
import subprocess
import sys
import traceback
from datetime import timedelta

PORT = 97
CAP_NET_BIND_SERVICE = 10


def has_net_bind_service():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) & (1 << CAP_NET_BIND_SERVICE))
    return False


def unprivileged_port_start():
    try:
        with open("/proc/sys/net/ipv4/ip_unprivileged_port_start") as f:
            return int(f.read())
    except OSError:
        return 1024


def main():
    if not sys.platform.startswith("linux"):
        sys.exit("this reproduction needs Linux")
    start = unprivileged_port_start()
    print(f"== net.ipv4.ip_unprivileged_port_start = {start}", flush=True)
    if start <= PORT:
        sys.exit(f"port {PORT} is not privileged here (e.g. a Docker network namespace); nothing to reproduce")

    if has_net_bind_service():
        setpriv = shutil.which("setpriv")
        if os.environ.get("_MTF_DROPPED") or setpriv is None:
            sys.exit("cannot drop CAP_NET_BIND_SERVICE (needs util-linux setpriv); run as a non-root user instead")
        print("== running as root: re-executing without CAP_NET_BIND_SERVICE", flush=True)
        env = dict(os.environ, _MTF_DROPPED="1")
        cmd = [setpriv, "--inh-caps=-net_bind_service", "--bounding-set=-net_bind_service",
               sys.executable, os.path.abspath(__file__)]
        sys.exit(subprocess.call(cmd, env=env, timeout=55))

    import torch
    import torch.distributed as dist

    print(f"== torch {torch.__version__}, uid {os.getuid()}, no CAP_NET_BIND_SERVICE", flush=True)

    print("== 1. TCPStore server, default backend", flush=True)
    try:
        dist.TCPStore("127.0.0.1", PORT, 1, True, timeout=timedelta(seconds=5))
    except Exception:
        traceback.print_exc()

    print("== 2. TCPStore server, legacy socket backend (use_libuv=False)", flush=True)
    try:
        dist.TCPStore("127.0.0.1", PORT, 1, True, timeout=timedelta(seconds=5), use_libuv=False)
    except TypeError:
        print("(this release has no use_libuv argument)")
    except Exception:
        traceback.print_exc()

    print("== 3. init_process_group('gloo') with MASTER_PORT=97", flush=True)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(PORT))
    try:
        dist.init_process_group("gloo", rank=0, world_size=1, timeout=timedelta(seconds=5))
    except Exception:
        traceback.print_exc()

    print("== 4. torchrun --master-port=97", flush=True)
    rc = subprocess.call([
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes=1", "--nproc-per-node=1",
        "--master-addr=127.0.0.1", f"--master-port={PORT}",
        "--max-restarts=0", "--no-python", "true",
    ], timeout=40)
    print(f"== torchrun exited with {rc}", flush=True)
    sys.exit(1)


if __name__ == "__main__":
    main()
