"""Your own checkpoint (issue 28), the decision: app.models.admission.

Two kinds of evidence, kept apart on purpose:

- **Estimates and fit on the published configs** (tests/data/published_configs_own.json, the hub's own numbers):
  the parameter estimate matches a model built from each on the meta device, and each is admitted for its roles
  and refused for the others by the pure rule function (``decide``, file sizes as large as its parameters).
- **The hub path on the loopback hub** (tests/ownhub.py): the same ids served with their configs *shrunk* and
  tiny random weights, so the network path (file list, config.json read into memory) runs in milliseconds; and
  hostile repositories, each refused with its sentence before any weight is fetched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.models import admission
from app.models.admission import Admitted, Refusal, admit, decide
from tests.hubserver import HubServer
from tests.models.conftest import written_outside
from tests.ownhub import published

OFF = {"BVE_MODEL_LIMIT": "off"}
BIG = dict(memory=64 << 30, disk=1 << 40)

#: published id -> the roles it must be admitted for (every other role refuses it)
FITS = {
    "google-bert/bert-large-uncased": {"masked-lm"},
    "google-bert/bert-base-multilingual-cased": {"masked-lm"},
    "FacebookAI/xlm-roberta-base": {"masked-lm"},
    "microsoft/deberta-v3-base": {"masked-lm"},  # deberta-v2: not the DeBERTa (v1) lesson
    "answerdotai/ModernBERT-large": {"masked-lm", "modernbert"},
    "google/electra-base-generator": {"masked-lm", "electra-generator"},
    "google/electra-base-discriminator": {"electra-discriminator"},
    "albert/albert-large-v2": {"masked-lm"},
    "xlnet/xlnet-large-cased": {"xlnet"},
}
#: the parameters of each, counted by transformers 5.24 on the meta device (tested below too)
PARAMETERS = {
    "google-bert/bert-large-uncased": 335_174_458,
    "answerdotai/ModernBERT-large": 395_831_360,
    "albert/albert-large-v2": 16_802_608,
}


def files_for(config: dict, weights: str = "model.safetensors") -> dict[str, int]:
    """A repository's file list whose weights are as large as the config's parameters in float32."""
    return {
        "config.json": 700,
        "tokenizer.json": 500_000,
        "tokenizer_config.json": 300,
        "README.md": 2_000,
        "tf_model.h5": 10 << 30,
        weights: admission.estimate_parameters(config) * 4,
    }


# -- estimates, on the published configs ----------------------------------------------------------------------------


def all_published() -> dict[str, dict]:
    root = Path(__file__).resolve().parents[1] / "data"
    catalogue = {
        k: dict(v, model_type=v.get("model_type", "bert"))
        for k, v in json.loads((root / "published_configs.json").read_text()).items()
        if not k.startswith("_")
    }
    return {**catalogue, **published()}


def test_the_estimate_is_within_one_percent_of_the_model_built_from_every_published_config():
    import torch
    import transformers

    for hub_id, config in all_published().items():
        arch = (config.get("architectures") or [None])[0]
        with torch.device("meta"):  # without architectures (deberta-base, deberta-v3-base): the masked LM
            built = transformers.AutoConfig.for_model(**config)
            model = getattr(transformers, arch)(built) if arch else transformers.AutoModelForMaskedLM.from_config(built)
        counted = sum(p.numel() for p in model.parameters())
        estimated = admission.estimate_parameters(config)
        assert abs(estimated - counted) <= 0.01 * counted, (hub_id, estimated, counted)
        if hub_id in PARAMETERS:
            assert abs(counted - PARAMETERS[hub_id]) < 0.002 * counted, (hub_id, counted)


@pytest.mark.parametrize("hub_id", list(FITS))
def test_each_published_checkpoint_fits_its_roles_and_no_other(hub_id):
    config = published()[hub_id]
    for role in admission.ROLES:
        got = decide(hub_id, role, config, files_for(config), environ=OFF, **BIG)
        if role in FITS[hub_id]:
            assert isinstance(got, Admitted), got
            assert got.parameters == admission.estimate_parameters(config) and got.model_type == config["model_type"]
            assert [f for f, _ in got.files] == [
                "config.json",
                "tokenizer.json",
                "tokenizer_config.json",
                "model.safetensors",
            ]  # never tf_model.h5, never the README
        else:
            assert isinstance(got, Refusal) and got.rule in ("family", "head"), (role, got)
            assert got.sentence.startswith(f"{hub_id} is refused for ") and got.sentence.endswith("."), got.sentence
            assert "\n" not in got.sentence


def test_refusals_say_what_would_work():
    p = published()
    xlnet = decide(
        "xlnet/xlnet-large-cased",
        "masked-lm",
        p["xlnet/xlnet-large-cased"],
        files_for(p["xlnet/xlnet-large-cased"]),
        environ=OFF,
        **BIG,
    )
    assert (
        "its model_type is \"xlnet\"" in xlnet.sentence and "use it as XLNet's permutation LM instead" in xlnet.sentence
    )
    disc = p["google/electra-base-discriminator"]
    got = decide("google/electra-base-discriminator", "masked-lm", disc, files_for(disc), environ=OFF, **BIG)
    assert got.rule == "head" and "has no masked-LM head" in got.sentence
    assert "use it as ELECTRA's discriminator instead" in got.sentence
    v3 = p["microsoft/deberta-v3-base"]
    got = decide("microsoft/deberta-v3-base", "deberta", v3, files_for(v3), environ=OFF, **BIG)
    assert got.rule == "family" and "deberta-v2" in got.sentence and "masked LM of the masking lab" in got.sentence


@pytest.mark.parametrize(
    "setting, memory, gpu, device, fits, says",
    [
        ("1GB", None, None, "cpu", False, "limit of 953.7 MB (BVE_MODEL_LIMIT=1GB)"),
        ("2GB", None, None, "cpu", True, ""),
        ("off", None, None, "cpu", True, ""),
        ("", 2 << 30, None, "cpu", False, "40% of the 2.0 GB of memory free on this computer"),
        ("", 8 << 30, None, "cpu", True, ""),
        ("", 8 << 30, 2 << 30, "cuda", False, "50% of the 2.0 GB free on the GPU"),
        ("lots", None, None, "cpu", False, "BVE_MODEL_LIMIT is malformed ('lots' is not a size"),
    ],
)
def test_the_size_rule_depends_on_the_host(setting, memory, gpu, device, fits, says):
    config = published()["google-bert/bert-large-uncased"]  # 335 M parameters: 1.34 GB in float32
    got = decide(
        "google-bert/bert-large-uncased",
        "masked-lm",
        config,
        files_for(config),
        device=device,
        environ={"BVE_MODEL_LIMIT": setting},
        memory=memory or (64 << 30),
        gpu=gpu,
        disk=1 << 40,
    )
    assert isinstance(got, Admitted) == fits, got
    if not fits:
        assert got.rule == "size" and says in got.sentence, got.sentence
    if fits and setting not in ("off", ""):
        assert got.limit == admission.parse_size(setting)
    if isinstance(got, Refusal) and setting != "lots":
        # 335 M parameters in float32, and the tokenizer: TOKENIZER_FACTOR x its 500 KB tokenizer.json
        assert (
            "needs about 1.3 GB of memory (335 M parameters in float32, and about 9.5 MB for its tokenizer)"
            in got.sentence
        ), got.sentence


def test_sizes_a_host_writes():
    parse = admission.parse_size
    assert [parse(t) for t in ("2GB", "500 MB", "1.5G", "2GiB", "123", "4kb")] == [
        2_000_000_000,
        500_000_000,
        1_500_000_000,
        2 << 30,
        123,
        4_000,
    ]
    assert parse("off") is None and parse("None") is None and parse("0") is None
    for bad in ("", "-1GB", "two", "1e9", "5 PB"):
        with pytest.raises(ValueError):
            parse(bad)


def test_ten_billion_parameters_are_refused_by_the_size_rule_and_by_the_weights_when_it_is_off():
    huge = dict(
        published()["google-bert/bert-large-uncased"],
        hidden_size=5120,
        num_hidden_layers=32,
        num_attention_heads=40,
        intermediate_size=20480,
    )
    assert 9.5e9 < admission.estimate_parameters(huge) < 10.5e9
    files = dict(files_for(published()["google-bert/bert-large-uncased"]), **{"model.safetensors": 600_000})
    got = decide("evil/ten-billion", "masked-lm", huge, files, environ={}, **BIG)
    assert got.rule == "size" and "10.3 B parameters in float32" in got.sentence, got.sentence
    got = decide("evil/ten-billion", "masked-lm", huge, files, environ=OFF, **BIG)
    assert got.rule == "config" and "its weights are only 585.9 KB: they do not match" in got.sentence, got.sentence


@pytest.mark.parametrize(
    "field, value",
    [
        ("num_hidden_layers", 10**12),
        ("hidden_size", -4),
        ("vocab_size", "many"),
        ("intermediate_size", None),
        ("hidden_size", True),
    ],
)
def test_a_config_that_does_not_add_up_is_refused(field, value):
    config = dict(published()["google-bert/bert-large-uncased"], **{field: value})
    got = decide(
        "evil/odd", "masked-lm", config, files_for(published()["google-bert/bert-large-uncased"]), environ=OFF, **BIG
    )
    assert got.rule == "config" and f"its config.json gives {field}=" in got.sentence, got.sentence


def test_the_allow_list_takes_ids_and_globs():
    env = {"BVE_ALLOW_MODELS": "google-bert/*, answerdotai/ModernBERT-large"}
    assert admission.allowed("google-bert/bert-large-uncased", env)
    assert admission.allowed("answerdotai/modernbert-large", env)  # the hub's ids are case-insensitive
    assert not admission.allowed("answerdotai/ModernBERT-base", env)
    assert admission.allowed("anything/at-all", {}) and admission.allowed("anything/at-all", {"BVE_ALLOW_MODELS": " "})


# -- the hub path, on the loopback hub --------------------------------------------------------------------------------


@pytest.fixture
def repos(own_repos):
    return own_repos


@pytest.fixture
def hub(own_hub):
    return own_hub


def nothing_cached(home: Path) -> bool:
    return not [p for p in (home / "hub").rglob("*") if p.is_file()] if (home / "hub").exists() else True


HEADER_READ = 64 * 1024  # admission reads a safetensors header's tensor names: a few KB by Range, never the weights


def header_read(r) -> bool:
    """One of admission's reads of a safetensors header (its HEAD, or a Range GET of a few KB)."""
    return r.path.endswith(".safetensors") and (r.method == "HEAD" or (r.range is not None and r.sent <= HEADER_READ))


