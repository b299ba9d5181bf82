"""A W&B sweep agent whose heartbeats the backend answers with HTTP 500.

Needs wandb (checked with 0.17.9, 0.19.11, 0.23.1 and 0.31.0; torch 2.13.0 CPU is imported
only for its version). wandb is not part of the torch environment, so put it on PYTHONPATH,
e.g. `pip install --target /tmp/wandb-pkgs wandb` and `PYTHONPATH=/tmp/wandb-pkgs`. No GPU, no
network: the "W&B server" is a small local HTTP server, and the case takes about 40 s.

The local server answers the agent's first calls (the sweep query and CreateAgent) normally
and every `agentHeartbeat` mutation with HTTP 500 and a GraphQL error body. A dummy
40-character WANDB_API_KEY and WANDB_BASE_URL point the agent at it. The agent is started the
way `wandb agent --count 1 <entity/project/sweep>` starts it, in a child process that is ended
after 35 s because on its own it would keep retrying for days.

wandb up to 0.27.0 prints `wandb: ERROR Error while calling W&B API: internal server error
(<Response [500]>)` for every failed attempt and, once, `wandb: Network error (HTTPError),
entering retry loop.`; from 0.27.1 the call goes through wandb-core, which retries without
printing anything to the console; its debug log (core-debug-*.log under $WANDB_CACHE_DIR/wandb/logs,
~/.cache/wandb/logs by default; here the scratch folder) records `api: retrying HTTP error` with
`"status":500`, and the script prints those lines after the agent is ended. In every release the
agent starts no run: the sweep stalls.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SWEEP_CONFIG = "method: random\nprogram: train.py\nparameters:\n  lr:\n    values: [0.1]\n"


class Backend(BaseHTTPRequestHandler):
    calls = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode("utf-8", "replace")
        try:
            query = json.loads(body).get("query", "")
        except ValueError:
            query = ""
        status = 200
        if "agentHeartbeat" in query:
            status, out = 500, {"errors": [{"message": "internal server error"}]}
            Backend.calls.append("agentHeartbeat -> 500")
        elif "createAgent" in query:
            out = {"data": {"createAgent": {"agent": {"id": "QWdlbnQ6MQ=="}}}}
        elif "sweep(" in query:
            out = {"data": {"project": {"sweep": {
                "id": "U3dlZXA6MQ==", "name": "abc123", "state": "RUNNING", "bestLoss": None,
                "runs": {"edges": []}, "config": SWEEP_CONFIG}}}}
        elif "viewer" in query:
            out = {"data": {"viewer": {"id": "VXNlcjox", "entity": "me", "username": "me",
                                       "flags": "{}", "teams": {"edges": []}}}}
        else:
            out = {"data": {}}
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def child():
    sys.argv = ["wandb", "agent", "--count", "1", "me/proj/abc123"]
    from wandb.cli.cli import cli

    cli()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        child()
        sys.exit(0)
    import wandb

    try:
        import torch
        tv = torch.__version__
    except ImportError:
        tv = "absent"
    print(f"wandb {wandb.__version__}, torch {tv}", flush=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Backend)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    scratch = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
    env = {**os.environ, "WANDB_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}",
           "WANDB_API_KEY": "x" * 40, "WANDB_DIR": scratch.name, "TMPDIR": scratch.name,
           "WANDB_CACHE_DIR": scratch.name}
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "agent"], env=env,
                            cwd=scratch.name, start_new_session=True)
    try:
        proc.wait(timeout=35)
        print(f"agent exited with {proc.returncode}", flush=True)
    except subprocess.TimeoutExpired:
        print(f"agent still retrying after {time.monotonic() - t0:.0f} s; "
              f"{len(Backend.calls)} heartbeats answered with 500, no run started", flush=True)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    server.shutdown()
    for log in sorted(glob.glob(os.path.join(scratch.name, "wandb", "logs", "core-debug-*.log"))):
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                if "retrying HTTP error" in line:
                    print(line.rstrip(), flush=True)
    scratch.cleanup()
