"""The one downloader: put a catalogue variant's real checkpoint into the standard Hugging Face cache, and read it
back from there (:func:`cached_snapshot`). Two callers use it: the command line ``python -m app.models.prefetch``
(before an offline lecture) and the app's *Hub* source (``loading.load(key, source="hub")``), which downloads
through :func:`fetch` too, without retries, so a hub that breaks mid-file makes it fall back to the bundled
stand-in at once. It imports neither of them.

It downloads only the files the app loads — ``config.json``, the tokenizer files, and the weights transformers
reads (``model.safetensors``, or its shards and index; ``pytorch_model.bin`` only when a repo has no safetensors
at all) — never the TensorFlow, Flax, Rust or ONNX copies beside them. Afterwards the app's *Auto* source finds
them in the cache (``app.models.loading``) without any network.

How a download behaves, and why:

- **Bounded.** Every request has a timeout: ``HF_HUB_ETAG_TIMEOUT`` for the hub's answers (repo info, file
  metadata) and ``HF_HUB_DOWNLOAD_TIMEOUT`` for the gap between two pieces of a file. The command line sets
  both to its defaults (``prefetch.DEFAULT_TIMEOUTS``) unless you set them yourself. Those bound only a
  silence, so one model's whole download also has a deadline (``DOWNLOAD_DEADLINE_S``, or
  ``BVE_DOWNLOAD_DEADLINE`` seconds): a hub that trickles stops there, and the caller gets its answer on time
  (the download runs in a worker thread that stops at its next piece). A hub that cannot be reached (refused,
  silent past the timeout, or too slow for the deadline) says so (``Fetched.hub_unreachable``): the command
  line then does not try the models after it.
- **Resumable.** A file arrives in ``blobs/<etag>.incomplete`` beside where it will live in the cache. A broken
  connection is retried from where it stopped (an HTTP ``Range`` request) a few times (``retries``), and a
  later run picks up the same partial file. (huggingface_hub 2.4.0 itself cannot resume across runs: its
  temporary file is unique to one process and deleted when a download fails.)
- **Never half-valid.** A file enters the cache only complete and checked (its size when the hub tells it, and
  always its sha256 or git blob id against the hub's ETag); ``refs/main`` moves to the new snapshot only when
  all of that model's files are there. Until then the app keeps using what it used before (the bundled
  stand-in). A file already in the cache is checked the same way before it counts, so a run repairs a
  damaged one.
- **Paths from the hub are not trusted.** The commit and every ETag name folders and files in the cache, so
  they must be what they claim — 40 (git sha1) or 64 (sha256) lowercase hex digits — and every path written
  is resolved and must stay inside the cache; anything else is refused with a sentence and nothing is saved.
  Reading the cache back (:func:`cached_snapshot`) applies the same rules.
- **Only the hub's hosts.** Redirects are followed only to the hub's own host (``HF_ENDPOINT``), and for the
  public hub to its file hosts (``*.huggingface.co``, ``*.hf.co``); a redirect anywhere else is refused with a
  sentence before a byte of the file is read.
- **No more than declared.** A caller that decided from the hub's file list (``app.models.admission``) passes
  the sizes it was told (``caps``): a file announced larger, or one that keeps sending past its size, is stopped
  and its partial deleted (:class:`Refused`).
- **Cancellable, with per-file progress.** ``cancel`` (a ``threading.Event``) stops a download at its next piece,
  the partial kept to resume; ``on_file`` hears each file's name, bytes, size and speed (:class:`Progress`).
- It uses the cache layout every Hugging Face tool shares (``<cache>/models--org--name/{blobs,snapshots,refs}``)
  and respects ``HF_ENDPOINT``, ``HF_HOME``, ``HF_HUB_CACHE``, ``HF_HUB_OFFLINE`` and ``HF_TOKEN``.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first, as in every app module; nothing heavy is imported here)

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import urljoin, urlsplit

from app.models.catalogue import Variant

REVISION = "main"
#: configuration and tokenizer files, at the top of a repo, that transformers reads when they exist
CONFIG_AND_TOKENIZER_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "spm.model",
)
RETRIES = 3  # attempts in a row that bring no new byte before a file counts as failed (the CLI's default)
#: seconds one model's whole download may take, start to end (the CLI and the app's Hub source alike)
DOWNLOAD_DEADLINE_S = 600.0
DEADLINE_ENV = "BVE_DOWNLOAD_DEADLINE"
POLL_S = 0.25  # how often the caller hears of the progress
CHUNK = 1 << 20
MAX_ANSWER = 32 << 20  # the largest repo info accepted, in bytes
#: what a commit and an ETag must be before they name anything in the cache: a git sha1 or a sha256
CHECKSUM = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

_SHARD = {
    "safetensors": re.compile(r"model-\d+-of-\d+\.safetensors"),
    "bin": re.compile(r"pytorch_model-\d+-of-\d+\.bin"),
}


def files_to_fetch(repo_files: list[str]) -> list[str]:
    """The files of a repo the app loads, in download order: configuration and tokenizer files, then the weights
    transformers picks — ``model.safetensors``; else its index and shards; and only when the repo has no
    safetensors weights at all, ``pytorch_model.bin`` (or its index and shards). Nothing in sub-folders."""
    top = {f for f in repo_files if "/" not in f}
    chosen = [f for f in CONFIG_AND_TOKENIZER_FILES if f in top]
    for kind, single, index in (
        ("safetensors", "model.safetensors", "model.safetensors.index.json"),
        ("bin", "pytorch_model.bin", "pytorch_model.bin.index.json"),
    ):
        if single in top:
            return chosen + [single]
        if index in top:
            return chosen + [index] + sorted(f for f in top if _SHARD[kind].fullmatch(f))
    return chosen


def has_weights(files: list[str]) -> bool:
    return any(f.endswith((".safetensors", ".bin")) for f in files)


def download_deadline(environ=os.environ) -> float:
    """Seconds one model's download may take: ``BVE_DOWNLOAD_DEADLINE`` when it is a positive number, else
    ``DOWNLOAD_DEADLINE_S``."""
    try:
        seconds = float(environ.get(DEADLINE_ENV, ""))
    except ValueError:
        return DOWNLOAD_DEADLINE_S
    return seconds if 0 < seconds < float("inf") else DOWNLOAD_DEADLINE_S


class DownloadBroke(OSError):
    """The connection broke in the middle of a file more often than the retries allow; the partial file stays."""

    def __init__(self, name: str, have: int, size: int | None, cause: BaseException):
        self.name, self.have, self.size, self.cause = name, have, size, cause
        got = f"{_human(have)} of {_human(size)}" if size else _human(have)
        super().__init__(
            f"the connection broke during {name} ({got}, {_cause(cause)}); run this again to resume where it stopped"
        )


class ChecksumMismatch(OSError):
    pass


class NoWeights(RuntimeError):
    pass


class Refused(ValueError):
    """The hub's answer would put something where it does not belong (a commit or ETag that is no checksum, a
    path outside the cache); nothing of it was saved."""


class DeadlineExceeded(RuntimeError):
    """One model's download took longer than its deadline; what arrived stays as a partial file to resume."""

    def __init__(self, seconds: float):
        super().__init__(
            f"the download did not finish within {seconds:g} s ({DEADLINE_ENV}); what arrived is "
            "kept, so the next try resumes it"
        )


