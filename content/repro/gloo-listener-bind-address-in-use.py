"""Reproduce gloo's "bind: Address already in use" (no ephemeral port left for the listener).

Gloo never asks for a fixed port: every gloo device (one per gloo process
group) binds its listening socket to port 0 and lets the kernel pick a free
port from net.ipv4.ip_local_port_range. When no port in that range is free on
the chosen address, bind(2) fails with EADDRINUSE.

To show this without touching the host, the script re-executes itself in a
private network and UTS namespace (`unshare --user --map-root-user --net
--uts`, no privileges needed where unprivileged user namespaces are allowed).
There it brings up the loopback interface and shrinks the ephemeral range to
8 ports, so exhausting it takes a few sockets instead of ~28,000.

1. GLOO_SOCKET_IFNAME=lo, world size 1, file:// rendezvous: the default group
   and then one `new_group(backend="gloo")` after another, each holding one
   more listening port, until the range is used up:

       RuntimeError: [enforce fail at .../third_party/gloo/gloo/transport/tcp/socket.cc:95] rv != -1. -1 vs -1. bind: Address already in use

2. No GLOO_SOCKET_IFNAME, host name 127.0.0.1, all 8 ports held by this
   process: PyTorch's own test bind on the host name's address fails, it
   warns that it falls back to the loopback address, whose test bind fails
   too:

       RuntimeError: Cannot resolve 127.0.0.1 to a (local) address
"""
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import traceback

LOW, HIGH = 40000, 40007  # 8 ephemeral ports inside the private namespace


def bring_up_loopback():
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket() as s:
        ifr = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s, siocgifflags, ifr))[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))


def set_port_range():
    with open("/proc/sys/net/ipv4/ip_local_port_range", "w") as f:
        f.write(f"{LOW} {HIGH}")
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        print("== ip_local_port_range in the private namespace:", f.read().split(), flush=True)


def init_file_group():
    import torch.distributed as dist

    path = tempfile.mktemp(prefix="gloo-bind-")
    dist.init_process_group("gloo", init_method=f"file://{path}", rank=0, world_size=1)
    return dist


def many_groups():
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist = init_file_group()
    print("== 1. default gloo group created; now one new gloo group after another", flush=True)
    groups = []
    try:
        for i in range(2 * (HIGH - LOW + 1)):
            groups.append(dist.new_group([0], backend="gloo"))
            print(f"group {i + 1} created", flush=True)
    except Exception:
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
    print(f"== 1. stopped after {len(groups)} extra groups", flush=True)


def hostname_fallback():
    socket.sethostname("127.0.0.1")
    held = []
    for port in range(LOW, HIGH + 1):
        s = socket.socket()
        s.bind(("127.0.0.1", port))
        s.listen()
        held.append(s)
    print(f"== 2. host name {socket.gethostname()}, {len(held)} ports held; init_process_group('gloo')", flush=True)
    try:
        init_file_group()
        print("== 2. init_process_group succeeded (unexpected)", flush=True)
    except Exception:
        traceback.print_exc()


def inside(step):
    bring_up_loopback()
    set_port_range()
    if step == "groups":
        many_groups()
    else:
        hostname_fallback()


def main():
    unshare = shutil.which("unshare")
    if unshare is None:
        sys.exit("unshare(1) from util-linux is needed to make a private network namespace")
    failed = False
    for step in ("groups", "hostname"):
        cmd = [unshare, "--user", "--map-root-user", "--net", "--uts",
               sys.executable, os.path.abspath(__file__), "--inside", step]
        rc = subprocess.call(cmd, timeout=50)
        print(f"== {step}: exit code {rc}", flush=True)
        failed = failed or rc != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if "--inside" in sys.argv:
        inside(sys.argv[sys.argv.index("--inside") + 1])
    else:
        main()
