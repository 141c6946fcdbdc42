"""``python -m app.models.prefetch``, and ``app.models.download`` under it (the one downloader, the app's Hub
source's too), against a loopback hub (tests/hubserver.py): only the files the app loads reach the cache, Auto
then uses them with no network, a broken hub is one line per model and exit 1 (never a traceback, never a hang),
a partial download never counts, and an interrupted download resumes.

The CLI runs in a subprocess with a clean environment (HF_HOME in a tmp dir, HF_ENDPOINT at the loopback hub,
no HF_HUB_OFFLINE); in this process ``use_cache`` (tests/models/conftest.py) points huggingface_hub at the
test's cache and hub.

A hostile hub (traversal ETags and commits, ETags that are no checksum, missing sizes, truncated and
trickling bodies, markdown in its reason phrase) writes nothing outside the test's HF_HOME, links nothing
unchecked, and is given up on at the download's deadline.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.models import download, loading, prefetch
from app.models.catalogue import CATALOGUE, get
from tests.hubserver import HubServer, build_catalogue_repos
from tests.models.conftest import written_outside

ROOT = Path(__file__).resolve().parents[2]
TWO = ["bert", "roberta"]  # both have a bundled stand-in to fall back to


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    return build_catalogue_repos(tmp_path_factory.mktemp("hub-repos"))


@pytest.fixture
def hub(repos):
    with HubServer(repos) as server:
        yield server


def run_prefetch(hub: HubServer, home: Path, *args: str, **env: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of the CLI in a clean environment."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "TRANSFORMERS_"))}
    clean.update(HF_HOME=str(home), HF_ENDPOINT=hub.url, BVE_WARM_START="0", TOKENIZERS_PARALLELISM="false", **env)
    out = subprocess.run(
        [sys.executable, "-m", "app.models.prefetch", *args],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.returncode, out.stdout, out.stderr


def snapshot_files(home: Path, hub_id: str) -> set[str]:
    storage = home / "hub" / f"models--{hub_id.replace('/', '--')}"
    ref = (storage / "refs" / "main").read_text()
    snap = storage / "snapshots" / ref
    return {p.relative_to(snap).as_posix() for p in snap.rglob("*") if p.is_file()}


def cached_repos(home: Path) -> set[str]:
    return {p.name for p in (home / "hub").glob("models--*")}


def failed_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("FAILED")]


# -- the pieces -----------------------------------------------------------------------------------------


def test_only_the_files_the_app_loads_are_chosen():
    extras = [
        "tf_model.h5",
        "flax_model.msgpack",
        "rust_model.ot",
        "onnx/model.onnx",
        "README.md",
        ".gitattributes",
        "bpe_encoder.bin",
        "model.fp16.safetensors.bak",
        "dict.txt",
        "coreml/model.mlpackage",
    ]
    tok = ["config.json", "vocab.json", "merges.txt", "tokenizer.json", "spiece.model", "special_tokens_map.json"]
    assert download.files_to_fetch(tok + extras + ["model.safetensors", "pytorch_model.bin"]) == [
        "config.json",
        "tokenizer.json",
        "special_tokens_map.json",
        "vocab.json",
        "merges.txt",
        "spiece.model",
        "model.safetensors",
    ]
    shards = [
        "model.safetensors.index.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "pytorch_model.bin",
        "onnx/model-00001-of-00002.safetensors",
    ]
    assert download.files_to_fetch(["config.json", *shards]) == ["config.json", *shards[:3]]
    # only when there are no safetensors at all
    assert download.files_to_fetch(["config.json", "pytorch_model.bin", *extras]) == [
        "config.json",
        "pytorch_model.bin",
    ]
    assert not download.has_weights(download.files_to_fetch(["config.json", *extras]))


def test_help_says_to_run_it_at_home_before_a_lecture(capsys):
    with pytest.raises(SystemExit) as done:
        prefetch.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0
    assert "Before a lecture without internet, run this at home" in text and "HF_ENDPOINT" in text


def test_timeouts_get_bounded_defaults_but_what_the_user_set_wins():
    env = {"HF_HUB_DOWNLOAD_TIMEOUT": "42"}
    prefetch.bound_timeouts(env)
    assert env == {
        "HF_HUB_ETAG_TIMEOUT": prefetch.DEFAULT_TIMEOUTS["HF_HUB_ETAG_TIMEOUT"],
        "HF_HUB_DOWNLOAD_TIMEOUT": "42",
    }


def test_the_loopback_hub_serves_huggingface_hubs_own_snapshot_download(hub, repos, tmp_path):
    """The server answers huggingface_hub 2.4.0 as the hub does: repo info, tree listing, HEAD and GET."""
    repo = repos["FacebookAI/roberta-base"]
    code = (
        "import sys; from huggingface_hub import snapshot_download; "
        "print(snapshot_download('FacebookAI/roberta-base', allow_patterns=['*.json', '*.txt']))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "HF_HOME": str(tmp_path), "HF_ENDPOINT": hub.url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    got = {
        p.relative_to(Path(out.stdout.strip())).as_posix() for p in Path(out.stdout.strip()).rglob("*") if p.is_file()
    }
    assert got == {f for f in repo.files if f.endswith((".json", ".txt"))}  # onnx/config.json too: it is a pattern
    asked = {(r.method, r.path.split("/resolve/")[0] if "/resolve/" in r.path else r.path) for r in hub.requests}
    assert ("GET", f"/api/models/{repo.repo_id}/revision/main") in asked
    assert ("GET", f"/api/models/{repo.repo_id}/tree/{repo.commit}") in asked
    assert ("GET", f"/{repo.repo_id}") in asked


# -- a good hub ------------------------------------------------------------------------------------------


def test_prefetch_some_then_all_then_auto_uses_the_cache_without_the_network(hub, repos, tmp_path, use_cache):
    home = tmp_path / "hf"
    rc, out, err = run_prefetch(hub, home, *TWO, "--no-check")  # the run for all of them checks loading
    assert rc == 0, out + err
    assert "Traceback" not in out + err
    assert cached_repos(home) == {f"models--{get(k).hub_id.replace('/', '--')}" for k in TWO}
    for key in TWO:
        hub_id = get(key).hub_id
        row = next(line for line in out.splitlines() if f"({hub_id})" in line)
        assert "  -  " in row and str(home / "hub") in row, row
        assert snapshot_files(home, hub_id) == repos[hub_id].wanted

    hub.clear_log()
    rc, out, err = run_prefetch(hub, home)  # all of them; the two already there are not fetched again
    assert rc == 0, out + err
    assert not hub.gets(get("bert").hub_id) and not hub.gets(get("roberta").hub_id)
    for key, variant in CATALOGUE.items():
        row = next(line for line in out.splitlines() if f"({variant.hub_id})" in line)
        assert "  yes  " in row, row
        wanted = repos[variant.hub_id].wanted
        assert snapshot_files(home, variant.hub_id) == wanted
        assert {r.path.rsplit("/", 1)[-1] for r in hub.gets(variant.hub_id)} <= {w.rsplit("/", 1)[-1] for w in wanted}
    assert "pytorch_model.bin" in snapshot_files(home, "microsoft/deberta-base")  # it has no safetensors
    assert not any(
        "pytorch_model.bin" in snapshot_files(home, v.hub_id) for v in CATALOGUE.values() if v.key != "deberta"
    )
    assert not list((home / "hub").rglob("*.incomplete"))

    # Auto, with the network allowed and the hub up: every model from the cache, and not one request
    use_cache(home, hub)
    hub.clear_log()
    for key in CATALOGUE:
        assert loading.load(key, source="auto").source == "hub cache", key
    time.sleep(0.3)  # room for a background thread (transformers' safetensors conversion) to ask
    assert hub.requests == []
    assert not [t for t in threading.enumerate() if "conversion" in t.name]

    # in the lecture hall: offline, no hub at all
    hub.stop()
    use_cache(home)
    for key in CATALOGUE:
        loaded = loading.load(key, source="auto")
        assert loaded.source == "hub cache" and loaded.location == get(key).hub_id, key

    # checking again there: the hub cannot be reached, but what is cached is ready, and the run says so
    rc, out, err = run_prefetch(hub, home, *TWO, "--no-check")
    assert rc == 0 and not failed_lines(out), out + err
    notes = [line for line in out.splitlines() if line.startswith("NOTE")]
    assert len(notes) == 2 and all("could not be reached" in n and "cached earlier is used" in n for n in notes), out


def test_the_hub_source_downloads_what_the_app_loads_then_reads_the_cache(hub, repos, tmp_path, use_cache):
    home = tmp_path / "hf"
    use_cache(home, hub)
    loaded = loading.load("albert", source="hub")
    assert (loaded.source, loaded.location, loaded.notice) == ("hub", "albert/albert-base-v2", None), loaded.notice
    assert snapshot_files(home, "albert/albert-base-v2") == repos["albert/albert-base-v2"].wanted
    hub.clear_log()
    assert loading.load("albert", source="hub").source == "hub cache" and hub.requests == []


# -- a broken hub ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode, says, notice",
    [
        ("500", "answered 500 Internal Server Error", "the hub answered 500"),
        ("404", "answered 404 Not Found", "the hub answered 404"),
        ("hang", "did not answer within 1 s", "the hub could not be reached"),
        ("die", "the connection broke during model.safetensors", "the connection broke during model.safetensors"),
    ],
)
def test_a_broken_hub_is_one_line_per_model_and_the_app_falls_back(
    mode, says, notice, hub, repos, tmp_path, use_cache, monkeypatch
):
    home = tmp_path / "hf"
    hub.mode = mode
    rc, out, err = run_prefetch(hub, home, *TWO, "--retries", "1", HF_HUB_ETAG_TIMEOUT="1", HF_HUB_DOWNLOAD_TIMEOUT="1")
    assert rc == 1, out + err
    assert "Traceback" not in out + err
    lines = failed_lines(out)
    assert len(lines) == 2 and all(f"({get(k).hub_id})" in line for k, line in zip(TWO, lines)), out
    assert says in lines[0], lines[0]
    if mode == "hang":
        assert "not tried" in lines[1]  # an unreachable hub is asked once, not once per model
    if mode == "die":  # the small files arrived, the weights did not: nothing is linked, nothing is referenced
        storage = home / "hub" / "models--google--bert_uncased_L-4_H-256_A-4"
        assert not (storage / "refs" / "main").exists()
        assert not list(storage.glob("snapshots/*/model.safetensors"))
        (part,) = storage.glob("blobs/*.incomplete")
        assert part.stat().st_size == repos[get("bert").hub_id].files["model.safetensors"].size // 2
        assert any(r.range for r in hub.gets(name="model.safetensors"))  # it did try to resume

    use_cache(home, hub)
    assert loading.load("bert", source="auto").source == "bundled"  # a partial download is never used
    probes, fetches = [], []  # the hub source falls back at once: one bounded probe, at most one try, no retry
    probe, fetch = loading.hub_reachable, loading.fetch
    monkeypatch.setattr(loading, "hub_reachable", lambda hub_id: probes.append(hub_id) or probe(hub_id))
    monkeypatch.setattr(loading, "fetch", lambda *a, **k: fetches.append(k["retries"]) or fetch(*a, **k))
    loaded = loading.load("roberta", source="hub")
    assert loaded.source == "bundled" and f"FacebookAI/roberta-base is unavailable: {notice}" in loaded.notice, (
        loaded.notice
    )
    assert probes == ["FacebookAI/roberta-base"]  # with HUB_PROBE_TIMEOUT_S, its bound
    assert fetches == ([0] if mode == "die" else [])  # the probe's answer was enough to give up


def test_an_interrupted_download_resumes_where_it_stopped(hub, repos, tmp_path):
    home = tmp_path / "hf"
    weights = repos[get("bert").hub_id].files["model.safetensors"]
    hub.mode = "die"
    rc, out, err = run_prefetch(hub, home, "bert", "--retries", "0")
    assert rc == 1 and "run this again to resume" in out, out + err

    hub.mode = "ok"
    hub.clear_log()
    rc, out, err = run_prefetch(hub, home, "bert", "--no-check")  # loading is checked in the test above
    assert rc == 0, out + err
    (get_weights,) = hub.gets(name="model.safetensors")
    assert get_weights.range == f"bytes={weights.size // 2}-" and get_weights.status == 206
    assert get_weights.sent == weights.size - weights.size // 2  # the rest, not the whole file again
    assert [r.path.rsplit("/", 1)[-1] for r in hub.gets()] == ["model.safetensors"]  # the small files were kept
    blob = home / "hub" / "models--google--bert_uncased_L-4_H-256_A-4" / "blobs" / weights.sha256
    assert blob.stat().st_size == weights.size
    assert (home / "hub" / "models--google--bert_uncased_L-4_H-256_A-4" / "refs" / "main").read_text() == repos[
        get("bert").hub_id
    ].commit


# -- a hostile hub ---------------------------------------------------------------------------------------

BERT = get("bert").hub_id


def storage_of(home: Path, hub_id: str = BERT) -> Path:
    return home / "hub" / f"models--{hub_id.replace('/', '--')}"


def fetch_bert(**kwargs) -> download.Fetched:
    return download.fetch(get("bert"), retries=0, progress=False, **kwargs)


def nothing_saved(home: Path) -> None:
    storage = storage_of(home)
    assert not (storage / "refs" / "main").exists()
    assert not [p for p in storage.glob("snapshots/**/*") if not p.is_dir()]
    assert loading.cached_snapshot(BERT) is None


@pytest.mark.parametrize(
    "etag",
    [
        '"../../../../outside/etag-pwned"',  # from blobs/ up to tmp_path
        'W/"../../../../outside/etag-pwned"',  # the weak form, which huggingface_hub strips
        '"{tmp}/abs/etag-pwned"',  # an absolute path
        '"not-a-checksum"',  # a checksum the download would skip
        '"' + "a" * 50 + '"',  # hex, but neither a sha1 nor a sha256
        '"' + "A" * 64 + '"',  # upper case: huggingface_hub names blobs in lower case
    ],
)
def test_an_etag_that_is_no_checksum_is_refused_and_nothing_leaves_the_cache(etag, hub, repos, tmp_path, use_cache):
    home = tmp_path / "hf"
    use_cache(home, hub)
    hub.etags = {name: etag.format(tmp=tmp_path) for name in repos[BERT].wanted}
    fetched = fetch_bert()
    assert not fetched.ok and "is not a checksum" in fetched.error and "nothing was saved" in fetched.error, (
        fetched.error
    )
    assert written_outside(tmp_path, home) == []
    nothing_saved(home)
    assert not list(storage_of(home).glob("blobs/*"))  # not even a blob by another name
    assert loading.load("bert", source="auto").source == "bundled"


@pytest.mark.parametrize("commit", ["../../../../outside-snap", "{tmp}/abs-snap", "main", "0" * 39 + "g", ""])
def test_a_commit_that_is_no_commit_id_is_refused_and_nothing_leaves_the_cache(commit, hub, tmp_path, use_cache):
    home = tmp_path / "hf"
    use_cache(home, hub)
    hub.commit = commit.format(tmp=tmp_path)
    fetched = fetch_bert()
    assert not fetched.ok and "not a commit id" in fetched.error, fetched.error
    assert written_outside(tmp_path, home) == []
    nothing_saved(home)
    assert [r for r in hub.requests if "/resolve/" in r.path] == []  # not one file was asked for


def test_the_cli_refuses_a_hostile_hub_in_one_line_and_writes_nothing_outside(hub, repos, tmp_path):
    home = tmp_path / "hf"
    hub.commit = "../../../../outside-snap"
    hub.etags = {name: '"../../../../outside/etag-pwned"' for name in repos[BERT].wanted}
    rc, out, err = run_prefetch(hub, home, "bert", "--no-check")
    assert rc == 1 and "Traceback" not in out + err, out + err
    (line,) = failed_lines(out)
    assert "not a commit id" in line, line
    assert written_outside(tmp_path, home) == []


def test_auto_refuses_a_cache_whose_paths_lead_outside_it(hub, repos, tmp_path, use_cache):
    """A cache written by something else (or by an earlier, trusting version): a ref that is no commit id, or a
    snapshot file that links outside the model's cache folder, is not a complete snapshot."""
    home = tmp_path / "hf"
    use_cache(home, hub)
    assert fetch_bert().ok
    storage = storage_of(home)
    ref = storage / "refs" / "main"
    commit = ref.read_text()
    assert loading.cached_snapshot(BERT) == storage / "snapshots" / commit
    outside = tmp_path / "outside-snap"  # a complete copy, outside the cache
    shutil.copytree(storage / "snapshots" / commit, outside, symlinks=False)

    ref.write_text("../../../../outside-snap")
    assert loading.cached_snapshot(BERT) is None
    use_cache(home)
    assert loading.load("bert", source="auto").source == "bundled"

    ref.write_text(commit)
    weights = storage / "snapshots" / commit / "model.safetensors"
    weights.unlink()
    weights.symlink_to(outside / "model.safetensors")
    assert loading.cached_snapshot(BERT) is None
    assert loading.load("bert", source="auto").source == "bundled"


