"""Your own checkpoint (issue 28), once admitted: app.models.own downloads it as a person expects and loads it as the
catalogue's models load, against the loopback hub (tests/ownhub.py: the published configs shrunk, random tiny
weights; hostile repositories).

- every brought checkpoint: admitted, fetched (exactly the admitted files), then loaded offline from the cache
  with eager attention — attentions and logits of its own shape, XLNet through XLNetLMHeadModel;
- ELECTRA's base pair tied after loading; a pair whose embeddings differ refused in a sentence;
- progress per file with size and speed; cancel (the partial stays and the next try resumes with a Range);
  one download per model: a second request waits for the first, or cancels only its own wait;
- a file list that lies about sizes, a weights redirect to another host and a stalled download are each stopped
  with a sentence, nothing linked, nothing written outside the cache;
- ``python -m app.models.prefetch <hub id> --role ...`` admits, fetches and checks loading; a refused id is one
  line and exit 1.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.models import admission, loading, own
from app.models.admission import Admitted, Refusal
from tests.hubserver import HubServer
from tests.models.conftest import written_outside

ROOT = Path(__file__).resolve().parents[2]
ROLE = {
    "google-bert/bert-large-uncased": "masked-lm",
    "google-bert/bert-base-multilingual-cased": "masked-lm",
    "FacebookAI/xlm-roberta-base": "masked-lm",
    "microsoft/deberta-v3-base": "masked-lm",
    "answerdotai/ModernBERT-large": "modernbert",
    "albert/albert-large-v2": "masked-lm",
    "xlnet/xlnet-large-cased": "xlnet",
    "google/electra-base-generator": "electra-generator",
    "google/electra-base-discriminator": "electra-discriminator",
}


def admitted(hub_id: str, role: str = "masked-lm") -> Admitted:
    spec = admission.admit(hub_id, role)
    assert isinstance(spec, Admitted), spec
    return spec


def storage(home: Path, hub_id: str) -> Path:
    return home / "hub" / f"models--{hub_id.replace('/', '--')}"


def nothing_linked(home: Path, hub_id: str) -> None:
    assert not (storage(home, hub_id) / "refs" / "main").exists()
    assert not list(storage(home, hub_id).glob("snapshots/*/model.safetensors"))


@pytest.mark.parametrize("hub_id", list(ROLE))
def test_a_brought_checkpoint_downloads_then_loads_offline_like_the_catalogues(
    hub_id, own_hub, own_repos, tmp_path, use_cache
):
    import torch

    spec = admitted(hub_id, ROLE[hub_id])
    fetched = own.fetch_admitted(spec)
    assert fetched.ok, fetched.error
    assert set(fetched.files) == own_repos[hub_id].wanted and fetched.commit == own_repos[hub_id].commit
    assert "tf_model.h5" not in {r.path.rsplit("/", 1)[-1] for r in own_hub.gets()}
    own_hub.stop()
    use_cache(tmp_path / "hf")  # offline, as in a lecture hall
    loaded = own.load_admitted(spec)
    assert (loaded.source, loaded.location, loaded.variant.key) == ("hub cache", hub_id, spec.key)
    assert loaded.shown_as == f"{hub_id} (from the local cache)" and loaded.identity[0] == spec.key
    model, tok = loaded.model, loaded.tokenizer
    assert not model.training and model.config._attn_implementation == "eager"
    assert type(model).__name__ == {
        "xlnet/xlnet-large-cased": "XLNetLMHeadModel",
        "google/electra-base-discriminator": "ElectraForPreTraining",
    }.get(hub_id, type(model).__name__)
    assert tok.padding_side == ("left" if spec.family == "xlnet" else tok.padding_side)
    enc = tok("The little girl found a red ball in the park.", return_tensors="pt")
    with torch.inference_mode():
        out = model(**enc, output_attentions=True)
    layers = model.config.num_hidden_layers if hasattr(model.config, "num_hidden_layers") else model.config.n_layer
    assert len(out.attentions) == layers and out.attentions[0].shape[-1] == enc["input_ids"].shape[1]
    assert torch.isfinite(out.logits).all()
    assert written_outside(tmp_path, tmp_path / "hf") == []


def test_electras_base_pair_is_admitted_together_and_tied_after_loading(own_hub, tmp_path, monkeypatch):
    pair = admission.admit_pair("google/electra-base-generator", "google/electra-base-discriminator")
    assert not isinstance(pair, Refusal), pair
    generator, discriminator = pair
    assert generator.embeddings == discriminator.embeddings
    for spec in pair:
        assert own.fetch_admitted(spec).ok
    tied, tie_pairs = [], loading.tie_pairs
    monkeypatch.setattr(loading, "tie_pairs", lambda loaded, among=None: tied.extend(tie_pairs(loaded, among)) or tied)
    models = own.load_set(
        ["electra-generator", "electra-discriminator"],
        own={generator.replaces: generator, discriminator.replaces: discriminator},
    )
    assert tied == [("electra-generator", "electra-discriminator")]  # by the catalogue's own tie (loading.tie_pairs)
    g, d = models["electra-generator"].model, models["electra-discriminator"].model
    assert g.electra.embeddings is d.electra.embeddings
    assert g.generator_lm_head.weight.data_ptr() == d.electra.embeddings.word_embeddings.weight.data_ptr()
    assert models["electra-generator"].variant.role == "generator"


def test_a_pair_whose_embeddings_differ_is_refused_in_a_sentence(own_hub, own_repos, tmp_path, monkeypatch):
    import json
    import shutil

    monkeypatch.setenv(admission.FOLDERS_ENV, str(tmp_path))  # the host lets visitors load folders there

    folder = tmp_path / "my-discriminator"  # a local folder: the discriminator with narrower embeddings
    shutil.copytree(own_repos["google/electra-base-discriminator"].files["config.json"].disk.parent, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(dict(config, embedding_size=16)))
    got = admission.admit_pair("google/electra-base-generator", str(folder))
    assert isinstance(got, Refusal) and got.rule == "pair", got
    assert "cannot be tied" in got.sentence and "embeddings are 4096 x 32 and 4096 x 16" in got.sentence, got.sentence


def test_a_local_folder_loads_from_where_it_is(own_hub, own_repos, monkeypatch):
    folder = own_repos["albert/albert-large-v2"].files["config.json"].disk.parent
    monkeypatch.setenv(admission.FOLDERS_ENV, str(folder.parent))  # the host lets visitors load folders there
    spec = admitted(str(folder))
    assert own.fetch_admitted(spec).ok and own_hub.requests == []
    models = own.load_set(["bert", "albert"], own={"albert": spec})
    assert models["albert"].source == "folder" and models["albert"].shown_as == f"{folder} (a local folder)"
    assert models["bert"].source == "bundled" and list(models) == ["bert", "albert"]


def test_not_downloaded_yet_is_a_sentence_not_a_half_loaded_model(own_hub):
    spec = admitted("google-bert/bert-large-uncased")
    with pytest.raises(loading.ModelUnavailable, match="is not downloaded yet"):
        own.load_admitted(spec)


# -- as a person expects: progress, cancel, resume, one download per model ----------------------------------------


def test_progress_per_file_then_cancel_keeps_the_partial_and_the_next_try_resumes(own_hub, own_repos, tmp_path):
    hub_id = "evil/stall"
    spec = admitted(hub_id)
    weights = own_repos[hub_id].files["model.safetensors"]
    own_hub.trickle, own_hub.trickle_paths = 0.002, f"/{hub_id}/resolve/{spec.commit}/model.safetensors"
    heard, waited = [], []
    cancel, stop_waiting = threading.Event(), threading.Event()
    results = {}
    first = threading.Thread(
        target=lambda: results.setdefault("first", own.fetch_admitted(spec, on_file=heard.append, cancel=cancel))
    )
    first.start()
    deadline = time.monotonic() + 60  # a bound for a stuck download, not a timing: generous under load
    while not (heard and heard[-1].file == "model.safetensors" and heard[-1].file_done > 0):
        assert time.monotonic() < deadline, heard[-1:]
        time.sleep(0.05)
    assert [h for h, _ in own.in_progress()] == [hub_id]
    second = threading.Thread(
        target=lambda: results.setdefault(
            "second", own.fetch_admitted(spec, on_file=waited.append, cancel=stop_waiting)
        )
    )
    second.start()
    time.sleep(0.4)
    stop_waiting.set()  # the second visitor gives up waiting: the download goes on
    second.join(2)
    assert "you stopped waiting" in results["second"].error and first.is_alive()
    assert waited and waited[-1].file == "model.safetensors"  # it heard the first download's progress
    cancel.set()
    first.join(3)
    assert not first.is_alive() and results["first"].error.startswith("the download was cancelled"), results["first"]
    p = heard[-1]
    assert (p.file_size, p.files) == (weights.size, len(spec.files)) and p.bytes_per_s > 0
    assert p.files_done == len(spec.files) - 1  # the small files are complete
    assert [x.done for x in heard] == sorted(x.done for x in heard)
    home = tmp_path / "hf"
    nothing_linked(home, hub_id)
    parts = list(storage(home, hub_id).glob("blobs/*.incomplete"))
    assert len(parts) == 1, [(p.name, p.stat().st_size) for p in storage(home, hub_id).rglob("*") if p.is_file()]
    (part,) = parts
    kept = part.stat().st_size
    assert kept > 0

    own_hub.trickle = None
    own_hub.clear_log()
    fetched = own.fetch_admitted(spec)
    assert fetched.ok, fetched.error
    (resumed,) = [r for r in own_hub.gets(name="model.safetensors") if r.range]  # (the cancelled GET may log late)
    assert resumed.range == f"bytes={kept}-" and resumed.sent == weights.size - kept
    assert own.in_progress() == []


def test_a_second_request_for_the_same_model_waits_for_the_first_download(own_hub, own_repos):
    hub_id = "google-bert/bert-base-multilingual-cased"
    spec = admitted(hub_id)
    own_hub.trickle, own_hub.trickle_paths = (
        0.002,
        f"/{hub_id}/resolve/{spec.commit}/config.json",
    )  # ~1 s for the config
    own_hub.clear_log()  # admission read config.json once
    results = []
    threads = [threading.Thread(target=lambda: results.append(own.fetch_admitted(spec))) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.2)
    for t in threads:
        t.join(20)
    assert len(results) == 2 and all(r.ok for r in results)
    assert len(own_hub.gets(name="model.safetensors")) == 1 and len(own_hub.gets(name="config.json")) == 1


def test_another_model_waits_in_line_for_the_running_download_and_may_leave_it(own_hub, own_repos):
    """One download per server at a time: a request for another model hears what runs and its place in line,
    leaving the line downloads nothing, and a request that stays starts when the running download ends."""
    slow, other, third = "evil/stall", "google-bert/bert-base-multilingual-cased", "google-bert/bert-large-uncased"
    specs = {h: admitted(h) for h in (slow, other, third)}
    own_hub.trickle, own_hub.trickle_paths = 0.002, f"/{slow}/resolve/{specs[slow].commit}/model.safetensors"
    heard, lines, lines3 = [], [], []
    stop_slow, leave = threading.Event(), threading.Event()
    results = {}
    run = lambda name, **kw: threading.Thread(  # noqa: E731
        target=lambda: results.setdefault(name, own.fetch_admitted(specs[name], **kw))
    )
    first = run(slow, on_file=heard.append, cancel=stop_slow)
    first.start()
    deadline = time.monotonic() + 60  # a bound for a stuck download, not a timing: generous under load
    while not (heard and heard[-1].file == "model.safetensors" and heard[-1].file_done > 0):
        assert time.monotonic() < deadline, heard[-1:]
        time.sleep(0.05)
    own_hub.clear_log()
    second, third_t = run(other, on_wait=lines.append), run(third, on_wait=lines3.append, cancel=leave)
    second.start()
    time.sleep(0.3)
    third_t.start()
    time.sleep(0.6)
    assert own.waiting() == [other, third] and {h for h, _ in own.in_progress()} == {slow, other, third}
    assert lines and lines[-1].running == slow and lines[-1].place == 1 and lines[-1].progress.file_done > 0
    assert lines3 and lines3[-1].place == 2
    leave.set()  # the third visitor leaves the line: nothing of theirs is downloaded
    third_t.join(2)
    assert not third_t.is_alive() and "you left the line" in results[third].error
    assert own.waiting() == [other] and not own_hub.gets(name="config.json")  # the second still waits: no request
    stop_slow.set()  # the running download ends (cancelled): the second begins
    first.join(3)
    second.join(20)
    assert results[other].ok, results[other].error
    assert own_hub.gets(name="model.safetensors") and own.waiting() == [] and own.in_progress() == []


# -- a hostile own_hub, after admission ------------------------------------------------------------------------------


@pytest.mark.parametrize("in_head", [True, False])
def test_a_file_list_that_lies_about_sizes_is_stopped_by_the_download(in_head, own_hub, own_repos, tmp_path):
    hub_id = "evil/lies-about-size"
    weights = own_repos[hub_id].files["model.safetensors"]
    own_hub.lies, own_hub.lie_in_head = {"model.safetensors": 100_000}, in_head  # it sends ~620 KB
    spec = admitted(hub_id)
    header = sum(r.sent for r in own_hub.gets(name="model.safetensors"))  # admission read the header's tensor names
    assert header < 16 * 1024
    assert dict(spec.files)["model.safetensors"] == 100_000
    fetched = own.fetch_admitted(spec, retries=0)
    says = (
        "kept sending model.safetensors past the 97.7 KB its file list declared"
        if in_head
        else "model.safetensors is 620.1 KB on the hub, more than the 97.7 KB its file list declared"
    )
    assert not fetched.ok and says in fetched.error, fetched.error
    home = tmp_path / "hf"
    nothing_linked(home, hub_id)
    assert not list(storage(home, hub_id).glob("blobs/*.incomplete"))  # what arrived was deleted
    for _ in range(100):  # the hub logs a download when its handler ends, which may be just after the client hung up
        sent = sum(r.sent for r in own_hub.gets(name="model.safetensors")) - header
        if sent > 100_000:
            break
        time.sleep(0.05)
    assert sent <= weights.size and (not in_head or sent > 100_000)
    assert written_outside(tmp_path, home) == []


def test_a_weights_redirect_to_another_host_is_refused_before_a_byte(own_hub, tmp_path):
    spec = admitted("evil/redirect")
    with HubServer({}) as other:
        own_hub.redirects = {
            r"^/evil/redirect/resolve/.*/model\.safetensors$": other.url.replace("127.0.0.1", "localhost")
        }
        fetched = own.fetch_admitted(spec, retries=0)
        assert not fetched.ok and "the hub sent model.safetensors to another host (localhost)" in fetched.error, (
            fetched.error
        )
        assert other.requests == []
    nothing_linked(tmp_path / "hf", "evil/redirect")
    assert written_outside(tmp_path, tmp_path / "hf") == []


def test_a_stalled_download_is_stopped_with_a_sentence(own_hub, tmp_path, monkeypatch):
    from huggingface_hub import constants

    spec = admitted("evil/stall")
    monkeypatch.setattr(constants, "HF_HUB_DOWNLOAD_TIMEOUT", 1)
    own_hub.trickle, own_hub.trickle_paths = 30.0, "/evil/stall/resolve/"  # headers, then silence
    fetched = own.fetch_admitted(spec, retries=0)  # stopped by the 1 s read timeout, as the sentence says
    assert (
        not fetched.ok
        and "the connection broke during config.json" in fetched.error
        and "no data within the timeout" in fetched.error
    ), fetched.error
    nothing_linked(tmp_path / "hf", "evil/stall")
    own_hub.trickle = 0.02  # a trickle that is never silent long enough: the deadline stops it
    fetched = own.fetch_admitted(spec, retries=0, deadline=1.0)
    assert not fetched.ok and "did not finish within 1 s" in fetched.error, fetched.error
    assert written_outside(tmp_path, tmp_path / "hf") == []


# -- the command line --------------------------------------------------------------------------------------------------


def test_prefetch_admits_fetches_and_checks_a_hub_id_and_refuses_another_in_one_line(own_hub, tmp_path):
    home = tmp_path / "cli"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "TRANSFORMERS_"))}
    clean.update(
        HF_HOME=str(home),
        HF_ENDPOINT=own_hub.url,
        BVE_WARM_START="0",
        TOKENIZERS_PARALLELISM="false",
        BVE_MODEL_LIMIT="2GB",
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.models.prefetch",
            "google-bert/bert-large-uncased",
            "evil/remote-code",
            "--role",
            "masked-lm",
        ],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1 and "Traceback" not in out.stdout + out.stderr, out.stdout + out.stderr
    row = next(line for line in out.stdout.splitlines() if "(google-bert/bert-large-uncased)" in line)
    assert "  yes  " in row, out.stdout
    (refused,) = [line for line in out.stdout.splitlines() if line.startswith("REFUSED")]
    assert "evil/remote-code is refused: its config.json asks for remote code (auto_map)" in refused
    assert "Admitted for the masked LM of the masking lab" in out.stderr
