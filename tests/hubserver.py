"""A loopback Hugging Face hub for tests: a small threaded HTTP server on 127.0.0.1 (port 0) that answers
the requests huggingface_hub 2.4.0 makes, serving repositories built at test time in a temp dir.

What it answers (point ``HF_ENDPOINT`` at ``server.url``):

- ``GET /api/models/<org>/<name>/revision/<rev>[?blobs=true]``: repo info (``HfApi.model_info``,
  ``repo_info``: the commit ``sha`` and the ``siblings``; with ``blobs=true`` their size, blobId and lfs).
- ``GET /api/models/<org>/<name>/tree/<rev>[/<path>][?recursive=true]``: the tree listing
  (``list_repo_tree``, which ``snapshot_download`` calls).
- ``HEAD`` and ``GET /<org>/<name>/resolve/<rev>/<path>``: a file, with ``X-Repo-Commit``, ``ETag`` (the git
  blob sha1, or for an LFS file the sha256, also sent as ``X-Linked-Etag``), ``X-Linked-Size``,
  ``Content-Length``, ``Accept-Ranges``; ``Range: bytes=N-`` answers 206 with ``Content-Range`` (resume).
- ``GET /api/agent-harnesses``: the registry huggingface_hub's user agent fetches once a day (empty here).
- A revision is ``main`` or the repo's commit; anything else answers 404 the way the hub does
  (``X-Error-Code: RepoNotFound | RevisionNotFound | EntryNotFound``).

Failure modes, switched per test with ``server.mode``: ``"ok"``; ``"500"`` (every request answers 500);
``"404"`` (every request answers a plain 404, like a wrong ``HF_ENDPOINT``); ``"hang"`` (accepts the
connection, reads the request, never answers); ``"die"`` (a GET of a weights file sends its headers with the
full Content-Length, writes the bytes up to the file's middle, and closes the connection: a resumed request
that starts past the middle gets headers and nothing). ``server.die_times`` limits how often it dies
(None: always). Every request is logged in ``server.requests`` (method, path, query, range, status,
body bytes sent), so a test can assert that nothing asked the hub at all.

A hostile or slow hub, switched per test with attributes (all off by default):

- ``server.etags = {name: value}``: the ``ETag`` (and ``X-Linked-Etag``) header sent verbatim for that file
  (``'"../../../x/etag-pwned"'``, ``'"not-a-checksum"'``, ...).
- ``server.commit = value``: the commit the hub reports (repo info's ``sha``, ``X-Repo-Commit``), also
  accepted as a revision (``"../../../snap"``).
- ``server.sizes = False``: no size anywhere: none in repo info, no ``X-Linked-Size``, no ``Content-Length``
  (a body then ends when the connection closes).
- ``server.truncate = {name: n}``: a GET of that file sends its first ``n`` bytes only (then closes; with
  sizes on, after announcing the full length).
- ``server.trickle = seconds``: bodies go out one byte per that many seconds (only answers whose path
  contains ``server.trickle_paths``, every one when it is ``""``); a stopped server stops trickling.
  ``server.trickle_headers = seconds`` does the same to the status line and headers (a client's read timeout
  never fires: a byte always comes in time).
- ``server.errors = {regex: status}``: a request whose path matches (``re.search``) answers that status;
  ``server.reason`` is the reason phrase of every error answer (``"500 ![x](http://...)"``).
- ``server.redirects = {regex: base}``: a request whose path matches answers ``302`` to ``base`` + the path
  (another server's url: a redirect to another host).
- ``server.lies = {file: n}``: the file list (repo info, tree) declares that file to be ``n`` bytes; with
  ``server.lie_in_head`` (default True) its HEAD says so too (``X-Linked-Size``), and a GET then sends the
  whole true file with no Content-Length (the body ends when the connection closes): more than declared.

The repositories (``build_catalogue_repos``) carry the real catalogue repos' ids and file names; their
contents are the bundled stand-ins (small, so tests stay fast), or, for a variant whose stand-in is not
bundled yet, a tiny randomly initialised model of that family. Beside the files the app loads, each repo
has files the app must never download (pytorch_model.bin when safetensors exist, tf_model.h5,
flax_model.msgpack, rust_model.ot, onnx/...): ``Repo.wanted`` is the set a prefetch must fetch.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".h5", ".msgpack", ".ot", ".onnx", ".model", ".pt")
WEIGHT_SUFFIXES = (".safetensors", ".bin")
MODES = ("ok", "500", "404", "hang", "die")


@dataclass(frozen=True)
class RepoFile:
    path: str  # in the repo, "/"-separated
    disk: Path
    size: int
    git_sha1: str  # the git blob id (what the hub's ETag is for a regular file)
    sha256: str
    wanted: bool  # a file the app loads (config, tokenizer, the weights transformers picks)

    @property
    def is_lfs(self) -> bool:
        return self.path.endswith(LFS_SUFFIXES)

    @property
    def etag(self) -> str:
        return self.sha256 if self.is_lfs else self.git_sha1


@dataclass
class Repo:
    repo_id: str
    commit: str = ""
    files: dict[str, RepoFile] = field(default_factory=dict)

    @property
    def wanted(self) -> set[str]:
        return {p for p, f in self.files.items() if f.wanted}

    def add(self, path: str, disk: Path, wanted: bool) -> None:
        data = disk.read_bytes()
        git = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        self.files[path] = RepoFile(path, disk, len(data), git, hashlib.sha256(data).hexdigest(), wanted)
        self.commit = hashlib.sha1(
            (self.repo_id + "".join(f"{p}:{f.git_sha1}" for p, f in sorted(self.files.items()))).encode()
        ).hexdigest()


@dataclass(frozen=True)
class Logged:
    method: str
    path: str
    query: str
    range: str | None
    status: int | None  # None: never answered
    sent: int  # body bytes written


class HubServer:
    """``with HubServer(repos) as hub: os.environ["HF_ENDPOINT"] = hub.url``."""

    def __init__(self, repos: dict[str, Repo], mode: str = "ok"):
        self.repos = repos
        self.mode = mode
        self.die_times: int | None = None
        self.etags: dict[str, str] = {}
        self.commit: str | None = None
        self.sizes = True
        self.truncate: dict[str, int] = {}
        self.trickle: float | None = None
        self.trickle_paths = ""
        self.trickle_headers: float | None = None
        self.release = threading.Event()  # set: a trickling body sends its rest at once
        self.errors: dict[str, int] = {}
        self.reason: str | None = None
        self.redirects: dict[str, str] = {}
        self.lies: dict[str, int] = {}
        self.lie_in_head = True
        self.requests: list[Logged] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle ---------------------------------------------------------------------------------
    def start(self) -> "HubServer":
        handler = type("Handler", (_Handler,), {"hub": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self._address = self._httpd.server_address[:2]
        return self

    def stop(self) -> None:
        self._stop.set()  # releases handlers held by "hang"
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(5)
            self._httpd = None

    def __enter__(self) -> "HubServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Where it listens (after ``stop``, where it listened: a port that refuses connections)."""
        host, port = self._address
        return f"http://{host}:{port}"

    # -- the request log ----------------------------------------------------------------------------
    def log(self, entry: Logged) -> None:
        with self._lock:
            self.requests.append(entry)

    def clear_log(self) -> None:
        with self._lock:
            self.requests.clear()

    def gets(self, repo_id: str | None = None, name: str | None = None) -> list[Logged]:
        """The file downloads (GET .../resolve/...) logged, for one repo and file name if given."""
        with self._lock:
            hits = [r for r in self.requests if r.method == "GET" and "/resolve/" in r.path]
        if repo_id:
            hits = [r for r in hits if r.path.startswith(f"/{repo_id}/resolve/")]
        if name:
            hits = [r for r in hits if r.path.endswith("/" + name)]
        return hits

    def reported(self, repo: Repo) -> str:
        """The commit the hub reports for ``repo``."""
        return repo.commit if self.commit is None else self.commit

    def _dies(self) -> bool:
        with self._lock:
            if self.mode != "die":
                return False
            if self.die_times is None:
                return True
            if self.die_times <= 0:
                return False
            self.die_times -= 1
            return True


