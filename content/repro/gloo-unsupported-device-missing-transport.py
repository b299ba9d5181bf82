"""Reproduce "makeDeviceFor...(): unsupported gloo device" on a Linux CPU build.

PyTorch creates a gloo group's transport device through a registry keyed by
platform: "LINUX" (tcp transport), "APPLE" and "WIN32" (libuv transport), or
the key named by GLOO_DEVICE_TRANSPORT. When nothing is registered under the
key, the registry returns nullptr and ProcessGroupGloo raises
"makeDeviceForHostname(): unsupported gloo device" (default path) or
"makeDeviceForInterface(): unsupported gloo device" (GLOO_SOCKET_IFNAME set).
That is what the Windows wheels of PyTorch 2.8 to 2.10 do: gloo was built
there without its libuv transport, so "WIN32" has no creator.

A Linux wheel has only the tcp transport, so asking it for the libuv one with
GLOO_DEVICE_TRANSPORT=UV takes the same branch:
  1. init_process_group("gloo") with a file:// store, world size 1;
  2. ProcessGroupGloo.create_device(interface="lo"), the GLOO_SOCKET_IFNAME path.
No network traffic: the file store is in a temporary directory and the device
is refused before any socket is opened.
"""
import os
import sys
import tempfile
import traceback

# Must be set before the first gloo device is created: PyTorch reads it once.
os.environ["GLOO_DEVICE_TRANSPORT"] = "UV"
os.environ.pop("GLOO_SOCKET_IFNAME", None)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def main():
    print(f"torch {torch.__version__}, GLOO_DEVICE_TRANSPORT=UV", flush=True)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        print("== 1. init_process_group('gloo'), hostname path", flush=True)
        try:
            dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
            print("unexpected: the process group was created", flush=True)
            dist.destroy_process_group()
        except RuntimeError:
            traceback.print_exc()
            failed += 1

    print("== 2. ProcessGroupGloo.create_device(interface='lo'), interface path", flush=True)
    try:
        dist.ProcessGroupGloo.create_device(interface="lo")
        print("unexpected: the device was created", flush=True)
    except RuntimeError:
        traceback.print_exc()
        failed += 1
    sys.stderr.flush()
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