def weights_asked(hub: HubServer) -> list:
    """Requests for anything but config.json and the weights' header (:func:`header_read`)."""
    return [
        r for r in hub.requests if "/resolve/" in r.path and not r.path.endswith("/config.json") and not header_read(r)
    ]


@pytest.mark.parametrize("hub_id", list(FITS))
def test_served_checkpoints_are_admitted_from_their_file_list_and_config_alone(hub_id, hub, repos, tmp_path):
    for role in admission.ROLES:
        got = admit(hub_id, role)
        assert isinstance(got, Admitted) == (role in FITS[hub_id]), (role, got)
    got = admit(hub_id)  # no role: the first it fits
    assert isinstance(got, Admitted) and got.role in FITS[hub_id]
    assert got.commit == repos[hub_id].commit and got.kind == "hub"
    assert {f for f, _ in got.files} == repos[hub_id].wanted
    assert dict(got.files) == {f: repos[hub_id].files[f].size for f in repos[hub_id].wanted}
    assert ("use_safetensors", True) in got.config_overrides
    assert got.model_class == {"xlnet": "XLNetLMHeadModel"}.get(
        got.model_type, "ElectraForPreTraining" if got.role == "electra-discriminator" else "AutoModelForMaskedLM"
    )
    assert weights_asked(hub) == [] and nothing_cached(tmp_path / "hf")  # only the API and config.json, in memory