class Cancelled(RuntimeError):
    """The caller cancelled the download (its ``cancel`` event); what arrived stays as a partial file to resume."""

    def __init__(self):
        super().__init__("the download was cancelled; what arrived is kept, so the next try resumes it")


@dataclass(frozen=True)
class Progress:
    """Where one model's download stands, as ``fetch(on_file=...)`` reports it every ``POLL_S`` seconds."""

    file: str | None  # the file being fetched now (None before the first, after the last)
    file_done: int  # bytes of it in the cache's partial file (resumed bytes included)
    file_size: int | None  # its size, when the hub said
    done: int  # bytes of the whole model
    total: int | None
    bytes_per_s: float  # received in this run over its time so far (resumed bytes do not count)
    files_done: int  # files complete
    files: int  # files in all


class _Budget:
    """One model's download: its deadline (every request's timeout is capped by what is left, every loop checks
    it, the caller can cancel it) and its progress in bytes (``done`` of ``total``, which the caller reads; per
    file ``file``, ``file_done`` of ``file_size``)."""

    def __init__(self, seconds: float, bar=None, cancel: threading.Event | None = None):
        self.seconds, self.ends = seconds, time.monotonic() + seconds
        self.started = time.monotonic()
        self.cancelled = False
        self.cancel = cancel
        self.done, self.total = 0, None
        self.received = 0  # bytes that came over the network in this run
        self.file, self.file_done, self.file_size = None, 0, None
        self.files_done, self.files = 0, 0
        self.bar = bar
        self.step: str | None = None  # what is being read (admission names it when its deadline passes)

    def left(self) -> float:
        return self.ends - time.monotonic()

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
        if self.cancelled or self.left() <= 0:
            raise DeadlineExceeded(self.seconds)

    def progress(self) -> Progress:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        return Progress(
            self.file,
            self.file_done,
            self.file_size,
            self.done,
            self.total,
            self.received / elapsed,
            self.files_done,
            self.files,
        )

    def timeout(self, seconds: float) -> float:
        """A request's timeout: ``seconds``, or what is left of the deadline when that is less."""
        self.check()
        return max(min(float(seconds), self.left()), 0.01)

    def update(self, n: int, received: bool = False) -> None:
        self.done += n
        self.file_done += n
        if received:
            self.received += n
        if self.bar is not None:
            self.bar.update(n)


