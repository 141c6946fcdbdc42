"""app/lessons/albert_params.py: closed-form counts against real transformers modules on the meta device, the presets
against their published sizes, FLOPs against torch's FlopCounterMode, and the parameter figures."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from app.lessons import albert_params as P
from app.figures import albert_params as figs
from tests.conftest import CountingCache

FAST = settings(max_examples=25, deadline=None)


@st.composite
def small_archs(draw, sharing=st.sampled_from(P.SHARING_MODES), min_types=0):
    heads = draw(st.integers(1, 4))
    hidden = heads * draw(st.integers(1, 8))
    return P.Arch(
        vocab_size=draw(st.integers(2, 300)),
        hidden_size=hidden,
        embedding_size=draw(st.integers(1, hidden)),
        num_hidden_layers=draw(st.integers(1, 4)),
        num_attention_heads=heads,
        intermediate_size=draw(st.integers(1, 40)),
        sharing=draw(sharing),
        factorized=draw(st.booleans()),
        max_position_embeddings=draw(st.integers(1, 64)),
        type_vocab_size=draw(st.integers(min_types, 3)),
        pooler=draw(st.booleans()),
    )


def meta(cls, *args, **kwargs):
    with torch.device("meta"):
        return cls(*args, **kwargs)


# ----------------------------------------------------------------------------- counts


@FAST
@given(small_archs())
def test_formula_equals_the_real_model_counted_on_meta(arch):
    b = P.breakdown(arch)
    counted, how = P.count_on_meta(arch)
    assert counted == b.total
    assert ("whole" in how) == (P.whole_model_class(arch) is not None)
    parts = P.module_counts_on_meta(arch)
    assert parts == {"embeddings": b.embedding_total, "attention": b.attention, "ffn": b.ffn, "pooler": b.pooler}


@FAST
@given(small_archs(sharing=st.sampled_from(("attention", "ffn"))))
def test_partial_sharing_equals_a_model_whose_sublayers_are_really_shared(arch):
    """Build an unshared AlbertModel/BertModel-shaped encoder, point every layer's attention (or its
    feed-forward linears and norm) at the first layer's, and count unique parameters."""
    from transformers import AlbertModel

    full = replace(arch, sharing="none", factorized=True, embedding_size=min(arch.E, arch.hidden_size))
    model = meta(AlbertModel, P.transformers_config(full), add_pooling_layer=arch.pooler)
    layers = [g.albert_layers[0] for g in model.encoder.albert_layer_groups]
    for layer in layers[1:]:
        if arch.sharing == "attention":
            layer.attention = layers[0].attention
        else:
            layer.ffn, layer.ffn_output = layers[0].ffn, layers[0].ffn_output
            layer.full_layer_layer_norm = layers[0].full_layer_layer_norm
    assert P.unique_numel(model) == P.breakdown(replace(full, sharing=arch.sharing)).total


@FAST
@given(small_archs(sharing=st.just("all")))
def test_factorized_formula_equals_the_embedding_modules(arch):
    from transformers.models.albert.modeling_albert import AlbertEmbeddings, AlbertTransformer

    arch = replace(arch, factorized=True)
    cfg = P.transformers_config(arch)
    emb, enc = meta(AlbertEmbeddings, cfg), meta(AlbertTransformer, cfg)
    v, e, h = arch.vocab_size, arch.embedding_size, arch.hidden_size
    assert emb.word_embeddings.weight.numel() == v * e == P.embedding_counts(arch)["word"]
    assert P.unique_numel(enc.embedding_hidden_mapping_in) == e * h + h == P.embedding_counts(arch)["projection E→H"]
    assert P.unique_numel(emb) + P.unique_numel(enc.embedding_hidden_mapping_in) == P.breakdown(arch).embedding_total


@FAST
@given(small_archs(sharing=st.sampled_from(("all", "none"))))
def test_masked_lm_models_are_the_base_model_plus_the_head_with_a_tied_decoder(arch):
    from transformers import AlbertForMaskedLM, BertForMaskedLM

    arch = replace(arch, pooler=False)
    if not arch.factorized:
        arch = replace(arch, sharing="none")
    cls = AlbertForMaskedLM if arch.factorized else BertForMaskedLM
    model = meta(cls, P.transformers_config(arch))
    assert P.unique_numel(model) == P.breakdown(arch).total_with_head


