"""A brought model costs only what the host allowed (issue 47): each finding of an attack on a public deployment,
replayed against crafted repositories on the loopback hub (tests/hubserver.py) or folders, with
``BVE_MODEL_LIMIT=500MB`` as in the report.

- config fields the estimate ignores (DeBERTa v2's ``conv_kernel_size``, ``attention_head_size``,
  ``max_relative_positions`` with ``position_buckets`` 0, DeBERTa v1's ``max_relative_positions``): the model is
  built on the meta device in the box and its exact count refuses it;
- a tokenizer of 252 MB: refused from the file list before a byte of it is downloaded;
- values that raised from admission (Infinity, lists, numbers where names go): a Refusal;
- a tokenizers panic: one sentence, not a page that never ends;
- a hub-id glob never opens a folder; an ELECTRA pair is checked together wherever its answers came from;
- a hub that trickles its headers: admission stops at its own deadline and says which step;
- refusals name what was typed, never a resolved path; hub ids are ASCII; a deep config is refused before
  anything else is read; admission answers are evicted; one memory budget for every brought model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.models import admission, box, own
from app.models.admission import Admitted, Refusal
from tests.hubserver import HubServer
from tests.ownhub import ASSETS, BRINGS, _repo, _save, _tokenizer, published, shrink

LIMIT = {"BVE_MODEL_LIMIT": "500MB"}


# -- crafted repositories ------------------------------------------------------------------------------------------


def _hostile(folder: Path, **fields) -> Path:
    """A saved tiny model's folder whose config.json then gets ``fields`` (its weights stay tiny)."""
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **fields}))
    return folder


def _tiny(hub_id: str, dest: Path) -> Path:
    bundled, cls_name = BRINGS[hub_id]
    return _save(shrink(published()[hub_id], _tokenizer(ASSETS / bundled)), cls_name, ASSETS / bundled, dest)


def _deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"x": value}
    return value


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    root = tmp_path_factory.mktemp("crafted")
    made = root / "_made"
    repos = {
        "evil/deberta-conv": _repo(
            "evil/deberta-conv",
            _hostile(_tiny("microsoft/deberta-v3-base", made / "conv"), conv_kernel_size=400001),
            root,
        ),
        "evil/deep-config": _repo(
            "evil/deep-config",
            _hostile(_tiny("google-bert/bert-large-uncased", made / "deep"), task_specific_params=_deep(900)),
            root,
        ),
        "evil/big-tokenizer": _repo(
            "evil/big-tokenizer", _tiny("google-bert/bert-large-uncased", made / "bigtok"), root
        ),
        "evil/slow-headers": _repo("evil/slow-headers", _tiny("google-bert/bert-large-uncased", made / "slow"), root),
    }
    panic = _tiny("google-bert/bert-large-uncased", made / "panic")
    tokenizer = json.loads((panic / "tokenizer.json").read_text())
    tokenizer["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": "AAAA"}
    (panic / "tokenizer.json").write_text(json.dumps(tokenizer))
    repos["evil/panic-tokenizer"] = _repo("evil/panic-tokenizer", panic, root)
    return repos


@pytest.fixture
def hub(crafted, tmp_path, use_cache, monkeypatch):
    with HubServer(crafted) as server:
        use_cache(tmp_path / "hf", server)
        monkeypatch.setenv("BVE_MODEL_LIMIT", "500MB")
        yield server


def _weights_asked(server: HubServer) -> list:
    return [
        r
        for r in server.requests
        if r.method == "GET" and r.path.endswith(("model.safetensors", "tokenizer.json", "vocab.txt"))
    ]


# -- 1. config fields the estimate ignores -------------------------------------------------------------------------


def test_a_config_field_the_estimate_ignores_is_counted_on_the_meta_device_and_refused(hub):
    got = admission.admit("evil/deberta-conv", "masked-lm")
    assert isinstance(got, Refusal) and got.rule == "size", got
    assert (
        "built from its config.json it has" in got.sentence
        and "more than this host's limit of 476.8 MB" in got.sentence
    ), got.sentence
    assert not _weights_asked(hub)