@dataclass
class Fetched:
    """What :func:`fetch` did for one variant. ``error`` is None when every file is in the cache."""

    variant: Variant
    commit: str | None = None
    snapshot: Path | None = None
    files: list[str] = field(default_factory=list)
    size: int = 0  # bytes of those files
    downloaded: int = 0  # bytes received in this run
    error: str | None = None
    hub_unreachable: bool = False  # the error was the connection itself: asking again for the next model is futile
    note: str | None = None  # the hub failed, but a complete copy downloaded earlier is in the cache
    loads: str | None = None  # set by the CLI's check: "yes", or why not

    @property
    def ok(self) -> bool:
        return self.error is None


def fetch(
    variant: Variant,
    *,
    retries: int = RETRIES,
    progress: bool = True,
    wait_for_lock: bool = True,
    deadline: float | None = None,
    on_progress: Callable[[int, int | None], None] | None = None,
    quote: Callable[[str], str] | None = None,
    revision: str = REVISION,
    caps: dict[str, int] | None = None,
    cancel: threading.Event | None = None,
    on_file: Callable[[Progress], None] | None = None,
) -> Fetched:
    """Download the files the app loads for ``variant`` into the Hugging Face cache, within ``deadline`` seconds
    (default :func:`download_deadline`). Never raises for a network, hub or disk problem: the result's ``error``
    says what went wrong, in a sentence, in which any text the hub chose went through ``quote`` (default
    ``app.core.text.visible``, no control characters for a terminal; the app passes its markdown escaper).

    The download runs in a worker thread; this thread waits for it, calls ``on_progress(done, total)`` (bytes;
    total None until known) and ``on_file(Progress)`` every ``POLL_S`` seconds, and returns at the deadline at
    the latest, or soon after ``cancel`` is set.

    ``revision``: the branch or commit to download (``refs/main`` names it afterwards: admission pins the commit
    it decided on). ``caps``: {file: the most bytes it may have} — the files then fetched are exactly those, each
    stopped past its cap."""
    from huggingface_hub import constants

    from app.core.text import visible

    quote = quote or visible
    budget = _Budget(download_deadline() if deadline is None else deadline, cancel=cancel)
    result = Fetched(variant)

    def work() -> None:
        try:
            _fetch(variant, result, retries, progress, wait_for_lock, budget, revision, caps)
        except Exception as e:  # noqa: BLE001 — every failure becomes one sentence, never a traceback
            result.error, result.hub_unreachable = _describe(e, constants.ENDPOINT, quote)

    def tell() -> None:
        if on_progress is not None:
            on_progress(budget.done, budget.total)
        if on_file is not None:
            on_file(budget.progress())

    worker = threading.Thread(target=work, name=f"bve-fetch-{variant.key}", daemon=True)
    worker.start()
    try:
        while worker.is_alive() and budget.left() > 0 and not (cancel is not None and cancel.is_set()):
            worker.join(min(POLL_S, max(budget.left(), 0.0)))
            tell()
        if worker.is_alive() and cancel is not None and cancel.is_set():
            worker.join(min(1.0, max(budget.left(), 0.0)))  # it stops at its next piece and says so itself
    finally:
        if worker.is_alive():  # past the deadline (or interrupted): it stops at its next piece, the partial stays
            budget.cancelled = True
    if worker.is_alive():
        cancelled = cancel is not None and cancel.is_set()
        result = Fetched(
            variant,
            error=str(Cancelled() if cancelled else DeadlineExceeded(budget.seconds)),
            hub_unreachable=not cancelled,
        )
    elif result.error is None:
        tell()
    if result.error:
        use_earlier_copy(result)
    return result