def test_alberts_layers_have_berts_size():
    from transformers import BertConfig
    from transformers.models.albert.modeling_albert import AlbertLayer
    from transformers.models.bert.modeling_bert import BertLayer

    arch = P.Arch(hidden_size=48, num_attention_heads=4, intermediate_size=70)
    albert_layer = meta(AlbertLayer, P.transformers_config(arch))
    bert_layer = meta(BertLayer, BertConfig(hidden_size=48, num_attention_heads=4, intermediate_size=70))
    assert P.unique_numel(albert_layer) == P.unique_numel(bert_layer) == P.attention_count(48) + P.ffn_count(48, 70)


def test_albert_base_numbers_by_hand():
    b = P.breakdown(P.Arch())  # ALBERT-base
    assert b.embeddings["word"] == 30000 * 128
    assert b.embeddings["projection E→H"] == 128 * 768 + 768
    assert b.total == 11_683_584
    assert P.breakdown(P.Arch(sharing="none")).total == 89_650_176
    bert = P.breakdown(P.Arch(vocab_size=30522, factorized=False, sharing="none"))
    assert bert.total == 109_482_240  # BERT-base
    # sharing: the encoder shrinks exactly L-fold, the embeddings not at all
    assert P.breakdown(P.Arch(sharing="none")).encoder == 12 * b.encoder


def test_sweep_over_embedding_size_is_monotone_and_matches_the_breakdown():
    arch = P.Arch()
    sizes = P.embedding_sweep_sizes(arch.hidden_size)
    assert sizes[-1] == 768 and sizes == sorted(sizes)
    points = P.total_vs_embedding_size(arch, sizes)
    totals = [t for _, t in points]
    assert totals == sorted(totals)
    assert dict(points)[128] == 11_683_584


# ----------------------------------------------------------------------------- impossible settings


@pytest.mark.parametrize(
    "change, words",
    [
        (dict(num_attention_heads=7), "not divisible"),
        (dict(embedding_size=1024), "larger than H"),
        (dict(num_hidden_layers=0), "at least one layer"),
        (dict(vocab_size=10**9), "outside what this page builds"),
        (dict(sharing="half"), "Sharing must be one of"),
    ],
)
def test_impossible_settings_are_explained(change, words):
    found = P.problems(replace(P.Arch(), **change))
    assert any(words in p for p in found), found


def test_possible_settings_have_no_problems_and_e_above_h_is_fine_unfactorized():
    assert P.problems(P.Arch()) == []
    assert P.problems(P.Arch(embedding_size=4096, factorized=False)) == []


def test_the_largest_accepted_setting_counts_on_meta():
    hi = P.LIMITS
    arch = P.Arch(
        vocab_size=hi.vocab_size[1],
        hidden_size=hi.hidden_size[1],
        embedding_size=128,
        num_hidden_layers=hi.num_hidden_layers[1],
        num_attention_heads=128,
        intermediate_size=hi.intermediate_size[1],
        sharing="none",
        factorized=True,
    )
    assert P.problems(arch) == []
    counted, _ = P.count_on_meta(arch)  # ~0.3 s idle (no memory allocated: meta tensors)
    assert counted == P.breakdown(arch).total


# ----------------------------------------------------------------------------- presets


def test_every_preset_builds_and_is_near_its_published_size():
    rows = {r["model"]: r for r in P.preset_rows(P.count_presets(), 512)}
    assert set(rows) == {p.name for p in P.PRESETS}  # DeBERTa-v3 and ModernBERT build with this transformers
    for r in rows.values():
        assert abs(r["params"] / 1e6 - r["published (M)"]) / r["published (M)"] < 0.065, r
    exact = {
        "BERT-base": 109_482_240,
        "BERT-large": 335_141_888,
        "ALBERT-base": 11_683_584,
        "ALBERT-xxlarge": 222_595_584,
        "XLNet-base": 116_718_336,
        "RoBERTa-base": 124_645_632,
        "DistilBERT": 66_362_880,
    }
    for name, n in exact.items():
        assert rows[name]["params"] == n
    # the ones that differ by more than rounding say why
    for name in ("ALBERT-xxlarge", "XLNet-base"):
        assert rows[name]["note"] != "rounding"


