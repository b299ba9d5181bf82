"""Reproduce what `load_dataset` prints when the Hugging Face Hub answers 429 at start-up.

Needs the `datasets` package (and its `huggingface_hub`) next to torch; torch is not used.
Nothing leaves the machine: a small stand-in for the Hub listens on 127.0.0.1 and
`HF_ENDPOINT` points every load at it. It answers like a rate-limited Hub (HTTP 429 with
an `X-Request-Id`, and in some scenarios the `RateLimit` / `RateLimit-Policy` headers the
Hub sends), so the lines below are what the installed datasets / huggingface_hub print.
Each scenario is one process, as one rank of a job would be; a job with N ranks sends N
times these requests at the same moment.

1. Only the API bucket is exhausted, and the 429 carries the rate-limit headers: the
   dataset card downloads, then the metadata call that resolves the data files
   (`dataset_info` / `repo_info`, `/api/datasets/<repo>/revision/<sha>`) is refused and
   not retried:
       429 Too Many Requests: you have reached your 'api' rate limit.
2. The same without the headers (huggingface_hub >= 1.2 wording):
       429 Too Many Requests for url: http://127.0.0.1:<port>/api/datasets/<repo>/revision/<sha>.
3. The resolvers bucket is exhausted too: the HEAD request for README.md is retried with
   warnings ("HTTP Error 429 thrown while requesting HEAD .../resolve/main/README.md"),
   then load_dataset reports that it found the dataset neither locally nor on the Hub
   (LocalEntryNotFoundError inside a FileNotFoundError), which hides the 429.
4. The fix: the data staged once on shared storage and every rank offline
   (HF_HUB_OFFLINE=1) reading that copy; the stand-in Hub receives no request at all.
"""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading

SHA = "0123456789abcdef0123456789abcdef01234567"
README = b"---\nconfigs:\n- config_name: default\n  data_files: data/train.jsonl\n---\n"
STATE = {"mode": "api", "headers": True, "requests": 0}


class FakeHub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _send(self, code, body=b"", headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _reply(self):
        STATE["requests"] += 1
        resolve = "/resolve/" in self.path
        if resolve and STATE["mode"] == "api":  # resolvers still have quota
            if self.path.endswith("/README.md"):
                return self._send(200, README, [("Content-Type", "text/plain"), ("ETag", '"c0ffee"'),
                                                ("X-Repo-Commit", SHA)])
            return self._send(404, b'{"error":"Entry not found"}', [("Content-Type", "application/json"),
                                                                      ("X-Error-Code", "EntryNotFound"),
                                                                      ("X-Repo-Commit", SHA)])
        bucket = "resolvers" if resolve else "api"
        headers = [("Content-Type", "application/json"), ("X-Request-Id", "Root=1-6a1b2c3d-4e5f60718293a4b5c6d7e8f9")]
        if STATE["headers"]:
            headers += [("RateLimit", f'"{bucket}";r=0;t=1'),
                        ("RateLimit-Policy", f'"fixed window";"{bucket}";q=1000;w=300')]
        self._send(429, b'{"error":"Too many requests"}', headers)

    do_GET = do_HEAD = do_POST = _reply

    def log_message(self, *args):
        pass


CHILD = r"""
import os, sys
import datasets
datasets.config.USE_PARQUET_EXPORT = False  # no request to the dataset viewer's host
datasets.disable_progress_bars()
from datasets import load_dataset
try:
    if os.environ.get("LOCAL_COPY"):
        ds = load_dataset("json", data_files=os.environ["LOCAL_COPY"], split="train")
    else:
        ds = load_dataset("someorg/somedata", split="train")
    print("ok:", ds.num_rows, "rows", flush=True)
except Exception:
    import traceback
    traceback.print_exc()
"""


def scenario(title, port, home, mode, headers, extra_env=None):
    STATE.update(mode=mode, headers=headers, requests=0)
    print(f"== {title}", flush=True)
    env = dict(os.environ, HF_ENDPOINT=f"http://127.0.0.1:{port}", HF_HOME=home, HF_HUB_DISABLE_TELEMETRY="1")
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("HF_DATASETS_OFFLINE", None)
    env.update(extra_env or {})
    run = subprocess.run([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=150, check=False)
    # the traceback frames are long: keep the warnings and the exception lines
    keep = [line for line in run.stdout.splitlines() if line.strip() and not line.startswith("  ")]
    print("\n".join(keep), flush=True)
    print(f"(requests received by the stand-in Hub: {STATE['requests']})", flush=True)


if __name__ == "__main__":
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    with tempfile.TemporaryDirectory(prefix="hf-429-") as root:
        scenario("1. API bucket exhausted, 429 with RateLimit headers", port, os.path.join(root, "h1"), "api", True)
        scenario("2. API bucket exhausted, 429 without RateLimit headers", port, os.path.join(root, "h2"), "api", False)
        scenario("3. resolvers exhausted too (README.md HEAD retried, then the 429 is hidden)", port,
                 os.path.join(root, "h3"), "all", True)
        copy = os.path.join(root, "shared", "somedata", "train.jsonl")
        os.makedirs(os.path.dirname(copy))
        with open(copy, "w") as f:
            f.writelines(json.dumps({"text": f"example {i}"}) + "\n" for i in range(8))
        scenario("4. data staged once, every rank offline and reading the staged copy", port,
                 os.path.join(root, "h4"), "all", True,
                 {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "LOCAL_COPY": copy})
    server.shutdown()