API_INFO = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/revision/(?P<rev>[^/]+)$")
API_TREE = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?$")
RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")


class _Handler(BaseHTTPRequestHandler):
    hub: HubServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the hub: every answer carries a Content-Length

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    # -- dispatch -----------------------------------------------------------------------------------
    def _serve(self, head: bool) -> None:
        parts = urlsplit(self.path)
        raw, path, query = parts.path, unquote(parts.path), parts.query
        self._entry = dict(method=self.command, path=path, query=query, range=self.headers.get("Range"))
        mode = self.hub.mode
        for pattern, status in self.hub.errors.items():
            if re.search(pattern, path):
                return self._json(status, {"error": "refused"})
        for pattern, base in self.hub.redirects.items():
            if re.search(pattern, path):
                return self._send(302, b"", {"Location": base.rstrip("/") + raw})
        if mode == "hang":
            self.hub.log(Logged(**self._entry, status=None, sent=0))
            self.hub._stop.wait()  # never answers; released when the server stops
            self.close_connection = True
            return
        if mode == "500":
            return self._json(500, {"error": "Internal Error - We're working hard to fix this as soon as possible!"})
        if mode == "404":
            return self._send(404, b"Not Found", {"Content-Type": "text/plain"})
        if path == "/api/agent-harnesses":  # huggingface_hub's user-agent asks once a day (cached in HF_HOME)
            return self._json(200, {"standardEnvVars": [], "harnesses": {}})
        if m := API_INFO.match(raw):
            return self._info(unquote(m["repo"]), unquote(m["rev"]), parse_qs(query))
        if m := API_TREE.match(raw):
            return self._tree(unquote(m["repo"]), unquote(m["rev"]), unquote(m["path"] or ""), parse_qs(query))
        if m := RESOLVE.match(raw):
            return self._resolve(unquote(m["repo"]), unquote(m["rev"]), unquote(m["path"]), head)
        return self._send(404, b"Not Found", {"Content-Type": "text/plain"})

    def _repo(self, repo_id: str, rev: str) -> Repo | None:
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            self._json(
                404,
                {"error": "Repository not found"},
                {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"},
            )
            return None
        if rev not in ("main", repo.commit, self.hub.commit):
            self._json(
                404,
                {"error": f"Invalid rev id: {rev}"},
                {"X-Error-Code": "RevisionNotFound", "X-Error-Message": f"Invalid rev id: {rev}"},
            )
            return None
        return repo

    # -- /api ---------------------------------------------------------------------------------------
    def _info(self, repo_id: str, rev: str, query: dict) -> None:
        repo = self._repo(repo_id, rev)
        if repo is None:
            return
        blobs = query.get("blobs", ["false"])[0].lower() in ("1", "true")
        siblings = []
        for f in sorted(repo.files.values(), key=lambda f: f.path):
            s = {"rfilename": f.path}
            if blobs:
                size = self.hub.lies.get(f.path, f.size)
                s |= {"size": size, "blobId": f.git_sha1} if self.hub.sizes else {"blobId": f.git_sha1}
                if f.is_lfs and self.hub.sizes:
                    s["lfs"] = {"sha256": f.sha256, "size": size, "pointerSize": 134}
            siblings.append(s)
        self._json(
            200,
            {
                "_id": repo.commit[:24],
                "id": repo_id,
                "modelId": repo_id,
                "author": repo_id.split("/")[0],
                "sha": self.hub.reported(repo),
                "lastModified": "2024-01-01T00:00:00.000Z",
                "private": False,
                "gated": False,
                "disabled": False,
                "downloads": 0,
                "likes": 0,
                "library_name": "transformers",
                "tags": ["transformers"],
                "siblings": siblings,
            },
        )

    def _tree(self, repo_id: str, rev: str, under: str, query: dict) -> None:
        repo = self._repo(repo_id, rev)
        if repo is None:
            return
        recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
        prefix = under.strip("/") + "/" if under.strip("/") else ""
        entries, folders = [], set()
        for f in sorted(repo.files.values(), key=lambda f: f.path):
            if not f.path.startswith(prefix):
                continue
            rest = f.path[len(prefix) :]
            if "/" in rest and not recursive:
                folders.add(prefix + rest.split("/")[0])
                continue
            if recursive:
                bits = rest.split("/")[:-1]
                folders |= {prefix + "/".join(bits[: i + 1]) for i in range(len(bits))}
            size = self.hub.lies.get(f.path, f.size)
            e = {"type": "file", "oid": f.git_sha1, "size": size, "path": f.path}
            if f.is_lfs:
                e["lfs"] = {"oid": f.sha256, "size": size, "pointerSize": 134}
            entries.append(e)
        dirs = [
            {"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0, "path": d}
            for d in sorted(folders)
        ]
        if prefix and not entries and not dirs:
            return self._json(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
        self._json(200, dirs + entries)

    # -- /resolve -----------------------------------------------------------------------------------
    def _resolve(self, repo_id: str, rev: str, path: str, head: bool) -> None:
        repo = self._repo(repo_id, rev)
        if repo is None:
            return
        f = repo.files.get(path)
        if f is None:
            return self._json(
                404,
                {"error": "Entry not found"},
                {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found", "X-Repo-Commit": repo.commit},
            )
        hub = self.hub
        etag = hub.etags.get(path, f'"{f.etag}"')
        headers = {
            "X-Repo-Commit": hub.reported(repo),
            "ETag": etag,
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        lie = path in hub.lies and hub.lie_in_head
        if hub.sizes:
            headers["X-Linked-Size"] = str(hub.lies[path] if lie else f.size)
        if f.is_lfs:
            headers["X-Linked-Etag"] = hub.etags.get(path, f'"{f.sha256}"')
        start, end = 0, f.size - 1
        status = 200
        rng = self.headers.get("Range")
        if rng and not head:
            m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng.strip())
            if not m or int(m[1]) >= f.size:
                return self._send(416, b"", {"Content-Range": f"bytes */{f.size}"})
            start = int(m[1])
            end = min(int(m[2]), f.size - 1) if m[2] else f.size - 1
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{f.size}"
        length = end - start + 1 if hub.sizes else None
        if head:
            return self._send(200, b"", headers, length=(hub.lies[path] if lie else f.size) if hub.sizes else None)
        data = f.disk.read_bytes()[start : end + 1]
        if lie:  # the whole true file, delimited by the connection's end: more than the HEAD declared
            return self._send(status, data, headers, length=None, die=True, unsized=True)
        if path.endswith(WEIGHT_SUFFIXES) and hub._dies():
            cut = max(f.size // 2 - start, 0)  # the connection drops at the file's middle
            return self._send(status, data[:cut], headers, length=length, die=True)
        if path in hub.truncate:
            return self._send(status, data[: max(hub.truncate[path] - start, 0)], headers, length=length, die=True)
        self._send(status, data, headers, length=length)

    # -- writing ------------------------------------------------------------------------------------
    def _json(self, status: int, payload, headers: dict | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})

    def _send(
        self,
        status: int,
        body: bytes,
        headers: dict,
        length: int | None = None,
        die: bool = False,
        unsized: bool = False,
    ) -> None:
        """Answer. ``length`` is the Content-Length announced (the body's own by default; with ``server.sizes``
        off, or ``unsized``, none: the body ends when the connection closes)."""
        hub, sent = self.hub, 0
        unsized = unsized or (not hub.sizes and "/resolve/" in self._entry["path"] and status < 400)
        die = die or unsized
        gap = hub.trickle if hub.trickle and hub.trickle_paths in self._entry["path"] else None
        slow = hub.trickle_headers if hub.trickle_headers and hub.trickle_paths in self._entry["path"] else None
        try:
            self.send_response(status, hub.reason if status >= 400 and hub.reason else None)
            for k, v in headers.items():
                self.send_header(k, v)
            if not unsized:
                self.send_header("Content-Length", str(len(body) if length is None else length))
            if die:
                self.send_header("Connection", "close")
            if slow is not None:  # the status line and headers, a byte at a time
                head, self._headers_buffer = b"".join(self._headers_buffer) + b"\r\n", []
                for i in range(len(head)):
                    if hub._stop.wait(slow):
                        raise OSError("stopped")
                    self.wfile.write(head[i : i + 1])
                    self.wfile.flush()
            else:
                self.end_headers()
            self.wfile.flush()
            if self.command != "HEAD" and body:
                if gap is None:  # in pieces, counting each: a client that hangs up mid-body is logged with what went
                    for i in range(0, len(body), 64 * 1024):  # out before, not 0 (one write raised and counted nothing)
                        self.wfile.write(body[i : i + 64 * 1024])
                        sent = min(len(body), i + 64 * 1024)
                else:
                    for i in range(len(body)):
                        if hub.release.is_set():
                            self.wfile.write(body[i:])
                            sent = len(body)
                            break
                        if hub._stop.wait(gap):
                            die = True
                            break
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        sent += 1
            self.wfile.flush()
        except OSError:
            die = True
        finally:
            self.hub.log(Logged(**self._entry, status=status, sent=sent))
        if die:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


# -- the repositories ---------------------------------------------------------------------------------
#: per hub id: how its weights are stored on the real hub ("safetensors", or "bin" when the repo has no
#: safetensors) and the files beside them that the app must never download.
LAYOUT: dict[str, tuple[str, tuple[str, ...]]] = {
    "google/bert_uncased_L-4_H-256_A-4": ("safetensors", ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack")),
    "FacebookAI/roberta-base": (
        "safetensors",
        (
            "pytorch_model.bin",
            "tf_model.h5",
            "flax_model.msgpack",
            "rust_model.ot",
            "dict.txt",
            "onnx/model.onnx",
            "onnx/config.json",
        ),
    ),
    "albert/albert-base-v2": (
        "safetensors",
        ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "rust_model.ot", "with-prefix-tf_model.h5"),
    ),
    "distilbert/distilbert-base-uncased": (
        "safetensors",
        ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "rust_model.ot"),
    ),
    "google/electra-small-generator": ("safetensors", ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack")),
    "google/electra-small-discriminator": ("safetensors", ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack")),
    "xlnet/xlnet-base-cased": ("safetensors", ("pytorch_model.bin", "tf_model.h5", "rust_model.ot")),
    "microsoft/deberta-base": ("bin", ("tf_model.h5", "rust_model.ot", "bpe_encoder.bin")),
    "answerdotai/ModernBERT-base": (
        "safetensors",
        ("onnx/model.onnx", "onnx/model_fp16.onnx", "onnx/model_quantized.onnx"),
    ),
}
TOKENIZER_SOURCES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json")


def build_catalogue_repos(root: Path, keys: list[str] | None = None) -> dict[str, Repo]:
    """One repo per catalogue variant (or per key given) under ``root``: hub id -> Repo."""
    from app.models.catalogue import CATALOGUE

    repos = {}
    for key, variant in CATALOGUE.items():
        if keys is not None and key not in keys:
            continue
        weights, decoys = LAYOUT.get(variant.hub_id, ("safetensors", ("pytorch_model.bin", "tf_model.h5")))
        src = variant.bundled_path if variant.bundled_available() else _tiny_stand_in(variant, root / "_made" / key)
        repos[variant.hub_id] = _build_repo(variant.hub_id, src, root / variant.hub_id, weights, decoys)
    return repos


def _build_repo(repo_id: str, src: Path, dest: Path, weights: str, decoys: tuple[str, ...]) -> Repo:
    dest.mkdir(parents=True, exist_ok=True)
    repo = Repo(repo_id)

    def put(name: str, data: bytes | None = None, copy: Path | None = None, wanted: bool = True) -> None:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if copy is not None:
            shutil.copyfile(copy, target)
        else:
            target.write_bytes(data)
        repo.add(name, target, wanted)

    put("config.json", copy=src / "config.json")
    for name in TOKENIZER_SOURCES:
        if (src / name).exists():
            put(name, copy=src / name)
    # the vocabulary files the real repos carry beside tokenizer.json, taken from it
    model = json.loads((src / "tokenizer.json").read_text())["model"]
    if model["type"] == "WordPiece":
        put("vocab.txt", "".join(t + "\n" for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1])).encode())
    elif model["type"] == "BPE":
        put("vocab.json", json.dumps(model["vocab"], ensure_ascii=False).encode())
        merges = [" ".join(m) if isinstance(m, list) else m for m in model["merges"]]
        put("merges.txt", ("#version: 0.2\n" + "\n".join(merges) + "\n").encode())
    if weights == "safetensors":
        put("model.safetensors", copy=src / "model.safetensors")
    else:
        import torch
        from safetensors.torch import load_file

        target = dest / "pytorch_model.bin"
        torch.save(load_file(src / "model.safetensors"), target)
        repo.add("pytorch_model.bin", target, True)
    put("README.md", f"# {repo_id}\n\nA loopback copy for tests.\n".encode(), wanted=False)
    put(".gitattributes", b"*.bin filter=lfs diff=lfs merge=lfs -text\n", wanted=False)
    for name in decoys:  # files the app must never download: small, distinct bytes
        put(name, hashlib.sha256(f"{repo_id}/{name}".encode()).digest() * 512, wanted=False)
    return repo


def _tiny_stand_in(variant, dest: Path) -> Path:
    """A tiny randomly initialised model of the variant's family, with the bundled RoBERTa tokenizer (BPE):
    for a variant whose trained stand-in is not bundled yet. The tests only need from_pretrained to work."""
    import torch
    import transformers

    from app.models.catalogue import get

    dest.mkdir(parents=True, exist_ok=True)
    tok_src = get("roberta").bundled_path
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(tok_src / name, dest / name)
    vocab = json.loads((tok_src / "tokenizer.json").read_text())["model"]["vocab"]
    small = dict(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        pad_token_id=vocab["<pad>"],
    )
    if variant.family == "deberta":
        config = transformers.DebertaConfig(**small, **variant.load_kwargs)
    elif variant.family == "modernbert":
        config = transformers.ModernBertConfig(
            **small,
            bos_token_id=vocab["<s>"],
            cls_token_id=vocab["<s>"],
            eos_token_id=vocab["</s>"],
            sep_token_id=vocab["</s>"],
            local_attention=16,
        )
        special = {
            "bos_token": "<s>",
            "cls_token": "<s>",
            "eos_token": "</s>",
            "sep_token": "</s>",
            "mask_token": "<mask>",
            "pad_token": "<pad>",
            "unk_token": "<unk>",
        }
        (dest / "special_tokens_map.json").write_text(json.dumps(special))
    elif variant.family == "bert":
        config = transformers.BertConfig(**small)
    else:
        raise ValueError(f"no tiny stand-in recipe for the {variant.family} family")
    torch.manual_seed(0)
    cls = getattr(transformers, variant.model_class)
    model = cls.from_config(config) if hasattr(cls, "from_config") else cls(config)
    bars = transformers.utils.logging.is_progress_bar_enabled()
    transformers.utils.logging.disable_progress_bar()
    model.save_pretrained(dest)
    if bars:
        transformers.utils.logging.enable_progress_bar()
    return dest