def test_presets_are_data_read_once_from_their_file():
    import json

    data = json.loads(P.PRESETS_FILE.read_text(encoding="utf-8"))
    assert [p.name for p in P.PRESETS] == [p["name"] for p in data["presets"]]
    assert P.PAPER_TABLE4 == tuple(data["albert_table4"])
    assert len({p.name for p in P.PRESETS}) == len(P.PRESETS)
    assert {(t["embedding_size"], t["sharing"]) for t in P.PAPER_TABLE4} == {
        (e, m) for e in (128, 768) for m in P.SHARING_MODES
    }
    # the picker offers exactly the presets the page's settings can express, and each one's values fit SPEC
    assert P.PRESET.choices == tuple(p.name for p in P.PRESETS if p.arch is not None)
    from app.core.state import fits

    for name in P.PRESET.choices:
        values = P.preset_values(name)
        assert set(values) == set(P.ARCH_FIELDS)
        assert all(fits(getattr(P.SPEC, k), v) for k, v in values.items()), name
        assert P.Inputs(**values).arch == P.preset(name).arch
    with pytest.raises(ValueError):
        P.preset_values("XLNet-base")


def test_presets_with_page_settings_agree_with_the_breakdown():
    for p in P.PRESETS:
        if p.arch is not None:
            assert P.count_preset(p) == P.breakdown(p.arch).total == P.count_on_meta(p.arch)[0], p.name


def test_table4_is_within_two_million_of_the_paper():
    rows = P.table4_rows()
    assert len(rows) == 8
    assert all(abs(r["difference (M)"]) < 2 for r in rows)


# ----------------------------------------------------------------------------- compute


def counted_flops(model, seq_len: int, device: str) -> int:
    model.eval()
    ids = torch.zeros(1, seq_len, dtype=torch.long, device=device)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(input_ids=ids)
    return fc.get_total_flops()


@settings(max_examples=12, deadline=None)
@given(small_archs(sharing=st.sampled_from(("all", "none")), min_types=1), st.integers(1, 24))
def test_flop_formula_equals_flop_counter_on_meta(arch, seq_len):
    import transformers

    if not arch.factorized:
        arch = replace(arch, sharing="none")
    arch = replace(arch, max_position_embeddings=max(arch.max_position_embeddings, seq_len))
    cfg = P.transformers_config(arch)
    cfg._attn_implementation = "eager"
    model = meta(getattr(transformers, P.whole_model_class(arch)), cfg, add_pooling_layer=arch.pooler)
    family, ccfg = P.arch_compute_cfg(arch)
    assert counted_flops(model, seq_len, "meta") == 2 * P.macs_per_sequence(family, ccfg, seq_len)


@pytest.mark.parametrize("name", ["DistilBERT", "ELECTRA-small", "ModernBERT-base", "RoBERTa-base"])
def test_preset_flop_formula_equals_flop_counter_on_meta(name):
    import transformers

    p = P.preset(name)
    cfg = P.preset_config(p)
    cfg._attn_implementation = "eager"
    model = meta(getattr(transformers, p.model_class), cfg)
    assert counted_flops(model, 32, "meta") == 2 * P.macs_per_sequence(p.family, P.preset_compute_cfg(p), 32)


def test_xlnet_and_deberta_flop_formulas_on_small_real_models():
    """These two do data-dependent work that the meta device cannot run: check on tiny real models."""
    from transformers import DebertaV2Config, DebertaV2Model, XLNetConfig, XLNetModel

    torch.manual_seed(0)
    xl = XLNetModel(XLNetConfig(vocab_size=50, d_model=32, n_layer=2, n_head=4, d_inner=40))
    xcfg = {"hidden_size": 32, "intermediate_size": 40, "num_hidden_layers": 2}
    assert counted_flops(xl, 8, "cpu") == 2 * P.macs_per_sequence("xlnet", xcfg, 8)
    for buckets in (8, 0):
        cfg = DebertaV2Config(
            vocab_size=50,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=40,
            max_position_embeddings=24,
            relative_attention=True,
            position_buckets=buckets,
            max_relative_positions=-1,
            pos_att_type=["p2c", "c2p"],
            position_biased_input=False,
            norm_rel_ebd="layer_norm",
            share_att_key=True,
            type_vocab_size=0,
        )
        cfg._attn_implementation = "eager"
        dcfg = {
            "hidden_size": 32,
            "intermediate_size": 40,
            "num_hidden_layers": 2,
            "position_buckets": buckets,
            "max_position_embeddings": 24,
        }
        assert counted_flops(DebertaV2Model(cfg), 8, "cpu") == 2 * P.macs_per_sequence("deberta", dcfg, 8)