@pytest.mark.parametrize(
    "hub_id, role, fields",
    [
        ("microsoft/deberta-v3-base", "masked-lm", {"attention_head_size": 1_000_000}),
        ("microsoft/deberta-v3-base", "masked-lm", {"max_relative_positions": 10_000_000, "position_buckets": 0}),
        ("microsoft/deberta-v3-base", "masked-lm", {"conv_kernel_size": 400_001}),
    ],
)
def test_every_hostile_size_field_is_refused_by_the_exact_count(hub_id, role, fields):
    config = {**shrink(published()[hub_id], _tokenizer(ASSETS / BRINGS[hub_id][0])), **fields}
    files = {"config.json": 900, "tokenizer.json": 200_000, "model.safetensors": 1_290_000}
    estimated = admission.decide(hub_id, role, config, files, environ=LIMIT, disk=1 << 40)
    assert isinstance(estimated, Admitted), estimated  # the estimate alone lets it in: ~1 MB in memory
    got = admission.measure(estimated, config)
    assert isinstance(got, Refusal) and got.rule == "size", got
    assert got.sentence.count("parameters") == 1 and "more than this host's limit" in got.sentence


def test_deberta_v1s_relative_positions_are_counted_for_the_deberta_lesson():
    config = {
        "model_type": "deberta",
        "architectures": ["DebertaForMaskedLM"],
        "vocab_size": 128,
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_position_embeddings": 128,
        "relative_attention": True,
        "pos_att_type": ["c2p", "p2c"],
        "max_relative_positions": 10_000_000,
        "type_vocab_size": 0,
    }
    files = {"config.json": 900, "vocab.json": 2_000, "merges.txt": 1_000, "model.safetensors": 400_000}
    estimated = admission.decide("evil/deberta-v1", "deberta", config, files, environ=LIMIT, disk=1 << 40)
    assert isinstance(estimated, Admitted), estimated
    got = admission.measure(estimated, config)
    assert isinstance(got, Refusal) and got.rule == "size" and "640 M parameters" in got.sentence, got


def test_an_admitted_model_carries_its_exact_count(hub, tmp_path, monkeypatch):
    monkeypatch.setenv("BVE_MODEL_LIMIT", "2GB")
    got = admission.admit("evil/slow-headers", "masked-lm")  # a plain tiny BERT (served without trickling)
    assert isinstance(got, Admitted) and got.measured, got
    config = json.loads(hub.repos["evil/slow-headers"].files["config.json"].disk.read_text())
    built = box.measure_config("BertForMaskedLM", config, 1 << 30)
    assert got.parameters == built.value["parameters"]


# -- 2. a tokenizer that would freeze the server ---------------------------------------------------------------------


def test_a_252_mb_tokenizer_is_refused_from_the_file_list_before_a_byte_of_it(hub):
    hub.lies = {"tokenizer.json": 251_900_000}
    got = admission.admit("evil/big-tokenizer", "masked-lm")
    assert isinstance(got, Refusal) and got.rule == "tokenizer", got
    assert "its tokenizer.json is 240.2 MB, more than the 32.0 MB this app reads" in got.sentence, got.sentence
    assert not _weights_asked(hub)


def test_a_tokenizer_is_counted_against_the_limit():
    config = shrink(published()["google-bert/bert-large-uncased"], _tokenizer(ASSETS / "bert"))
    files = {"config.json": 900, "tokenizer.json": 30_000_000, "model.safetensors": 400_000}
    got = admission.decide("some/model", "masked-lm", config, files, environ=LIMIT, disk=1 << 40)
    assert isinstance(got, Refusal) and got.rule == "size", got  # 20 x 30 MB: 572 MB for the tokenizer
    assert "and about 572.2 MB for its tokenizer" in got.sentence, got.sentence


def test_loading_in_the_box_leaves_the_servers_memory_where_it_was(tmp_path):
    """A tokenizer of 400,000 pieces (13 MB of tokenizer.json) is loaded in the box: the child holds it, the server's
    resident memory does not grow by it."""
    folder = tmp_path / "wide"
    folder.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer_config.json"):
        (folder / name).write_bytes((ASSETS / "bert" / name).read_bytes())
    tokenizer = json.loads((ASSETS / "bert" / "tokenizer.json").read_text())
    vocab = tokenizer["model"]["vocab"]
    vocab.update({f"piece{i:06d}": len(vocab) + i for i in range(400_000)})
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    before = box._status("VmRSS")
    got = box.measure_load(folder, "AutoModelForMaskedLM", {}, memory=2 << 30)
    after = box._status("VmRSS")
    assert got.ok, got.error
    assert got.value["vocabulary"] >= 400_000
    assert got.peak > 50 << 20, got.peak  # the child held the tokenizer
    assert after - before < 20 << 20, (before, after)  # the server did not


