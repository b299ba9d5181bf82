"""Reproduce what `hf_hub_download` prints when the named repository has no such file.

Needs `huggingface_hub` next to torch; torch is not used. Nothing leaves the machine: a
small stand-in for the Hub listens on 127.0.0.1 and `HF_ENDPOINT` points the download at it.
The stand-in holds one model repository, `someorg/somemodel`, with the files `config.yaml`
and `last.ckpt`, and answers a request for any other file the way the Hub does: HTTP 404
with the `X-Error-Code: EntryNotFound` header (and `X-Error-Message`, `X-Request-Id`,
`X-Repo-Commit`), so the lines below are what the installed huggingface_hub prints.

1. The training config names `model.ckpt`, which the repository does not contain:
       huggingface_hub.errors.RemoteEntryNotFoundError: 404 Client Error. (Request ID: Root=1-...)
       (blank line)
       Entry Not Found for url: http://127.0.0.1:<port>/someorg/somemodel/resolve/main/model.ckpt.
2. Listing the repository first shows the names it really has.
3. The fix: the config names `last.ckpt`, which exists; the download succeeds.

The exception class is printed with its module path: `huggingface_hub.errors.RemoteEntryNotFoundError`
from huggingface_hub 1.0 (seen with 2.4.0), `huggingface_hub.errors.EntryNotFoundError` in 0.25 to
0.36, `huggingface_hub.utils._errors.EntryNotFoundError` before 0.25 (this script printed all three
with 0.20.3, 0.36.2, 1.1.7 and 2.4.0); the two message lines are the same in every release from 0.10.
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
REQUEST_ID = "Root=1-6a1b2c3d-4e5f60718293a4b5c6d7e8f9"
FILES = {"config.yaml": b"model:\n  hidden: 8\n", "last.ckpt": b"\x80\x04not-really-a-checkpoint"}


def _oid(body):
    return hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()


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

    def _json(self, obj):
        return self._send(200, json.dumps(obj).encode(), [("Content-Type", "application/json")])

    def _reply(self):
        path = self.path.split("?")[0]
        repo = "/someorg/somemodel/resolve/"
        api = "/api/models/someorg/somemodel"
        if path.startswith(repo):
            name = path[len(repo):].split("/", 1)[1]
            if name in FILES:
                return self._send(200, FILES[name], [("ETag", '"%s"' % _oid(FILES[name])), ("X-Repo-Commit", SHA),
                                                     ("Content-Type", "application/octet-stream")])
            return self._send(404, b'{"error":"Entry not found"}', [
                ("Content-Type", "application/json"), ("X-Error-Code", "EntryNotFound"),
                ("X-Error-Message", "Entry not found"), ("X-Request-Id", REQUEST_ID), ("X-Repo-Commit", SHA)])
        if path.startswith(api + "/tree/"):
            return self._json([{"type": "file", "path": k, "size": len(v), "oid": _oid(v)} for k, v in FILES.items()])
        if path in (api, api + "/revision/main"):
            return self._json({"id": "someorg/somemodel", "sha": SHA, "private": False,
                               "siblings": [{"rfilename": k} for k in FILES]})
        return self._send(404, b'{"error":"not found"}', [("Content-Type", "application/json")])

    do_GET = do_HEAD = _reply

    def log_message(self, *args):
        pass


CHILD = r"""
import os, sys
import huggingface_hub
from huggingface_hub import hf_hub_download, list_repo_files
print("huggingface_hub", huggingface_hub.__version__, flush=True)
try:
    if os.environ.get("LIST"):
        print("files in someorg/somemodel:", sorted(list_repo_files("someorg/somemodel")), flush=True)
    else:
        path = hf_hub_download("someorg/somemodel", os.environ["CKPT"])
        print("downloaded:", os.path.basename(path), os.path.getsize(path), "bytes", flush=True)
except Exception:
    import traceback
    traceback.print_exc()
"""


def scenario(title, port, home, extra_env):
    print(f"== {title}", flush=True)
    env = dict(os.environ, HF_ENDPOINT=f"http://127.0.0.1:{port}", HF_HOME=home, HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1")
    env.pop("HF_HUB_OFFLINE", None)
    env.update(extra_env)
    run = subprocess.run([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=120, check=False)
    # keep the exception lines, not the traceback frames
    keep = [line for line in run.stdout.splitlines() if not line.startswith("  ")]
    print("\n".join(keep).strip(), flush=True)


if __name__ == "__main__":
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    with tempfile.TemporaryDirectory(prefix="hf-404-") as root:
        scenario("1. config asks for model.ckpt, which the repository does not hold", port,
                 os.path.join(root, "h"), {"CKPT": "model.ckpt"})
        scenario("2. list the repository's files", port, os.path.join(root, "h"), {"LIST": "1"})
        scenario("3. config fixed to last.ckpt", port, os.path.join(root, "h"), {"CKPT": "last.ckpt"})
    server.shutdown()