def test_sharing_cuts_parameters_not_flops():
    flops = {m: P.flops_per_token(*P.arch_compute_cfg(P.Arch(sharing=m)), 512) for m in P.SHARING_MODES}
    counts = {m: P.breakdown(P.Arch(sharing=m)).total for m in P.SHARING_MODES}
    assert len(set(flops.values())) == 1
    assert counts["all"] < counts["attention"] < counts["none"] and counts["all"] < counts["ffn"] < counts["none"]
    rows = {r["model"]: r for r in P.preset_rows(P.count_presets(), 512)}
    albert, bert = rows["ALBERT-large"], rows["BERT-large"]
    assert albert["params"] < bert["params"] / 15
    assert albert["flops"] >= bert["flops"]  # the same layers, plus the E→H projection


def test_memory():
    assert P.memory_bytes(1_000, "float32") == 4_000
    assert P.memory_bytes(1_000, "float16") == P.memory_bytes(1_000, "bfloat16") == 2_000
    assert P.human_bytes(11_683_584 * 4) == "44.6 MiB"
    assert P.human_count(11_683_584) == "11.7M" and P.human_count(222_595_584) == "223M"


# ----------------------------------------------------------------------------- loaded models


@pytest.mark.parametrize("key", ["albert", "bert"])
def test_loaded_model_count_equals_formula(bundled, key):
    loaded = bundled(key)
    c = P.loaded_counts(loaded)
    assert c.problem is None and c.shown_as == loaded.shown_as
    assert c.real == sum(p.numel() for p in loaded.model.parameters())  # tied tensors appear once
    assert c.real == c.formula
    assert c.with_head and c.model_class == type(loaded.model).__name__
    cfg = loaded.model.config
    assert (c.arch.hidden_size, c.arch.num_hidden_layers, c.arch.vocab_size) == (
        cfg.hidden_size,
        cfg.num_hidden_layers,
        cfg.vocab_size,
    )
    if key == "albert":
        assert c.arch.factorized and c.arch.embedding_size == cfg.embedding_size
        assert c.arch.sharing == ("all" if cfg.num_hidden_groups == 1 else "none")


def test_other_albert_groupings_are_refused_clearly():
    from types import SimpleNamespace

    from transformers import AlbertConfig, AlbertForMaskedLM

    cfg = AlbertConfig(num_hidden_layers=4, num_hidden_groups=2)
    with pytest.raises(ValueError, match="num_hidden_groups=2"):
        P.arch_from_config(cfg, pooler=True)
    model = meta(
        AlbertForMaskedLM,
        AlbertConfig(
            vocab_size=50,
            embedding_size=8,
            hidden_size=16,
            num_hidden_layers=4,
            num_hidden_groups=2,
            num_attention_heads=2,
            intermediate_size=20,
        ),
    )
    c = P.loaded_counts(SimpleNamespace(model=model, shown_as="a test ALBERT"))
    assert "num_hidden_groups=2" in c.problem and c.formula is None and c.real == P.unique_numel(model)


# ----------------------------------------------------------------------------- the lesson's run