def test_a_load_past_its_memory_allowance_ends_in_the_box_with_a_sentence(tmp_path):
    got = box.measure_load(ASSETS / "bert", "AutoModelForMaskedLM", {}, memory=1 << 20)
    assert not got.ok and ("memory" in got.error or "died" in got.error), got


# -- 3. admission never raises ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        {
            "model_type": "albert",
            "vocab_size": 100,
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "intermediate_size": 64,
            "inner_group_num": float("inf"),
        },
        {
            "model_type": "albert",
            "vocab_size": 100,
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "intermediate_size": 64,
            "inner_group_num": [1],
        },
        {
            "model_type": "bert",
            "architectures": 5,
            "vocab_size": 100,
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "intermediate_size": 64,
        },
        [1],
        {"model_type": ["bert"]},
        {
            "model_type": "bert",
            "vocab_size": float("nan"),
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "intermediate_size": 64,
        },
    ],
)
def test_values_that_raised_from_admission_are_refused_in_a_sentence(config):
    files = {"config.json": 900, "tokenizer.json": 2_000, "model.safetensors": 40_000}
    got = admission.decide("evil/values", "masked-lm", config, files, environ=LIMIT, disk=1 << 40)
    assert isinstance(got, Refusal) and got.sentence.startswith("evil/values is refused"), got


# -- 4. a panic in native code ---------------------------------------------------------------------------------------


def test_a_tokenizers_panic_is_one_sentence_and_the_server_never_reads_it(hub, monkeypatch):
    monkeypatch.setenv("BVE_MODEL_LIMIT", "2GB")
    spec = admission.admit("evil/panic-tokenizer", "masked-lm")
    assert isinstance(spec, Admitted), spec
    assert own.fetch_admitted(spec).ok
    read = []
    monkeypatch.setattr(own.loading, "_from_pretrained", lambda *a, **k: read.append(a))
    with pytest.raises(own.loading.ModelUnavailable, match="failed in a separate process .*PanicException"):
        own.load_admitted(spec)
    assert not read  # the server never parsed it


def test_a_panic_raised_in_the_server_becomes_the_sentence_too(monkeypatch):
    class PanicException(BaseException):  # pyo3_runtime's, as the tokenizers library raises it
        pass

    assert own.native(PanicException("boom")) and own.native(ValueError())
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException

    assert not own.native(StopException()) and not own.native(RerunException(None))
    assert not own.native(KeyboardInterrupt()) and not own.native(SystemExit())


# -- 5. folders and hub ids keep their own rules ---------------------------------------------------------------------


def test_a_hub_id_glob_never_opens_a_folder(tmp_path):
    folder = tmp_path / "x" / "secretbert"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    environ = {"BVE_ALLOW_MODELS": "google-bert/*,*bert*"}
    got = admission.admit(str(folder), "masked-lm", environ=environ)
    assert isinstance(got, Refusal) and got.rule == "source", got
    assert admission.allowed("google-bert/bert-base-uncased", environ)
    assert admission.folder_allowed(str(folder), {"BVE_ALLOW_MODELS": f"{tmp_path}/x/*"})
    assert not admission.allowed(str(folder), {"BVE_ALLOW_MODELS": f"{tmp_path}/x/*"})


# -- 6. an ELECTRA pair is checked together wherever its answers came from -----------------------------------------


def _spec(source: str, role: str, memory: int, embeddings=(128, 32), limit=11_000_000) -> Admitted:
    return Admitted(
        source,
        "hub",
        "main",
        "0" * 40,
        role,
        "electra",
        "electra",
        "ElectraForPreTraining" if role == "electra-discriminator" else "AutoModelForMaskedLM",
        (("config.json", 900),),
        memory // 4,
        memory,
        memory,
        limit,
        embeddings,
    )


