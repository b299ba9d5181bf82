"""wandb.init() gives up because the W&B server it was pointed at never answers.

Needs wandb (checked with 0.17.9, 0.19.11 and 0.31.0; torch 2.13.0 CPU is imported only for
its version). wandb is not part of the torch environment, so put it on PYTHONPATH, e.g.
`pip install --target /tmp/wandb-pkgs wandb` and `PYTHONPATH=/tmp/wandb-pkgs`. No GPU, no
network: the "server" is a local port, about 20 s per case.

An API key is configured (a dummy 40-character WANDB_API_KEY), so the login step passes, and
WANDB_INIT_TIMEOUT=5 shortens the wait. Each case runs in its own process:
1. WANDB_BASE_URL points at a port nobody listens on (connection refused, retried);
2. WANDB_BASE_URL points at a socket that accepts connections but never replies;
3. offline mode with WANDB__SERVICE_WAIT=0.01, far too short for wandb's background process
   to write its port file (the service-start timeout, no server involved).
Cases 1 and 2 print the exception wandb.init() raised: "Run initialization has timed out
after 5.0 sec. ..." up to wandb 0.28.1, "Timed out while retrying: ..." or "Timed out
initializing run: ..." from 0.28.2. Case 3 prints "Timed out waiting for wandb service to
start after 0.01 seconds. ..." (up to 0.20.1) or "Failed to read port info after 0.01
seconds ..." (from 0.21.0). The child leaves with os._exit because wandb's own shutdown
would wait for the unanswering server as well. On 0.17.9 the late `wandb service` process of
case 3 keeps running after the case (it starts its own session); end it by its PID.
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback


def child(mode):
    if mode == "service":
        os.environ.update(WANDB_MODE="offline", WANDB__SERVICE_WAIT="0.01")
        port = 0
    elif mode == "refused":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
    else:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        port = s.getsockname()[1]
    if mode != "service":
        os.environ.update(WANDB_BASE_URL=f"http://127.0.0.1:{port}", WANDB_API_KEY="x" * 40,
                          WANDB_INIT_TIMEOUT="5")
    import wandb

    t0 = time.monotonic()
    try:
        wandb.init(project="repro")
        print("wandb.init() returned (unexpected)", flush=True)
    except Exception:
        lines = traceback.format_exc().splitlines()
        start = max(i for i, line in enumerate(lines) if line.startswith("wandb."))
        print("\n".join(lines[start:]), flush=True)
    print(f"[{mode}] wandb.init() gave up after {time.monotonic() - t0:.0f} s", flush=True)
    os._exit(1)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        child(sys.argv[1])
    import wandb

    try:
        import torch
        tv = torch.__version__
    except ImportError:
        tv = "absent"
    print(f"wandb {wandb.__version__}, torch {tv}", flush=True)
    # wandb's run folder and its temporary files, of all three cases, go to one folder removed at the end
    scratch = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
    env = {**os.environ, "WANDB_DIR": scratch.name, "TMPDIR": scratch.name}
    for mode in ("refused", "silent", "service"):
        print(f"== case: {'service start' if mode == 'service' else 'server ' + mode}", flush=True)
        # own process group, so that a background process the case leaves behind is ended too
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), mode],
                                env=env, start_new_session=True)
        try:
            proc.wait(timeout=20 if mode == "service" else 55)
        except subprocess.TimeoutExpired:
            print(f"[{mode}] no answer within the case's time limit", flush=True)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    scratch.cleanup()