def test_run_on_the_defaults_is_albert_base_counted_both_ways():
    r = P.run({}, P.Inputs())
    assert r.arch == P.Arch() and r.notes == () and r.loaded is None
    y = r.yours
    assert y.counted == y.breakdown.total == 11_683_584 and "AlbertModel" in y.how
    table = {row["part"]: row["parameters"] for row in y.table}
    assert table["base model total"] == y.counted and table["word embeddings"] == 30000 * 128
    assert [sum(bar[k] for k in figs.PARTS) for bar in y.bars] == [
        P.breakdown(replace(P.Arch(), factorized=False, sharing="none")).total,
        *[P.breakdown(P.Arch(sharing=m)).total for m in ("none", "attention", "ffn", "all")],
    ]
    assert y.bars[-1]["label"].endswith("◀ yours")
    assert y.word_saving == 30000 * 768 - (30000 * 128 + 128 * 768 + 768)
    assert y.flops == y.flops_unshared == P.flops_per_token(*P.arch_compute_cfg(P.Arch()), 512)
    assert {row["model"] for row in r.presets} == {p.name for p in P.PRESETS}
    assert r.preset("ALBERT-base")["params"] == y.counted and r.preset("nope") is None
    assert len(r.table4) == len(P.PAPER_TABLE4)


def test_run_counts_the_loaded_albert(bundled):
    loaded = bundled("albert")
    r = P.run({"albert": loaded}, P.Inputs())
    assert r.loaded == P.loaded_counts(loaded) and r.loaded.real == r.loaded.formula


def test_run_explains_impossible_settings_and_still_shows_the_released_models():
    r = P.run({}, P.Inputs(num_attention_heads=7, num_hidden_layers=0))
    assert r.yours is None and r.presets
    assert [n.level for n in r.notes] == ["warning", "warning"]
    assert any("not divisible" in n.text for n in r.notes) and any("at least one layer" in n.text for n in r.notes)
    r = P.run({}, P.Inputs(embedding_size=768))
    assert r.yours is not None and len(r.notes) == 1 and r.notes[0].level == "info"  # E = H saves nothing


def test_run_counts_on_meta_once_per_shape_and_the_presets_once():
    cache = CountingCache()
    P.run({}, P.Inputs(), cache)
    P.run({}, P.Inputs(seq_len=128), cache)  # only FLOPs follow the sequence length
    assert cache.calls == ["count_on_meta", "count_presets"]
    r = P.run({}, P.Inputs(sharing="ffn"), cache)
    assert cache.calls == ["count_on_meta", "count_presets", "count_on_meta"]
    assert r.yours.counted == P.breakdown(P.Arch(sharing="ffn")).total and "composed" in r.yours.how


# ----------------------------------------------------------------------------- figures


def test_stacked_bar_data():
    bars = [
        {
            "label": P.SHARING_LABELS[m],
            "embeddings": b.embedding_total,
            "attention": b.attention * b.attention_copies,
            "ffn": b.ffn * b.ffn_copies,
            "pooler": b.pooler,
        }
        for m in P.SHARING_MODES
        for b in [P.breakdown(P.Arch(sharing=m))]
    ]
    fig = figs.params_stacked_bar(bars)
    assert [t.name for t in fig.data] == [figs.PART_LABELS[p] for p in figs.PARTS]
    totals = [sum(t.y[i] for t in fig.data) for i in range(4)]
    assert totals == [P.breakdown(P.Arch(sharing=m)).total for m in P.SHARING_MODES]
    assert list(fig.data[0].customdata) == totals


def test_sweep_and_scatter_figures_carry_the_numbers():
    arch = P.Arch()
    points = P.total_vs_embedding_size(arch, P.embedding_sweep_sizes(768))
    fig = figs.embedding_sweep_figure(
        SimpleNamespace(
            yours=SimpleNamespace(sweep=points, unfactorized_total=P.breakdown(replace(arch, factorized=False)).total),
            arch=arch,
        )
    )  # factorized, E = 128, H = 768
    assert list(fig.data[0].y) == [t for _, t in points]
    assert fig.data[2].y[0] == 11_683_584
    rows = P.preset_rows(P.count_presets(), 128)
    fig = figs.compute_scatter(SimpleNamespace(presets=rows, yours=SimpleNamespace(counted=5, flops=2e9)))
    shown = dict(zip(fig.data[0].text + fig.data[1].text, fig.data[0].x + fig.data[1].x))
    assert shown == {r["model"]: r["params"] for r in rows}
    assert "ALBERT-large" in fig.data[1].text and "XLNet-base" in fig.data[0].text
    assert fig.data[-1].name == "your setting" and fig.data[-1].y[0] == 2.0