def test_a_pair_from_the_cache_is_checked_together_as_admit_pair_checks_it(monkeypatch):
    from app.models import chosen
    from app.ui import own as ui_own

    g = _spec("a/gen", "electra-generator", 8_000_000)
    d = _spec("a/disc", "electra-discriminator", 12_100_000 - 8_000_000)
    monkeypatch.setattr(ui_own, "_admit_one", lambda name, role, device, network: {"a/gen": g, "a/disc": d}[name])
    got = ui_own._decide(
        ("a/gen", "a/disc"), chosen.page_role(("electra-generator", "electra-discriminator")), "cpu", False
    )
    assert isinstance(got, Refusal) and got.rule == "size" and "refused together" in got.sentence, got
    assert admission.pair(g, d) == got


# -- 7. one deadline over admission's reads, headers included --------------------------------------------------------


def test_a_hub_that_trickles_its_headers_is_stopped_at_admissions_deadline(hub, monkeypatch):
    monkeypatch.setattr(admission, "ADMIT_DEADLINE_S", 1.5)
    hub.trickle_headers, hub.trickle_paths = 0.3, "evil/slow-headers"
    got = admission.admit("evil/slow-headers", "masked-lm")
    assert isinstance(got, Refusal) and got.rule == "hub", got
    assert "did not finish sending the file list of evil/slow-headers within 2 s" in got.sentence, got.sentence
    assert "nothing was downloaded or kept" in got.sentence and "BVE_DOWNLOAD_DEADLINE" not in got.sentence


# -- low: names, ids, depth, eviction, one budget --------------------------------------------------------------------


@pytest.mark.parametrize("typed", ["/proc/self/exe", "/proc/self/cwd", "~root"])
def test_a_refusal_names_what_was_typed_never_the_path_it_resolves_to(typed):
    got = admission.admit(typed, "masked-lm", environ={})
    assert isinstance(got, Refusal), got
    resolved = str(Path(os.path.expanduser(typed)).resolve())
    assert got.sentence.startswith(typed + " is refused") and resolved not in got.sentence, got.sentence


def test_a_look_alike_id_in_cyrillic_letters_never_reaches_the_hub(hub):
    got = admission.admit("google-bert/bеrt-base-uncased", "masked-lm")  # a Cyrillic "е"
    assert isinstance(got, Refusal) and got.rule == "source", got
    assert not hub.requests
    for bad in ("a/-b", "a/b.", "a--b/c", "a/b.git", "a/b/c"):
        assert admission._source_kind(bad) is None, bad


def test_a_deep_config_is_refused_before_anything_else_is_read(hub):
    got = admission.admit("evil/deep-config", "masked-lm")
    assert isinstance(got, Refusal) and "nests objects more than 12 deep" in got.sentence, got
    assert not _weights_asked(hub)
    assert not [r for r in hub.requests if "model.safetensors" in r.path]  # not even its header


def test_admission_answers_are_evicted(monkeypatch):
    from app.models import chosen
    from app.ui import own as ui_own

    ui_own.forget()
    monkeypatch.setattr(ui_own, "MAX_ANSWERS", 5)
    role = chosen.page_role(("bert",))
    for i in range(20):
        ui_own.admitted((f"nobody/refused-{i}",), role, "cpu", False)
    assert len(ui_own._ANSWERS) == 5
    assert ("nobody/refused-19",) in {k[0] for k in ui_own._ANSWERS}
    ui_own.forget()


def test_brought_models_share_one_memory_budget_least_recently_used_first(monkeypatch):
    own.forget_resident()
    environ = {"BVE_MODEL_FOLDERS": str(ASSETS), "BVE_MODEL_LIMIT": "off"}
    a = admission.admit(str(ASSETS / "bert"), "masked-lm", environ=environ)
    b = admission.admit(str(ASSETS / "roberta"), "masked-lm", environ=environ)
    assert isinstance(a, Admitted) and isinstance(b, Admitted), (a, b)
    for spec in (a, b):  # each loaded once in the box: its cost is what it took there
        own.check_load(spec, own.location(spec))
    limit = max(own.cost(a), own.cost(b)) * 3 // 2  # room for either, not both
    monkeypatch.setattr(own, "budget", lambda device="cpu": limit)
    own.resident({"bert": a})
    own.resident({"bert": b})
    kept = [key for key in own._RESIDENT]
    assert len(kept) == 1 and kept[0][0] == (("bert", b.key),), kept
    assert own.held() <= limit
    monkeypatch.setattr(own, "budget", lambda device="cpu": own.cost(a) // 2)
    with pytest.raises(own.loading.ModelUnavailable, match="more than this server's budget for brought models"):
        own.resident({"bert": a})
    own.forget_resident()