def use_earlier_copy(result: Fetched) -> None:
    """After a failure: if the cache already holds a complete snapshot (``refs/main`` only ever names a complete
    one), that is what the app will use — the result says so instead of failing."""
    snapshot = cached_snapshot(result.variant.hub_id)
    if snapshot is None:
        return
    files = sorted(p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file())
    result.note = f"the hub could not be asked for a newer copy ({result.error}); the copy cached earlier is used"
    result.error, result.commit, result.snapshot = None, snapshot.name, snapshot
    result.files, result.size = files, sum((snapshot / f).stat().st_size for f in files)


def cached_snapshot(hub_id: str) -> Path | None:
    """The folder of ``hub_id``'s main revision in the local Hugging Face cache, found as huggingface_hub
    finds it (``refs/main`` -> ``snapshots/<commit>``), or None.

    The cache is read from that folder, not through the hub id: given a hub id, even with
    ``local_files_only=True``, transformers and huggingface_hub still reach for the network — a user-agent
    registry fetched from ``HF_ENDPOINT`` (up to 3 s on a dead network) and, for a repo with only
    ``pytorch_model.bin`` (microsoft/deberta-base), a background thread that asks the hub to convert it to
    safetensors. A folder is only files.

    Only a snapshot that stays in the cache counts: the commit must be a commit id (40 or 64 hex digits) and
    every file in the folder must resolve inside the model's own cache folder.
    """
    from huggingface_hub import constants

    storage = Path(constants.HF_HUB_CACHE) / f"models--{hub_id.replace('/', '--')}"
    try:
        commit = (storage / "refs" / REVISION).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not CHECKSUM.fullmatch(commit):
        return None
    snapshot = storage / "snapshots" / commit
    if not (snapshot / "config.json").is_file():
        return None
    root = storage.resolve()
    try:
        inside = all(p.resolve().is_relative_to(root) for p in (snapshot, *snapshot.rglob("*")))
    except (OSError, RuntimeError):  # a link loop
        return None
    return snapshot if inside else None


def _fetch(
    variant: Variant,
    result: Fetched,
    retries: int,
    progress: bool,
    wait_for_lock: bool,
    budget: _Budget,
    revision: str = REVISION,
    caps: dict[str, int] | None = None,
) -> None:
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name
    from huggingface_hub.utils import tqdm as hf_tqdm

    info = _repo_info(variant.hub_id, budget, revision)
    sizes = {s.rfilename: s.size for s in info.siblings or []}
    result.files = files_to_fetch(list(sizes)) if caps is None else [f for f in caps if f in sizes]
    if caps is not None and len(result.files) < len(caps):
        raise Refused(
            f"{variant.hub_id} no longer lists {', '.join(sorted(set(caps) - set(sizes)))}, which it "
            "listed when it was admitted; admit it again"
        )
    if caps is not None and (info.sha != revision and CHECKSUM.fullmatch(revision)):
        raise Refused(
            f"the hub answered commit {info.sha!s:.12} for {variant.hub_id} when {revision:.12} was asked "
            "for, so nothing was saved"
        )
    if not has_weights(result.files):
        raise NoWeights(
            f"{variant.hub_id} has no weights transformers can load (model.safetensors or pytorch_model.bin)"
        )
    if not isinstance(info.sha, str) or not CHECKSUM.fullmatch(info.sha):
        raise Refused(
            f"the hub named a commit for {variant.hub_id} that is not a commit id (40 or 64 hex "
            "digits), so nothing was saved"
        )
    result.commit = info.sha
    cache = Path(constants.HF_HUB_CACHE)
    storage = cache / repo_folder_name(repo_id=variant.hub_id, repo_type="model")
    result.snapshot = _inside(storage / "snapshots" / info.sha, storage)
    result.size = sum(sizes[f] or 0 for f in result.files)
    budget.total = result.size or None
    budget.files = len(result.files)
    with hf_tqdm(
        total=result.size,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        leave=True,
        desc=f"{variant.key} ({variant.hub_id})",
        disable=not progress,
        file=sys.stderr,
    ) as bar:
        budget.bar = bar
        for name in result.files:
            budget.check()
            budget.file, budget.file_done, budget.file_size = name, 0, sizes[name]
            result.downloaded += _fetch_file(
                variant.hub_id,
                info.sha,
                name,
                sizes[name],
                cache,
                storage,
                budget,
                retries,
                wait_for_lock,
                None if caps is None else caps[name],
            )
            budget.files_done += 1
        budget.file = None
    _write_atomically(_inside(storage / "refs" / REVISION, storage), info.sha)  # only now: the snapshot is complete