@pytest.mark.parametrize(
    "hub_id, rule, says",
    [
        ("evil/wrong-type", "family", 'its model_type is "gpt2", and that lesson reads bert, roberta'),
        ("evil/remote-code", "remote-code", "asks for remote code (auto_map), and this app never runs code"),
        ("evil/pickle-only", "safetensors", "ships its weights only as pickle (pytorch_model.bin), which can run code"),
        (
            "evil/ten-billion",
            "size",
            "(10.3 B parameters in float32, and about 2.2 MB for its tokenizer), more than this host's limit of 1.9 GB",
        ),
        ("evil/nowhere", "hub", "has no repository by that name (404)"),
        ("not/a/hub id", "source", "neither a hub id (organisation/name"),
    ],
)
def test_a_hostile_repository_is_refused_with_its_sentence_before_any_weight(hub_id, rule, says, hub, tmp_path):
    got = admit(hub_id, "masked-lm")
    assert isinstance(got, Refusal) and got.rule == rule, got
    assert says in got.sentence and got.sentence.count(".") >= 1 and "\n" not in got.sentence, got.sentence
    assert "Traceback" not in got.sentence
    assert weights_asked(hub) == [] and nothing_cached(tmp_path / "hf")
    assert written_outside(tmp_path, tmp_path / "hf") == []
    assert not Path("/tmp/pwned-by-remote-code").exists()