@pytest.mark.parametrize("etag", ["not-a-checksum", "true"])
def test_no_size_and_a_truncated_body_never_reach_the_cache(etag, hub, repos, tmp_path, use_cache):
    """No size anywhere, the weights cut short: with an ETag that is no checksum the file cannot be checked and
    is refused; with the true one its checksum fails. Either way nothing is linked and refs/main is not written,
    and a run against an honest hub then completes the snapshot."""
    home = tmp_path / "hf"
    use_cache(home, hub)
    weights = repos[BERT].files["model.safetensors"]
    hub.sizes = False
    hub.truncate = {"model.safetensors": weights.size // 2}
    if etag != "true":
        hub.etags = {"model.safetensors": f'"{etag}"'}
    fetched = fetch_bert()
    assert not fetched.ok and ("not a checksum" in fetched.error or "checksum does not match" in fetched.error), (
        fetched.error
    )
    assert written_outside(tmp_path, home) == []
    storage = storage_of(home)  # the small files arrived whole and checked; the weights are nowhere
    assert not (storage / "refs" / "main").exists() and not list(storage.glob("snapshots/*/model.safetensors"))
    blobs = {b.name for b in storage.glob("blobs/*") if not b.name.endswith(".incomplete")}
    assert blobs <= {f.etag for f in repos[BERT].files.values()} and weights.sha256 not in blobs
    assert loading.cached_snapshot(BERT) is None

    hub.sizes, hub.truncate, hub.etags = True, {}, {}
    assert fetch_bert().ok
    blob = (storage_of(home) / "snapshots" / repos[BERT].commit / "model.safetensors").resolve()
    assert blob.name == weights.sha256 and hashlib.sha256(blob.read_bytes()).hexdigest() == weights.sha256
    use_cache(home)
    assert loading.load("bert", source="auto").source == "hub cache"


def test_a_rerun_repairs_a_truncated_file_an_earlier_version_linked(hub, repos, tmp_path, use_cache):
    """The cache an earlier version left after a lying hub (no size, an ETag that is no checksum): the weights
    truncated, linked, and refs/main written. A run against an honest hub checks what is there, not only that a
    link exists, and puts the true file in its place."""
    home = tmp_path / "hf"
    use_cache(home, hub)
    assert fetch_bert().ok
    repo, storage = repos[BERT], storage_of(home)
    weights = repo.files["model.safetensors"]
    bad = storage / "blobs" / "not-a-checksum"
    bad.write_bytes(weights.disk.read_bytes()[: weights.size // 2])
    pointer = storage / "snapshots" / repo.commit / "model.safetensors"
    pointer.unlink()
    pointer.symlink_to(os.path.relpath(bad, pointer.parent))
    (storage / "blobs" / weights.sha256).unlink()

    hub.clear_log()
    fetched = fetch_bert()
    assert fetched.ok, fetched.error
    assert pointer.resolve() == (storage / "blobs" / weights.sha256).resolve()
    assert hashlib.sha256(pointer.read_bytes()).hexdigest() == weights.sha256
    assert [r.path.rsplit("/", 1)[-1] for r in hub.gets()] == ["model.safetensors"]  # only what was broken
    use_cache(home)
    assert loading.load("bert", source="auto").source == "hub cache"


def test_a_damaged_blob_under_its_true_name_is_fetched_again(hub, repos, tmp_path, use_cache):
    home = tmp_path / "hf"
    use_cache(home, hub)
    assert fetch_bert().ok
    weights = repos[BERT].files["model.safetensors"]
    blob = storage_of(home) / "blobs" / weights.sha256
    data = bytearray(blob.read_bytes())
    data[-1] ^= 0xFF  # same size, one byte off
    blob.write_bytes(bytes(data))
    hub.clear_log()
    assert fetch_bert().ok
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == weights.sha256
    assert [r.path.rsplit("/", 1)[-1] for r in hub.gets()] == ["model.safetensors"]


# -- a slow hub --------------------------------------------------------------------------------------------


def fetch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("bve-fetch-")]


@pytest.mark.parametrize("where", ["/api/models/", "/resolve/"])  # the repo info, or the files
def test_a_trickling_hub_is_given_up_on_at_the_deadline_with_progress_reported(
    where, hub, tmp_path, use_cache, monkeypatch
):
    home = tmp_path / "hf"
    use_cache(home, hub)
    hub.trickle, hub.trickle_paths = 0.02, where  # a byte every 20 ms: never silent long enough for a timeout
    monkeypatch.setenv(download.DEADLINE_ENV, "1.5")
    heard: list[tuple[int, int | None]] = []
    fetched = fetch_bert(on_progress=lambda done, total: heard.append((done, total)))
    assert not fetched.ok and "did not finish within 1.5 s" in fetched.error, fetched.error
    assert fetched.hub_unreachable  # the CLI does not try the next model
    assert len(heard) >= 4 and heard == sorted(heard, key=lambda h: h[0])
    if where == "/resolve/":
        assert heard[-1][0] > 0 and heard[-1][1] and heard[-1][1] > heard[-1][0]  # bytes of the total
    nothing_saved(home)
    for thread in fetch_threads():  # the worker stops at its next piece, not when the hub finishes
        thread.join(1.0)
        assert not thread.is_alive()
    assert written_outside(tmp_path, home) == []


def test_the_deadline_comes_from_the_environment(monkeypatch):
    for value, seconds in [
        ("30", 30.0),
        ("0.5", 0.5),
        ("", download.DOWNLOAD_DEADLINE_S),
        ("soon", download.DOWNLOAD_DEADLINE_S),
        ("-1", download.DOWNLOAD_DEADLINE_S),
        ("inf", download.DOWNLOAD_DEADLINE_S),
        ("nan", download.DOWNLOAD_DEADLINE_S),
    ]:
        assert download.download_deadline({download.DEADLINE_ENV: value}) == seconds, value


def test_the_cli_stops_a_trickling_hub_at_the_deadline(hub, tmp_path):
    home = tmp_path / "hf"
    hub.trickle, hub.trickle_paths = 0.02, "/resolve/"
    rc, out, err = run_prefetch(hub, home, *TWO, "--no-check", BVE_DOWNLOAD_DEADLINE="1")
    assert rc == 1 and "Traceback" not in out + err, out + err
    first, second = failed_lines(out)
    assert "did not finish within 1 s" in first and "not tried" in second, out
