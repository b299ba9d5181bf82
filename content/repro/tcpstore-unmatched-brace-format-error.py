"""Reproduce c10d's "unmatched '}' in format string" while a TCPStore is created.

Everything runs on CPU, in one process, with gloo and short timeouts.

c10d's socket code builds some warning texts first and then hands the finished
text to its logging macro as the *format string* (formatLogMessage calls
fmt::vformat on it). Any '}' that came in with runtime data, here the
rendezvous host name, is then parsed by fmt, which throws fmt::format_error;
pybind11 turns that into a RuntimeError and the real problem (the host cannot
be resolved) is never reported.

1. TCPStore(...) as a client of host "node}01": RuntimeError at once.
2. init_process_group("gloo") with MASTER_ADDR="node}01" (env://): the same
   error from rendezvous.py's _create_c10d_store.
3. The same host without the brace: the ordinary gai warning is printed and
   the store gives up with the client-socket timeout, which is what the
   reader should have seen.
"""
import datetime
import os
import traceback

import torch
import torch.distributed as dist

PORT = 29531
SHORT = datetime.timedelta(seconds=3)


def part1():
    try:
        dist.TCPStore("node}01", PORT, 2, False, timeout=SHORT)
    except RuntimeError:
        traceback.print_exc()


def part2():
    os.environ["MASTER_ADDR"] = "node}01"
    os.environ["MASTER_PORT"] = str(PORT)
    try:
        dist.init_process_group("gloo", rank=0, world_size=1, timeout=SHORT)
    except RuntimeError:
        traceback.print_exc()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def part3():
    try:
        dist.TCPStore("node01.invalid", PORT, 2, False, timeout=SHORT)
    except Exception as e:  # DistNetworkError (a RuntimeError subclass) in recent releases
        print(f"part 3: {type(e).__name__}: {str(e).splitlines()[0]}")


if __name__ == "__main__":
    print("torch", torch.__version__)
    part1()
    part2()
    part3()