def test_the_allow_list_is_checked_before_the_hub_is_asked(hub, monkeypatch):
    monkeypatch.setenv("BVE_ALLOW_MODELS", "google-bert/*")
    got = admit("answerdotai/ModernBERT-large", "modernbert")
    assert (
        got.rule == "allow-list"
        and "this host allows only the models in BVE_ALLOW_MODELS (google-bert/*)" in got.sentence
    ), got.sentence
    assert hub.requests == []
    assert isinstance(admit("google-bert/bert-large-uncased", "masked-lm"), Admitted)


def test_a_redirect_of_the_config_to_another_host_is_refused_unread(hub, tmp_path):
    with HubServer({}) as other:
        elsewhere = other.url.replace("127.0.0.1", "localhost")
        hub.redirects = {r"^/evil/redirect/resolve/": elsewhere}
        got = admit("evil/redirect", "masked-lm")
        assert got.rule == "hub" and "sent config.json to another host (localhost)" in got.sentence, got.sentence
        assert other.requests == []
        hub.redirects = {r"^/api/models/evil/redirect/": elsewhere}
        got = admit("evil/redirect", "masked-lm")
        assert got.rule == "hub" and "to another host (localhost)" in got.sentence, got.sentence
        assert other.requests == []
    assert nothing_cached(tmp_path / "hf")


def test_a_hub_that_says_no_sizes_is_refused(hub):
    hub.sizes = False
    got = admit("google-bert/bert-large-uncased", "masked-lm")
    assert got.rule == "size" and "did not say how large its files are" in got.sentence, got.sentence


def test_offline_a_hub_id_is_refused_in_a_sentence_and_a_folder_is_read(hub, repos, use_cache, tmp_path):
    use_cache(tmp_path / "hf")  # HF_HUB_OFFLINE
    got = admit("google-bert/bert-large-uncased", "masked-lm")
    assert got.rule == "hub" and "HF_HUB_OFFLINE is set" in got.sentence
    folder = repos["albert/albert-large-v2"].files["config.json"].disk.parent
    got = admit(str(folder), "masked-lm")  # a visitor may not name the host's folders unless the host says so
    assert isinstance(got, Refusal) and got.rule == "source" and admission.FOLDERS_ENV in got.sentence
    assert "config.json" not in got.sentence  # nor learn from the sentence what is on the host's disk
    os.environ[admission.FOLDERS_ENV] = str(folder.parent.parent)
    try:
        got = admit(str(folder), "masked-lm")
    finally:
        del os.environ[admission.FOLDERS_ENV]
    assert isinstance(got, Admitted) and got.kind == "folder" and got.source == str(folder.resolve())
    assert admission.folder_allowed(str(folder), {admission.ALLOW_ENV: str(folder.resolve())})  # named by the host
    assert not admission.folder_allowed(str(folder), {admission.FOLDERS_ENV: "/nonexistent-root"})
    assert got.variant.bundled_available() is False and got.key.startswith("own:masked-lm:/")


