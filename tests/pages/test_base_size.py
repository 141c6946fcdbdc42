"""Every page at the real checkpoints' size: each catalogue hub id's published config.json, value for value, with
random weights made here (tests/basesize.py, once per test session) and the family's tokenizer, loaded through
the app's own bundled path (``BVE_BUNDLED_DIR`` pointed at the set). Each page runs through the router under
AppTest with no exception and no error box, on the base-size models; where a page caps tokens or layers for
readability, a longer input gets the note that says so, with the numbers of the cut.

The weights are random, so nothing here asserts what a model predicts. ``-m "not basesize"`` deselects these
tests; ``BVE_BASESIZE_DIR=/some/dir`` keeps the built set between sessions (it is rebuilt only when a published
config, a bundled tokenizer or the builder changes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.lessons import LESSONS
from app.models import catalogue
from tests import basesize
from tests.conftest import ROOT, run_page

pytestmark = [pytest.mark.basesize, pytest.mark.slow]

LONG = " ".join(["The little girl found a red ball in the park and ran home to show her mom."] * 12)  # ~200 tokens


def written(lesson) -> bool:
    """A lesson whose page is there and is not the placeholder shown while it is being written."""
    page = ROOT / lesson.path
    return page.exists() and "Placeholder while the lesson is written" not in page.read_text(encoding="utf-8")


PAGES = [("pages/home.py", "home")] + [(lesson.path, lesson.slug) for lesson in LESSONS if written(lesson)]


@pytest.fixture(scope="session")
def basesize_dir(tmp_path_factory) -> Path:
    """The base-size set, built once per session (or reused from ``BVE_BASESIZE_DIR``)."""
    where = os.environ.get("BVE_BASESIZE_DIR")
    return basesize.build(Path(where) if where else tmp_path_factory.getbasetemp() / "basesize")


@pytest.fixture
def base_size(basesize_dir, monkeypatch):
    """The app reads the base-size set as its bundled checkpoints for this test; returns {key: the Loaded the app
    loaded}. The loaded models are cached by (key, source, device, dtype), not by folder: forget them before (a
    bundled model an earlier test loaded) and after (the next test's, and the memory: ~2.5 GB once the comparison
    page has loaded every variant)."""
    from app.ui import loading as ui_loading
    from app.models import loading

    monkeypatch.setenv("BVE_BUNDLED_DIR", str(basesize_dir))
    seen, load = {}, loading.load

    def recording(key, *args, **kwargs):
        seen[key] = load(key, *args, **kwargs)
        return seen[key]

    monkeypatch.setattr(loading, "load", recording)
    ui_loading._load.clear()
    ui_loading._load_pair.clear()
    yield seen
    ui_loading._load.clear()
    ui_loading._load_pair.clear()
    seen.clear()


def open_at_base_size(page: str, **query):
    """Home, then ``page`` through the router, on the bundled source (the base-size set: a cached real checkpoint
    must not stand in for it), with a timeout for base-size forwards on a busy 2-core machine."""
    return run_page(None if page == "pages/home.py" else page, timeout=600, **{"source": "bundled", **query})


def notes(at) -> list[str]:
    return [str(e.value) for kind in ("info", "warning") for e in getattr(at, kind)]


def ran_cleanly(at) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [str(e.value) for e in at.error]


# ----------------------------------------------------------------------------- the set itself


def test_every_hub_id_has_its_published_config_and_the_set_keeps_it(basesize_dir):
    import json

    published = basesize.published_configs()
    for key, v in catalogue.CATALOGUE.items():
        assert v.hub_id in published, f"{v.hub_id} ({key}) needs its published config in tests/data"
        written_config = json.loads((basesize_dir / v.bundled / "config.json").read_text())
        added = {k: written_config[k] for k in set(written_config) - set(published[v.hub_id])}
        assert {k: written_config[k] for k in published[v.hub_id]} == published[v.hub_id]
        assert added in ({}, {"model_type": v.family}), added  # only what the hub infers from the repo name


SHAPE_KEYS = {
    "vocab_size",
    "hidden_size",
    "dim",
    "d_model",
    "embedding_size",
    "num_hidden_layers",
    "n_layers",
    "n_layer",
    "num_attention_heads",
    "n_heads",
    "n_head",
    "intermediate_size",
    "hidden_dim",
    "d_inner",
    "max_position_embeddings",
    "type_vocab_size",
    "num_hidden_groups",
    "local_attention",
    "global_attn_every_n_layers",
}


def test_the_set_loads_at_the_published_size_with_the_family_conventions(base_size, basesize_dir):
    """Through the app's loader: the published shapes, float32, eval mode; tokenizers with the family's specials
    at ids inside the model's vocabulary, reading the published number of positions; ELECTRA's pair re-tied."""
    from app.models import loading

    for key, v in catalogue.CATALOGUE.items():
        if key.startswith("electra-"):
            continue
        m = loading.load(key, source="bundled")
        config, tok = basesize.local_config(v.hub_id), m.tokenizer
        assert m.location == str(basesize_dir / v.bundled) and not m.model.training
        for name in SHAPE_KEYS & set(config):  # the size the loaded model has is the published one
            assert getattr(m.model.config, name) == config[name], (key, name)
        assert m.model.get_input_embeddings().weight.shape[0] == config["vocab_size"]
        assert str(next(m.model.parameters()).dtype) == "torch.float32"
        assert len(tok) <= config["vocab_size"] and max(tok.all_special_ids) < config["vocab_size"]
        assert tok.model_max_length == basesize.max_positions(config)
        ids = tok("The little girl found a red ball.")["input_ids"]
        if v.family == "xlnet":  # <sep> <cls> at the end, padded on the left
            assert ids[-2:] == [tok.sep_token_id, tok.cls_token_id] and tok.padding_side == "left"
        else:
            assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
        del m
    pair = loading.load_set(("electra-generator", "electra-discriminator"), source="bundled")
    gen, disc = pair["electra-generator"], pair["electra-discriminator"]
    assert gen.model.electra.embeddings is disc.model.electra.embeddings  # tied by load_set


# ----------------------------------------------------------------------------- every page


@pytest.mark.parametrize("page,slug", PAGES, ids=[slug for _, slug in PAGES])
def test_the_page_runs_on_base_size_models(base_size, page, slug):
    at = open_at_base_size(page)
    ran_cleanly(at)
    assert at.title, "the page drew nothing"
    lesson = next((x for x in LESSONS if x.slug == slug), None)
    if lesson is not None:
        import importlib

        needs = set(getattr(importlib.import_module(lesson.library), "MODELS", ()) or ())
        assert needs <= set(base_size), f"{slug} did not load {needs - set(base_size)}"
    for key, m in base_size.items():  # whatever the page loaded came from the base-size set
        assert m.location == str(basesize_dir_of(m)), (key, m.location)


def basesize_dir_of(m) -> Path:
    return Path(os.environ["BVE_BUNDLED_DIR"]) / m.variant.bundled


# ----------------------------------------------------------------------------- caps say so


def _note_with(at, *numbers) -> bool:
    return any(all(str(n) in text for n in numbers) for text in notes(at))


def test_masking_lab_says_it_cut_a_text_past_its_cap(base_size):
    from app.lessons import masking as masking_lab
    from app.core import text

    at = open_at_base_size("pages/masking.py", text=LONG, variant="roberta")
    ran_cleanly(at)
    tk = text.tokenize(base_size["roberta"].tokenizer, LONG, masking_lab.LAB.max_tokens)
    assert tk.truncated and _note_with(at, tk.n_full, len(tk.ids))


def test_attention_says_it_cut_to_the_token_cap_and_sent_bertviz_fewer_layers(base_size):
    """ModernBERT-base: 22 layers × 12 heads; at 128 tokens the model view cannot carry every layer."""
    from app.lessons import attention
    from app.figures import bertviz_offline
    from app.core import text

    at = open_at_base_size("pages/attention.py", text=LONG, variant="modernbert", max_tokens="128", view="model")
    ran_cleanly(at)
    m = base_size["modernbert"]
    tk = text.tokenize(m.tokenizer, LONG, 128)
    assert tk.truncated and _note_with(at, tk.n_full, len(tk.ids))
    config = m.model.config
    layers = bertviz_offline.fit_layers(
        "model", config.num_hidden_layers, config.num_attention_heads, len(tk.ids), False, 1
    )
    assert len(layers) < config.num_hidden_layers
    assert _note_with(at, config.num_hidden_layers, config.num_attention_heads, layers[-1])
    assert attention.DEFAULTS.max_tokens < tk.n_full


def test_electra_says_its_strip_keeps_the_first_48_tokens(base_size):
    from app.lessons import electra

    at = open_at_base_size("pages/electra.py", text=LONG)
    ran_cleanly(at)
    enc = electra.encode(base_size["electra-generator"].tokenizer, LONG)
    assert enc.truncated and electra.DEFAULTS.max_tokens == 48
    assert _note_with(at, enc.n_pieces, enc.n_kept, 48)


def test_deberta_says_it_keeps_40_tokens(base_size):
    from app.lessons import deberta
    from app.core import text

    at = open_at_base_size("pages/deberta.py", text=LONG)
    ran_cleanly(at)
    tokenizers = {base_size[k].variant.label: base_size[k].tokenizer for k in deberta.MODELS}
    fitted, cut = text.fit_text(LONG, tokenizers, deberta.DEFAULTS.max_tokens)
    assert cut and _note_with(
        at, len(text.split_words(fitted)), len(text.split_words(LONG)), deberta.DEFAULTS.max_tokens
    )


def test_xlnet_says_it_keeps_the_first_pieces(base_size):
    from app.lessons import xlnet

    at = open_at_base_size("pages/xlnet.py", text=LONG)
    ran_cleanly(at)
    pieces = xlnet.xlnet_pieces(base_size["xlnet"].tokenizer, LONG)
    assert pieces.capped and _note_with(at, pieces.n_before_cap, pieces.n_content)


def test_nsp_vs_sop_says_base_size_heads_score_fewer_story_pairs(base_size):
    """bert-base's NSP head over all 180 story inputs would keep the page waiting for most of a minute."""
    from app.lessons import sentence_order

    at = open_at_base_size("pages/sentence_order.py")
    ran_cleanly(at)
    d = sentence_order.DEFAULTS
    assert sentence_order.pool_size([base_size["bert-nsp"]]) == d.large_pairs < d.sample_pairs
    assert _note_with(at, f"score {d.large_pairs} of the {d.sample_pairs} story pairs")