def _repo_info(repo_id: str, budget: _Budget, revision: str = REVISION):
    """``HfApi.model_info(repo_id, revision=revision, files_metadata=True)``, read within the deadline."""
    from huggingface_hub import constants, hf_raise_for_status
    from huggingface_hub.hf_api import ModelInfo
    from huggingface_hub.utils import build_hf_headers

    url = f"{constants.ENDPOINT}/api/models/{repo_id}/revision/{revision}"
    with _stream(
        url,
        "the description of " + repo_id,
        params={"blobs": True},
        headers=build_hf_headers(),
        timeout=budget.timeout(constants.HF_HUB_ETAG_TIMEOUT),
    ) as r:
        body = _read(r, budget)
        if r.status_code >= 400:
            hf_raise_for_status(_answered(r, body))
    if len(body) > MAX_ANSWER:
        raise Refused(f"the hub's description of {repo_id} is larger than {_human(MAX_ANSWER)}")
    data = json.loads(body)
    if not isinstance(data, dict):
        raise Refused(f"the hub's description of {repo_id} is not a JSON object")
    return ModelInfo(**data)


#: the public hub's own file hosts (its LFS and Xet CDNs), trusted when HF_ENDPOINT is the public hub
HUB_FILE_HOSTS = ("huggingface.co", "hf.co")
MAX_REDIRECTS = 5


def trusted_host(url: str, endpoint: str | None = None) -> bool:
    """Whether ``url`` is on the hub's own host (``HF_ENDPOINT``'s scheme, host and port), or — when that is the
    public hub — on one of its file hosts (a subdomain of ``HUB_FILE_HOSTS``, over https)."""
    from huggingface_hub import constants

    hub, there = urlsplit(endpoint or constants.ENDPOINT), urlsplit(url)
    if (there.scheme, there.hostname, there.port) == (hub.scheme, hub.hostname, hub.port):
        return True
    public = hub.hostname in HUB_FILE_HOSTS
    host = there.hostname or ""
    return public and there.scheme == "https" and any(host == h or host.endswith("." + h) for h in HUB_FILE_HOSTS)


def _elsewhere(what: str, url: str) -> Refused:
    from huggingface_hub import constants

    return Refused(
        f"the hub sent {what} to another host ({urlsplit(url).hostname}), and this app downloads only "
        f"from {urlsplit(constants.ENDPOINT).hostname}, so nothing was saved"
    )


@contextlib.contextmanager
def _stream(url: str, what: str, **kwargs):
    """``get_session().stream("GET", url, ...)``, following a redirect only to a trusted host
    (:func:`trusted_host`, at most ``MAX_REDIRECTS``); a redirect elsewhere is :class:`Refused` unread."""
    from huggingface_hub import get_session

    for _ in range(MAX_REDIRECTS + 1):
        with get_session().stream("GET", url, follow_redirects=False, **kwargs) as r:
            target = r.headers.get("Location") if r.is_redirect else None
            if target is None:
                yield r
                return
        url = urljoin(url, target)
        if not trusted_host(url):
            raise _elsewhere(what, url)
        kwargs.pop("params", None)  # the address redirected to carries its own query
    raise Refused(f"the hub redirected {what} more than {MAX_REDIRECTS} times, so nothing was saved")


def _read(r, budget: _Budget, cap: int = MAX_ANSWER) -> bytes:
    """The body of a streamed answer, read within the deadline; reading stops a byte past ``cap``."""
    chunks, n = [], 0
    for chunk in r.iter_bytes():
        budget.check()
        chunks.append(chunk)
        n += len(chunk)
        if n > cap:
            break
    return b"".join(chunks)[: cap + 1]


def _answered(r, body: bytes):
    """A streamed answer as a read one, for ``hf_raise_for_status`` (its message reads the body)."""
    import httpx2

    headers = [(k, v) for k, v in r.headers.items() if k.lower() not in ("content-encoding", "content-length")]
    return httpx2.Response(
        r.status_code, headers=headers, content=body, request=r.request, extensions=r.extensions
    )  # the body is decoded already