def test_a_checkpoint_whose_weights_lack_the_head_its_config_names_is_refused_from_the_header(hub, repos, tmp_path):
    """DeBERTa v3 is published with a masked-LM config over weights without that head (issue 28): loaded, the head
    would start from random weights and the masking lab would show random guesses as the model's. Admission reads
    the safetensors header (a Range read of a few KB) and refuses it; a checkpoint with its head passes."""
    got = admit("microsoft/deberta-v3-small", "masked-lm")
    assert isinstance(got, Refusal) and got.rule == "head-weights", got
    assert "its weights carry no masked-LM head" in got.sentence and "cls.predictions.*" in got.sentence, got.sentence
    assert "\n" not in got.sentence and "Traceback" not in got.sentence
    reads = [r for r in hub.requests if r.path.endswith("model.safetensors")]
    assert reads and all(header_read(r) for r in reads)  # the header only, never the weights
    assert sum(r.sent for r in reads) < repos["microsoft/deberta-v3-small"].files["model.safetensors"].size / 4
    assert weights_asked(hub) == [] and nothing_cached(tmp_path / "hf")
    with_head = admit("microsoft/deberta-v3-base", "masked-lm")  # the same config with the head in its weights
    assert isinstance(with_head, Admitted), with_head


def test_the_head_check_reads_tensor_names_as_transformers_loads_them(tmp_path):
    from safetensors.torch import save_file
    import torch

    config = {
        "model_type": "bert",
        "vocab_size": 64,
        "hidden_size": 8,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 16,
        "max_position_embeddings": 16,
    }
    head = admission.head_parameters("AutoModelForMaskedLM", config)
    assert "cls.predictions.transform.dense.weight" in head
    assert "cls.predictions.decoder.weight" not in head  # tied to the embeddings: never in a checkpoint on its own
    encoder = {"bert.embeddings.word_embeddings.weight"}
    assert admission.missing_head("AutoModelForMaskedLM", config, encoder) == head
    assert admission.missing_head("AutoModelForMaskedLM", config, encoder | {"cls.predictions.bias"}) == ()
    # old checkpoints name LayerNorm's parameters gamma and beta; transformers renames them on load
    assert (
        admission.missing_head("AutoModelForMaskedLM", config, encoder | {"cls.predictions.transform.LayerNorm.gamma"})
        == ()
    )
    # the header itself: 8 bytes of length, then JSON
    path = tmp_path / "model.safetensors"
    save_file(
        {"bert.pooler.dense.weight": torch.zeros(2, 2), "cls.predictions.bias": torch.zeros(3)},
        path,
        metadata={"format": "pt"},
    )
    data = path.read_bytes()
    names = admission.safetensors_names(lambda start, length: data[start : start + length])
    assert names == {"bert.pooler.dense.weight", "cls.predictions.bias"}
    assert admission.safetensors_names(lambda start, length: b"\xff" * length) is None  # not a header: refuse nothing
    assert admission.safetensors_names(lambda start, length: data[start : start + length][:3]) is None  # cut short


def test_a_local_folder_without_the_head_is_refused_too(repos, monkeypatch):
    folder = repos["microsoft/deberta-v3-small"].files["config.json"].disk.parent
    monkeypatch.setenv(admission.FOLDERS_ENV, str(folder.parent))
    got = admit(str(folder), "masked-lm")
    assert isinstance(got, Refusal) and got.rule == "head-weights", got
    with_head = repos["microsoft/deberta-v3-base"].files["config.json"].disk.parent
    monkeypatch.setenv(admission.FOLDERS_ENV, str(with_head.parent))
    assert isinstance(admit(str(with_head), "masked-lm"), Admitted)


def test_the_sidebar_suggests_a_checkpoint_each_role_admits():
    """The field's help names an example of the right family for its role (a ModernBERT lesson suggesting
    bert-large-uncased would send a student to a refusal)."""
    from app.models import chosen

    assert set(chosen.EXAMPLES) == set(admission.ROLES)
    configs = all_published()
    for role, example in chosen.EXAMPLES.items():
        assert example in configs, example
        got = decide(example, role, configs[example], files_for(configs[example]), environ=OFF, **BIG)
        assert isinstance(got, Admitted), (role, got)
    help_text = chosen.page_role(("modernbert",)).help()
    assert "answerdotai/ModernBERT-large" in help_text and "bert-large-uncased" not in help_text
