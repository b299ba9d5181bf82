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
5. A warm cache: the stand-in Hub first serves the dataset (README, metadata, file list,
   data file) and load_dataset prepares it in the cache; then everything is refused with 429.
   The requests are still sent (and retried), but with datasets 2.16.0 and later the refusal
   ends in "Using the latest cached version of the dataset since someorg/somedata couldn't be
   found on the Hugging Face Hub" and the cached copy loads: a warm cache turns the crash
   into delays and a possibly stale copy.

The lines above are what datasets 5.2.0 with huggingface_hub 2.4.0 print. Run with an older
pair in the same environment and the same script prints the older wordings (seen here):
datasets 2.14.7 + huggingface_hub 0.20.3 calls `dataset_info` first, and scenarios 1, 2, 3
and 5b end in
    huggingface_hub.utils._errors.HfHubHTTPError: 429 Client Error: Too Many Requests for url: http://127.0.0.1:<port>/api/datasets/someorg/somedata (Request ID: ...)
(5a cannot warm that release's cache: it reads metadata fields the stand-in does not send;
for a dataset without a script, 2.14 has no fallback to a cached copy anyway);
datasets 4.0.0 + huggingface_hub 0.34.4 prints, in scenarios 1 and 2,
    huggingface_hub.errors.HfHubHTTPError: 429 Client Error: Too Many Requests for url: http://127.0.0.1:<port>/api/datasets/someorg/somedata/revision/<sha> (Request ID: ...)
in scenarios 3 and 5b `HTTP Error 429 thrown while requesting HEAD ...` with `Retrying in Ns`,
and 5b loads the cached copy; datasets 4.4.1 + huggingface_hub 1.1.7 (httpx) prints the same
there and, in scenarios 1 and 2,
    huggingface_hub.errors.HfHubHTTPError: Client error '429 Too Many Requests' for url 'http://127.0.0.1:<port>/api/datasets/someorg/somedata/revision/<sha>' (Request ID: ...)
followed by `For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/429`.
"""
import hashlib
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
DATA = b"".join(json.dumps({"text": f"example {i}"}).encode() + b"\n" for i in range(8))
FILES = {"README.md": README, "data/train.jsonl": DATA}


def _oid(body):
    return hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()


def _entry(path):
    return {"type": "file", "path": path, "size": len(FILES[path]), "oid": _oid(FILES[path])}


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

    def _serve(self, body):
        """Answer like a Hub that is not rate-limiting: the files, the metadata and the file list."""
        path = self.path.split("?")[0]
        repo = "/api/datasets/someorg/somedata"
        if "/resolve/" in path:
            name = path.split("/resolve/", 1)[1].split("/", 1)[1]
            if name in FILES:
                return self._send(200, FILES[name], [("ETag", '"%s"' % _oid(FILES[name])), ("X-Repo-Commit", SHA),
                                                     ("Content-Type", "text/plain")])
            return self._send(404, b'{"error":"Entry not found"}', [("Content-Type", "application/json"),
                                                                      ("X-Error-Code", "EntryNotFound"),
                                                                      ("X-Repo-Commit", SHA)])
        if path.startswith(repo):
            rest = path[len(repo):]
            if rest in ("", "/revision/main", f"/revision/{SHA}"):
                info = {"id": "someorg/somedata", "sha": SHA, "private": False, "gated": False, "disabled": False,
                        "siblings": [{"rfilename": k} for k in FILES], "cardData": {}, "tags": [],
                        "lastModified": "2024-01-01T00:00:00.000Z"}
                return self._json(info)
            if rest.startswith("/tree/"):
                sub = rest.split("/", 3)[3] if rest.count("/") >= 3 else ""
                if sub == "":
                    return self._json([{"type": "directory", "path": "data", "oid": "d" * 40, "size": 0},
                                       _entry("README.md")])
                return self._json([_entry("data/train.jsonl")] if sub == "data" else [])
            if rest.startswith("/paths-info/"):
                return self._json([_entry(k) for k in FILES if k in body.decode()])
        return self._send(404, b'{"error":"not found"}', [("Content-Type", "application/json")])

    def _json(self, obj):
        return self._send(200, json.dumps(obj).encode(), [("Content-Type", "application/json")])

    def _reply(self):
        STATE["requests"] += 1
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if STATE["mode"] == "ok":
            return self._serve(body)
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
getattr(datasets, "disable_progress_bars", getattr(datasets, "disable_progress_bar", None))()  # name before 2.x
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
        scenario("5a. warm cache: the Hub serves the dataset once", port, os.path.join(root, "h5"), "ok", True)
        scenario("5b. warm cache, then everything refused with 429", port, os.path.join(root, "h5"), "all", True)
    server.shutdown()