def _inside(path: Path, root: Path) -> Path:
    """``path`` itself, when its folder resolves inside ``root`` (the file may be a link: it is replaced, never
    followed); else :class:`Refused`."""
    if not path.parent.resolve().is_relative_to(root.resolve()):
        raise Refused(f"the hub's answer would put {path.name} outside the cache at {root}, so nothing was saved")
    return path


def _metadata(repo_id: str, commit: str, name: str, budget: _Budget, cap: int | None):
    """(url, the file's metadata) from one HEAD: its ETag a checksum, its location on a trusted host, its size
    not past ``cap``; else :class:`Refused`."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(repo_id, name, revision=commit, endpoint=constants.ENDPOINT)
    meta = get_hf_file_metadata(url, timeout=budget.timeout(constants.HF_HUB_ETAG_TIMEOUT))  # one HEAD, no retries
    if not trusted_host(meta.location):
        raise _elsewhere(name, meta.location)
    etag = meta.etag or ""  # quotes and W/ already stripped, as huggingface_hub names its blobs
    if not CHECKSUM.fullmatch(etag):
        raise Refused(
            f"the hub's ETag for {name} is not a checksum (40 or 64 hex digits), so the file cannot be "
            "checked and nothing was saved"
        )
    if cap is not None and meta.size is not None and meta.size > cap:
        raise Refused(
            f"{name} is {_human(meta.size)} on the hub, more than the {_human(cap)} its file list "
            "declared, so it was not downloaded"
        )
    return url, meta


def read_small(repo_id: str, commit: str, name: str, cap: int, budget: _Budget) -> bytes:
    """The bytes of one small file (``config.json``) at ``commit``, read into memory — nothing is written —
    within ``budget``: its ETag a checksum that the bytes match, on a trusted host, no more than ``cap`` bytes;
    else :class:`Refused` (or the hub's own error)."""
    from huggingface_hub import constants, hf_raise_for_status
    from huggingface_hub.utils import build_hf_headers

    _, meta = _metadata(repo_id, commit, name, budget, cap)
    headers = build_hf_headers()
    headers["Accept-Encoding"] = "identity"
    with _stream(meta.location, name, headers=headers, timeout=budget.timeout(constants.HF_HUB_DOWNLOAD_TIMEOUT)) as r:
        body = _read(r, budget, cap)
        if r.status_code >= 400:
            hf_raise_for_status(_answered(r, body))
    if len(body) > cap:
        raise Refused(f"{name} is larger than {_human(cap)}, so it was not read")
    digest = hashlib.sha256(body) if len(meta.etag) == 64 else hashlib.sha1(b"blob %d\0" % len(body) + body)
    if digest.hexdigest() != meta.etag:
        raise ChecksumMismatch(f"{name} arrived damaged (its checksum does not match the hub's)")
    return body


def read_range(repo_id: str, commit: str, name: str, start: int, length: int, budget: _Budget) -> bytes:
    """Bytes ``start`` .. ``start + length - 1`` of one file at ``commit`` (an HTTP ``Range`` request), read into
    memory — nothing is written — from a trusted host within ``budget``. A part of a file cannot be checked
    against its checksum: callers use these bytes only to refuse a model (a safetensors header's tensor names,
    app.models.admission), never to load one. A server that ignores the Range is read up to the part's end."""
    from huggingface_hub import constants, hf_raise_for_status
    from huggingface_hub.utils import build_hf_headers

    _, meta = _metadata(repo_id, commit, name, budget, None)
    headers = build_hf_headers()
    headers["Accept-Encoding"] = "identity"  # offsets must mean the file's bytes
    headers["Range"] = f"bytes={start}-{start + length - 1}"
    with _stream(meta.location, name, headers=headers, timeout=budget.timeout(constants.HF_HUB_DOWNLOAD_TIMEOUT)) as r:
        whole = r.status_code == 200
        body = _read(r, budget, start + length if whole else length)
        if r.status_code >= 400:
            hf_raise_for_status(_answered(r, body))
    return body[start : start + length] if whole else body[:length]


def _fetch_file(
    repo_id: str,
    commit: str,
    name: str,
    listed: int | None,
    cache: Path,
    storage: Path,
    budget: _Budget,
    retries: int,
    wait_for_lock: bool,
    cap: int | None = None,
) -> int:
    """Put one file in the cache (a checked blob + the snapshot's link to it). Returns the bytes received.
    ``cap``: the most bytes the file may have (the size a caller was told); past it the download stops."""
    from filelock import FileLock, Timeout

    url, meta = _metadata(repo_id, commit, name, budget, cap)
    etag = meta.etag
    size = meta.size if meta.size is not None else listed
    blob = _inside(storage / "blobs" / etag, storage)
    pointer = _inside(storage / "snapshots" / commit / name, storage)
    lock = _inside(cache / ".locks" / storage.name / f"{etag}.lock", cache)  # huggingface_hub's own lock
    blob.parent.mkdir(parents=True, exist_ok=True)
    lock.parent.mkdir(parents=True, exist_ok=True)
    received = 0
    try:
        with FileLock(str(lock), timeout=-1 if wait_for_lock else 0):
            if blob.is_symlink() or (blob.exists() and _problem(blob, etag, size)):
                blob.unlink()  # not what its name says (damaged, or put there by something else): fetch it again
            if blob.exists():
                budget.update(blob.stat().st_size)
            else:
                received = _download(url, meta.location, blob, size, etag, name, budget, retries, cap)
    except Timeout:
        raise OSError(f"another download of {name} is in progress") from None
    if not (pointer.is_symlink() and pointer.resolve() == blob.resolve()):
        _link(blob, pointer)  # new, or pointing anywhere but at the checked blob: (re)link
    return received


def _download(
    url: str,
    location: str,
    blob: Path,
    size: int | None,
    etag: str,
    name: str,
    budget: _Budget,
    retries: int,
    cap: int | None = None,
) -> int:
    """GET ``location`` into ``<blob>.incomplete``, resuming what is there with a Range request, then check it
    and move it into place. Returns the bytes received."""
    import httpx2
    from huggingface_hub.utils import build_hf_headers

    part = blob.with_name(blob.name + ".incomplete")
    if part.is_symlink():
        part.unlink()  # appended to, so never followed
    headers = build_hf_headers()
    headers["Accept-Encoding"] = "identity"  # the bytes as stored: sizes and Range offsets must mean the file
    if urlsplit(location).netloc != urlsplit(url).netloc:
        headers.pop("authorization", None)  # a signed CDN address: the token stays with the hub
    have = part.stat().st_size if part.exists() else 0
    if size is not None and have > size:
        part.unlink()
        have = 0
    budget.update(have)
    received, idle = 0, 0
    while size is None or have < size:
        budget.check()
        try:
            received += _get(location, part, have, headers, budget, name, cap)
            have = part.stat().st_size
            if size is None or have >= size:
                break
            raise httpx2.RemoteProtocolError("the server closed the connection early")
        except (httpx2.TransportError, OSError) as e:
            if isinstance(e, OSError) and not isinstance(e, (ConnectionError, TimeoutError)):
                raise  # the disk, not the network
            now = part.stat().st_size if part.exists() else 0
            idle = 0 if now > have else idle + 1
            have = now
            if idle > retries:
                raise DownloadBroke(name, have, size, e) from None
            time.sleep(max(min(0.5 * 2**idle if idle else 0.2, 4.0, budget.left()), 0.0))
    _check(part, etag, size, name)
    os.replace(part, blob)
    return received


def _get(
    location: str, part: Path, have: int, headers: dict, budget: _Budget, name: str = "a file", cap: int | None = None
) -> int:
    from huggingface_hub import constants, hf_raise_for_status

    headers = dict(headers)
    if have:
        headers["Range"] = f"bytes={have}-"
    received = 0
    with _stream(location, name, headers=headers, timeout=budget.timeout(constants.HF_HUB_DOWNLOAD_TIMEOUT)) as r:
        if r.status_code >= 400:
            hf_raise_for_status(_answered(r, _read(r, budget, cap=1 << 16)))
        resume = have > 0 and r.status_code == 206
        if have and not resume:  # the server ignored the Range: start over
            budget.update(-have)
        with open(part, "ab" if resume else "wb") as f:
            for chunk in r.iter_bytes():  # as it arrives: a broken connection loses nothing already received
                f.write(chunk)
                received += len(chunk)
                budget.update(len(chunk), received=True)
                if cap is not None and (have if resume else 0) + received > cap:
                    f.close()
                    part.unlink(missing_ok=True)
                    raise Refused(
                        f"the hub kept sending {name} past the {_human(cap)} its file list declared; the "
                        "download was stopped and what arrived was deleted"
                    )
                budget.check()
    return received


def _problem(path: Path, etag: str, size: int | None) -> str | None:
    """Why the file at ``path`` is not the one the hub announced — its size when known, and always its sha256
    (a 64-digit ETag: LFS files) or git blob id (40 digits: regular files) — or None when it is."""
    actual = path.stat().st_size
    if size is not None and actual != size:
        return f"{actual} bytes instead of {size}"
    digest = hashlib.sha256() if len(etag) == 64 else hashlib.sha1(b"blob %d\0" % actual)
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return None if digest.hexdigest() == etag else "its checksum does not match the hub's"


def _check(part: Path, etag: str, size: int | None, name: str) -> None:
    """The downloaded file is what the hub announced (:func:`_problem`); else it is deleted and this raises."""
    problem = _problem(part, etag, size)
    if problem:
        part.unlink(missing_ok=True)
        raise ChecksumMismatch(f"{name} arrived damaged ({problem}); it was discarded, run this again")


def _link(blob: Path, pointer: Path) -> None:
    """snapshots/<commit>/<name> -> ../../blobs/<etag>, as huggingface_hub lays out its cache (a copy where the
    file system has no symlinks)."""
    pointer.parent.mkdir(parents=True, exist_ok=True)
    tmp = pointer.with_name(f".{pointer.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.symlink(os.path.relpath(blob, pointer.parent), tmp)
    except OSError:
        shutil.copyfile(blob, tmp)
    os.replace(tmp, pointer)


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_symlink() and path.exists() and path.read_text() == text:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    tmp.write_text(text)
    os.replace(tmp, path)


def _cause(e: BaseException) -> str:
    import httpx2

    if isinstance(e, httpx2.TimeoutException):
        return "no data within the timeout"
    if isinstance(e, httpx2.ConnectError):
        return "the connection was refused"
    return "the server closed the connection" if isinstance(e, httpx2.RemoteProtocolError) else type(e).__name__


def _describe(e: Exception, endpoint: str, quote: Callable[[str], str] = str) -> tuple[str, bool]:
    """(one sentence for a person, whether the hub itself is unreachable). Text the hub or the network chose
    (a reason phrase, an error's message) goes through ``quote``."""
    import httpx2
    from huggingface_hub import constants
    from huggingface_hub.errors import (
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if isinstance(e, OfflineModeIsEnabled):
        return "HF_HUB_OFFLINE is set, so nothing may be downloaded (unset it to prefetch)", True
    if isinstance(e, httpx2.TimeoutException):
        return (
            f"the hub at {endpoint} did not answer within {constants.HF_HUB_ETAG_TIMEOUT} s (HF_HUB_ETAG_TIMEOUT)",
            True,
        )
    if isinstance(e, DeadlineExceeded):
        return str(e), True
    if isinstance(e, Cancelled):
        return str(e), False
    if isinstance(e, httpx2.ConnectError):
        return f"the hub at {endpoint} could not be reached ({quote(_first_line(e) or 'connection failed')})", True
    if isinstance(e, httpx2.TransportError):
        return f"the connection to the hub at {endpoint} broke ({_cause(e)})", True
    if isinstance(e, RepositoryNotFoundError):
        return f"the hub at {endpoint} has no repository by that name (404)", False
    if isinstance(e, RevisionNotFoundError):
        return f"the hub has no revision {REVISION!r} of it (404)", False
    if isinstance(e, RemoteEntryNotFoundError):
        return "a file the hub listed is missing on the hub (404)", False
    if isinstance(e, HfHubHTTPError):
        r = e.response
        what = (
            (f"{r.status_code} {quote(r.reason_phrase)}" if r.reason_phrase else str(r.status_code))
            if r is not None
            else "an error"
        )
        hint = " — is HF_ENDPOINT right?" if r is not None and r.status_code == 404 else ""
        return f"the hub at {endpoint} answered {what}{hint}", False
    if isinstance(e, (DownloadBroke, ChecksumMismatch, NoWeights, Refused)):
        return str(e), False
    if isinstance(e, OSError) and e.strerror:
        return f"could not write to the cache ({e.strerror}: {e.filename or ''})", False
    return f"{type(e).__name__}: {quote(_first_line(e))}", False


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0]


def _human(n: int | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
