"""app/lessons/modernbert.py and app/figures/modernbert.py, against the model's own computation: RoPE rotates pair by
pair and the rotated score depends only on the distance (the model's rotary module); every layer's blocked
cells are exactly 0 in output_attentions and the rule follows config.layer_types / local_attention; the
cost formulas count the mask's cells; unpadded outputs equal padded ones at every real token; GeGLU's
parameters are counted from the modules; run() on the bundled models; the figures' data.

The bundled ModernBERT may not exist yet (it is being trained): then a stand-in with random weights is built
from the training recipe's config and tokenizer (app/training/modernbert.py) and loaded through the same
loader, from a bundled folder in a temporary directory (``BVE_BUNDLED_DIR``)."""

from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from app import measure
from app.lessons import modernbert as mbl
from app.core import text as app_text
from app.figures import modernbert as figures
from app.core.lesson import Stop
from app.models import catalogue, loading
from tests.conftest import CountingCache

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "tinystories_train.txt"


# ----------------------------------------------------------------------------- models


def build_standin(root: Path) -> Path:
    """A bundled folder under ``root`` holding every bundled checkpoint (links) and a ModernBERT stand-in with
    random weights, the recipe's shape and a BPE trained on a slice of the corpus (or on the lesson's story)."""
    from transformers import ModernBertForMaskedLM

    from app.training import data
    from app.training.modernbert import Shape, modernbert_config

    folder = root / "modernbert"
    if (folder / "config.json").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    for d in (ROOT / "assets" / "models").iterdir():
        if d.is_dir() and not (root / d.name).exists():
            (root / d.name).symlink_to(d)
    text = root / "slice.txt"
    text.write_text(CORPUS.read_text(encoding="utf-8")[:2_000_000] if CORPUS.exists() else mbl.STORY * 50)
    tok = data.build_modernbert(text, Shape().vocab_size, Shape().max_position_embeddings)
    torch.manual_seed(0)
    model = ModernBertForMaskedLM(modernbert_config(tok))
    folder.mkdir()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return root


@contextlib.contextmanager
def bundled_dir(root: Path | None):
    """Point the loader at ``root`` for the duration (nothing to do when the real checkpoint is bundled)."""
    if root is None:
        yield
        return
    before = os.environ.get("BVE_BUNDLED_DIR")
    os.environ["BVE_BUNDLED_DIR"] = str(root)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("BVE_BUNDLED_DIR", None)
        else:
            os.environ["BVE_BUNDLED_DIR"] = before


@pytest.fixture(scope="session")
def standin_root(tmp_path_factory):
    """None when assets/models/modernbert is there, else a bundled folder with a stand-in in it."""
    if catalogue.get("modernbert").bundled_available():
        return None
    return build_standin(tmp_path_factory.getbasetemp() / "bundled-with-modernbert")


@pytest.fixture(scope="session")
def models(bundled, standin_root):
    with bundled_dir(standin_root):
        return {"modernbert": loading.load("modernbert"), "bert": bundled("bert")}


@pytest.fixture(scope="module")
def default_run(models):
    """``run`` on the defaults, computed once for the tests that only read it (each run is the whole lesson)."""
    return mbl.run(models, mbl.Inputs())


def random_model(tokenizer, **shape):
    """A randomly initialised ModernBERT (eager attention) wrapped as a bundled Loaded: attention weights of
    random weights are never peaked enough to underflow, so every allowed cell is > 0."""
    from transformers import ModernBertForMaskedLM

    from app.training.modernbert import Shape, modernbert_config

    torch.manual_seed(1)
    model = ModernBertForMaskedLM(modernbert_config(tokenizer, Shape(**shape))).eval()
    model.set_attn_implementation("eager")
    return loading.Loaded(catalogue.get("modernbert"), model, tokenizer, "bundled", "test", "cpu", "float32", 0.0)


@pytest.fixture(scope="module")
def fresh(models):
    return random_model(models["modernbert"].tokenizer)


# ----------------------------------------------------------------------------- 1. RoPE


def test_the_rotary_module_turns_pair_i_by_position_times_theta_i(models):
    """What the page states: dims i and i + d/2 form pair i, turned by p · θ_i with θ_i = base^(-2i/d)."""
    model = models["modernbert"].model
    config = model.config
    d = config.hidden_size // config.num_attention_heads
    x = torch.randn(5, d, generator=torch.Generator().manual_seed(0))
    positions = torch.tensor([0, 1, 7, 300, 2000])
    for kind in sorted(set(config.layer_types)):
        theta = torch.tensor(config.rope_parameters[kind]["rope_theta"], dtype=torch.float64)
        inv_freq = theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
        angle = positions[:, None].double() * inv_freq  # (P, d/2)
        a, b = x[:, : d // 2].double(), x[:, d // 2 :].double()
        expected = torch.cat([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1)
        got = mbl.rotate(model, x, positions, kind)
        assert torch.allclose(got.double(), expected, atol=2e-3), kind  # float32 angles at position 2,000
        assert torch.allclose(got.norm(dim=-1), x.norm(dim=-1), atol=1e-4)  # a rotation keeps the length


def test_a_rotated_score_depends_only_on_the_distance(models):
    """The same q and k placed at (p, p + Δ) and at (p + s, p + s + Δ) give the same score, with the model's own
    ModernBertRotaryEmbedding and apply_rotary_pos_emb; and the score does depend on Δ."""
    model = models["modernbert"].model
    config = model.config
    d = config.hidden_size // config.num_attention_heads
    q, k = torch.randn(2, d, generator=torch.Generator().manual_seed(3))
    deltas = torch.arange(-40, 41)
    for kind in sorted(set(config.layer_types)):
        curves = []
        for p in (50, 51, 173, 1000):
            positions = torch.cat([torch.tensor([p]), p + deltas])
            rotated = mbl.rotate(model, torch.cat([q[None], k.expand(len(deltas), -1)]), positions, kind)
            curves.append(rotated[1:] @ rotated[0])
        for other in curves[1:]:
            assert torch.allclose(curves[0], other, atol=1e-4 * d), kind
        assert curves[0].std() > 0.05  # not a constant: the distance matters
        assert curves[0][40] == pytest.approx(float(q @ k), abs=1e-4)  # distance 0: no net rotation


def test_rope_demo_shows_the_models_frequencies_and_equal_curves(models):
    loaded = models["modernbert"]
    config = loaded.model.config
    r = mbl.rope_demo(loaded, 0, 1000)
    assert r.types == ("full_attention", "sliding_attention")
    assert r.theta == (
        config.rope_parameters["full_attention"]["rope_theta"],
        config.rope_parameters["sliding_attention"]["rope_theta"],
    )
    for theta, freq in zip(r.theta, r.inv_freq):
        assert np.allclose(freq, theta ** (-np.arange(0, r.head_dim, 2) / r.head_dim), rtol=1e-5)
    assert r.max_difference < 1e-3 and r.near[0].shape == r.distances.shape
    assert r.near[0][r.distances.tolist().index(0)] == pytest.approx(r.unrotated, abs=1e-4)
    g = r.grid  # constant along every diagonal (Toeplitz)
    for offset in (-5, 0, 9):
        diagonal = np.diagonal(g, offset)
        assert np.allclose(diagonal, diagonal[0], atol=1e-4)
    same = mbl.rope_demo(loaded, 0, 1000)
    assert np.array_equal(same.near[0], r.near[0])  # seeded
    assert not np.allclose(mbl.rope_demo(loaded, 1, 1000).near[0], r.near[0])


# ----------------------------------------------------------------------------- 2. alternating attention


def test_blocked_cells_are_exactly_zero_in_every_layer_of_the_loaded_model(models):
    loaded = models["modernbert"]
    config = loaded.model.config
    length = min(300, config.max_position_embeddings)
    r = mbl.long_attention(loaded, length)
    assert [c.kind for c in r.checks] == list(config.layer_types)
    assert r.maps.shape == (config.num_hidden_layers, length, length)
    assert np.allclose(r.maps.sum(-1), 1, atol=1e-5)  # every query's weights sum to 1
    for c in r.checks:
        assert c.blocked_max == 0.0  # exactly
        assert c.inside == pytest.approx(1.0, abs=1e-5)
        assert c.allowed + c.blocked == length * length
        assert c.allowed == mbl.attended_pairs(length, c.half)
        if c.kind == "sliding_attention":
            assert c.half == config.local_attention // 2 and c.blocked > 0
        else:
            assert c.blocked == 0


def test_the_rule_is_exactly_where_the_model_attends(fresh):
    """With random weights no allowed cell underflows: (weights > 0) is exactly the rule, in every head."""
    model = fresh.model
    ids = torch.tensor([mbl.long_ids(fresh.tokenizer, 200)])
    with torch.inference_mode():
        attentions = model(input_ids=ids, output_attentions=True).attentions
    for kind, a in zip(model.config.layer_types, attentions):
        rule = mbl.allowed(kind, 200, mbl.half_window(model.config))
        assert torch.equal(a[0] > 0, rule.expand_as(a[0])), kind


@pytest.mark.parametrize("every, window", [(2, 16), (1, 64), (4, 40)])
def test_global_every_n_and_the_window_are_read_from_the_config(models, every, window):
    fresh = random_model(
        models["modernbert"].tokenizer, global_attn_every_n_layers=every, local_attention=window, num_hidden_layers=4
    )
    r = mbl.long_attention(fresh, 160)
    assert [c.kind == "full_attention" for c in r.checks] == [i % every == 0 for i in range(4)]
    assert mbl.global_every(fresh.model.config.layer_types) == every
    for c in r.checks:
        assert c.blocked_max == 0.0 and c.allowed_zero == 0
        assert c.half == (None if c.kind == "full_attention" else window // 2)


@pytest.mark.parametrize("length", [1, 2, 5, 33, 64, 65, 200])
@pytest.mark.parametrize("half", [None, 0, 1, 32, 64])
def test_attended_pairs_counts_the_rules_cells(length, half):
    rule = mbl.allowed("full_attention" if half is None else "sliding_attention", length, half or 0)
    assert mbl.attended_pairs(length, half) == int(rule.sum())


def test_the_cost_sums_layers_and_modernbert_base_is_read_from_its_config(models):
    loaded = models["modernbert"]
    config = loaded.model.config
    cost = mbl.attention_cost(loaded, ((128,), (1.0,), (1.0,), (3,), None))
    half = config.local_attention // 2
    for n, pairs, flops, full in zip(cost.lengths, cost.pairs, cost.flops, cost.pairs_global):
        assert pairs == sum(mbl.attended_pairs(n, None if t == "full_attention" else half) for t in config.layer_types)
        assert flops == 4 * config.hidden_size * pairs and full == config.num_hidden_layers * n * n
    assert cost.lengths[-1] == 8192 and cost.max_positions == config.max_position_embeddings
    # ModernBERT-base: 22 layers, global 0, 3, ..., 21 (8), the other 14 local with ±64
    n = 8192
    assert cost.base_pairs[-1] == 8 * n * n + 14 * (n + 2 * (64 * n - 64 * 65 // 2))
    assert cost.base_shares[-1] == pytest.approx(cost.base_pairs[-1] / (22 * n * n))
    assert all(0 < s <= 1 for s in cost.shares) and list(cost.shares) == sorted(cost.shares, reverse=True)


def test_timed_forwards_measure_up_to_the_chosen_length(models):
    lengths, as_built, all_global, rounds, ratio = mbl.timed_forwards(models["modernbert"], 200)
    assert lengths == (128, 200) and len(as_built) == len(all_global) == len(rounds) == 2
    assert all(t > 0 for t in as_built + all_global)
    # the longest length is the one the page concludes from: rounds in turns, enough for an interval
    assert rounds[-1] >= measure.DEFAULTS.least and ratio is not None and ratio["n"] == rounds[-1]
    assert ratio["low"] <= ratio["ratio"] <= ratio["high"]


def test_a_busy_server_times_modernbert_provisionally_and_short(models):
    """Taken while other pages compute (measure.quiet), a timing is the fewest rounds an interval needs, is kept
    under its own key, and the page is told it is provisional; quiet, it gets the full look."""
    _, _, _, rounds, ratio = mbl.timed_forwards(models["modernbert"], 200, settled=False)
    assert rounds[-1] == measure.MIN_ROUNDS and ratio["n"] == measure.MIN_ROUNDS
    busy = mbl.Inputs.from_values({}, None, others=3)
    assert busy.settled is False and mbl.Inputs.from_values({}, None, others=0).settled is True
    cache = CountingCache()
    r = mbl.run(models, busy, cache)
    assert r.provisional and r.cost.provisional and r.unpadding.provisional
    assert r.cost.rounds[-1] == r.unpadding.rounds == measure.MIN_ROUNDS
    calls = len(cache.calls)
    quiet = mbl.run(models, mbl.Inputs(), cache)
    assert not quiet.provisional and quiet.cost.rounds[-1] >= measure.DEFAULTS.least
    assert sorted(cache.calls[calls:]) == ["timed_forwards", "unpadding"]  # only the timings are taken again


# ----------------------------------------------------------------------------- 3. GeGLU


def test_geglu_parameters_are_counted_from_the_modules(models):
    mb, bert = models["modernbert"], models["bert"]
    rows = {r.name.split(":")[0]: r for r in mbl.feed_forwards(mb, bert)}
    c, b = mb.model.config, bert.model.config
    mlp = mb.model.model.layers[0].mlp
    mine = rows["ModernBERT (this model)"]
    assert mine.parameters == mlp.Wi.weight.numel() + mlp.Wo.weight.numel() == 3 * c.hidden_size * c.intermediate_size
    assert mlp.Wi.bias is None and mlp.Wo.bias is None
    theirs = rows["BERT (this model)"]
    h, i = b.hidden_size, b.intermediate_size
    assert theirs.parameters == 2 * h * i + i + h
    h = c.hidden_size
    assert rows[f"BERT at hidden {h}, intermediate 4·{h}"].parameters == 8 * h * h + 5 * h
    assert rows["ModernBERT-base"].parameters == 3 * 768 * 1152 == 2_654_208
    assert rows["BERT-base"].parameters == 2 * 768 * 3072 + 3072 + 768 == 4_722_432


def test_the_gate_demo_opens_the_real_mlp_at_its_real_input(models):
    loaded = models["modernbert"]
    ids = tuple(loaded.tokenizer(mbl.DEFAULT_TEXT)["input_ids"])
    for layer in range(loaded.model.config.num_hidden_layers):
        g = mbl.gate_demo(loaded, ids, 3, layer)
        assert g.replay_error < 1e-4 and g.module_error < 1e-5  # x is the MLP's input; Wo(GELU(a)·g) is the module
        assert g.pre.shape == g.gate.shape == g.act.shape == (loaded.model.config.intermediate_size,)
        assert g.flipped == int(((g.gate < 0) & (g.act != 0)).sum())
        assert g.piece == loaded.tokenizer.convert_ids_to_tokens(ids[3])


# ----------------------------------------------------------------------------- 4. unpadding


def test_unpadded_outputs_equal_padded_outputs_at_every_real_token(models):
    loaded = models["modernbert"]
    sentences = mbl.batch_sentences(mbl.DEFAULT_TEXT, 8, 0)
    u = mbl.unpadding(loaded, sentences)
    assert u.max_difference < 1e-3  # float32 rounding of differently shaped matmuls, on outputs of order 1
    assert u.unpadded == sum(u.lengths) < u.padded == len(u.lengths) * max(u.lengths)
    assert u.lengths == tuple(len(loaded.tokenizer(s)["input_ids"]) for s in sentences)
    assert u.pairs_blocks <= u.pairs_padded and u.pairs_blocks <= u.pairs_packed
    assert u.ms_padded > 0 and u.ms_packed > 0
    assert u.rounds >= measure.DEFAULTS.least and u.ratio["n"] == u.rounds and not u.provisional
    assert "rounds in turns" in mbl.unpadding_story(u)


def test_unpadding_keeps_sentences_apart_even_past_the_local_window(fresh):
    """Sentences longer than the window, so the local layers' masks matter inside a sentence too; and without
    the block-diagonal mask (one sequence, one segment) the outputs would differ: the test can fail."""
    long_sentence = " ".join(app_text.split_sentences(mbl.STORY)[:12])
    sentences = (long_sentence, "Tom was very happy.", app_text.split_sentences(mbl.STORY)[20])
    u = mbl.unpadding(fresh, sentences)
    assert max(u.lengths) > 2 * mbl.half_window(fresh.model.config) and u.max_difference < 1e-4
    model, tok = fresh.model, fresh.tokenizer
    encoded = [tok(s)["input_ids"] for s in sentences]
    ids = torch.tensor([[i for e in encoded for i in e]])
    _, positions = mbl.packed_inputs([len(e) for e in encoded])
    one_segment = mbl.additive_masks(
        torch.zeros(ids.shape[1], dtype=torch.long), mbl.half_window(model.config), torch.float32, "cpu"
    )
    with torch.inference_mode():
        leaky = model.model(input_ids=ids, attention_mask=one_segment, position_ids=positions[None]).last_hidden_state
        alone = model.model(input_ids=torch.tensor([encoded[1]])).last_hidden_state
    start = len(encoded[0])
    assert (leaky[0, start : start + len(encoded[1])] - alone[0]).abs().max() > 1e-2


def test_batch_sentences_start_with_the_text_and_follow_the_seed():
    a = mbl.batch_sentences("My text.", 6, 0)
    assert a[0] == "My text." and len(a) == 6 and len(set(a[1:])) == 5
    assert set(a[1:]) <= set(app_text.split_sentences(mbl.STORY))
    assert mbl.batch_sentences("My text.", 6, 0) == a and mbl.batch_sentences("My text.", 6, 1) != a


def test_packed_inputs_restart_positions_per_sentence():
    segment, positions = mbl.packed_inputs([3, 1, 2])
    assert segment.tolist() == [0, 0, 0, 1, 2, 2] and positions.tolist() == [0, 1, 2, 0, 0, 1]


# ----------------------------------------------------------------------------- 5. fill-mask and the tables


def test_fill_mask_masks_every_piece_of_the_word(models, default_run):
    loaded = models["modernbert"]
    r = default_run
    f = r.fill
    assert f.words[f.word] == "park" and f.word == mbl.DEFAULT_WORD
    assert len(f.top) == mbl.DEFAULTS.top_k and [p for _, p in f.top] == sorted((p for _, p in f.top), reverse=True)
    ids = loaded.tokenizer(mbl.DEFAULT_TEXT)["input_ids"]
    guess = mbl.fill_mask(loaded, tuple(ids), f.positions)
    top_p, p_pieces, rank = np.array(guess.first.probabilities), guess.p_pieces, guess.rank
    masked = list(ids)
    for i in f.positions:
        masked[i] = loaded.tokenizer.mask_token_id
    with torch.inference_mode():
        probs = torch.softmax(loaded.model(input_ids=torch.tensor([masked])).logits[0, f.positions[0]], -1)
    assert np.allclose(top_p, probs.topk(len(top_p)).values.numpy(), atol=1e-6)
    assert f.p_word == pytest.approx(float(np.prod(p_pieces)))
    assert rank == int((probs > probs[ids[f.positions[0]]]).sum()) + 1 == f.rank


def test_the_changes_are_read_from_the_configs_and_modules(models):
    mb, bert = models["modernbert"], models["bert"]
    rows = {c.aspect: c for c in mbl.changes(mb, bert)}
    c, b = mb.model.config, bert.model.config
    assert rows["Context length"].bert == f"{b.max_position_embeddings:,} tokens"
    assert rows["Context length"].modernbert == f"{c.max_position_embeddings:,} tokens"
    assert rows["Parameters"].modernbert == f"{mbl.parameter_count(mb.model):,}"
    assert rows["Parameters"].bert == f"{mbl.parameter_count(bert.model):,}"
    globals_ = [i for i, t in enumerate(c.layer_types) if t == "full_attention"]
    assert f"global in layers {', '.join(map(str, globals_))}" in rows["Attention"].modernbert
    assert f"±{c.local_attention // 2}" in rows["Attention"].modernbert
    assert f"all {b.num_hidden_layers} layers" in rows["Attention"].bert
    assert rows["Biases"].modernbert.startswith("0 linear layers") and not rows["Biases"].bert.startswith("0 ")
    assert f"{b.hidden_act}(" in rows["Feed-forward"].bert and "GeGLU" in rows["Feed-forward"].modernbert
    assert "2 T" in rows["Training tokens (the real models)"].modernbert
    assert "131 B" in rows["Training tokens (the real models)"].bert  # 1,000,000 × 256 × 512


def test_published_numbers_are_computed_from_modernbert_bases_config(models):
    loaded = models["modernbert"]
    base = mbl.base_parameters(loaded)
    assert round(base / 1e6) in (149, 150)  # published: 149M
    rows = {p.aspect: p for p in mbl.published(loaded, base)}
    assert rows["Parameters"].base == f"{base:,}" and rows["Parameters"].published == "149M"
    assert rows["Context length (tokens)"].base == "8,192"
    assert rows["Local window (tokens)"].base.startswith("128")
    assert rows["Global attention"].base == rows["Global attention"].published == "every 3rd layer"
    assert rows["RoPE θ, global / local"].base == "160,000 / 10,000"


# ----------------------------------------------------------------------------- run: defaults, input, caching


def test_run_on_the_defaults(models, default_run):
    r = default_run
    config = models["modernbert"].model.config
    assert r.notes == () and r.layer == 1 and r.length == 256
    assert r.layers == tuple(config.layer_types) and r.half == config.local_attention // 2
    assert r.rule.shape == (256, 256) and np.array_equal(
        r.rule, mbl.allowed(config.layer_types[1], 256, r.half).numpy()
    )
    assert r.model == models["modernbert"].shown_as and r.bert == models["bert"].shown_as
    assert r.unpadding.sentences[0] == mbl.DEFAULT_TEXT and len(r.unpadding.sentences) == 8
    assert r.gate.position == r.fill.positions[0] and r.gate.layer == 1


@pytest.mark.parametrize("text", ["", "  \n\t "])
def test_an_empty_text_stops_with_a_message(models, text):
    with pytest.raises(Stop):
        mbl.run(models, mbl.Inputs(text=text))


def test_emoji_and_cjk_are_byte_pieces_with_a_note(models):
    r = mbl.run(models, mbl.Inputs(text="The cat 😀 sat. 你好", word=2))
    assert r.fill.words[r.fill.word] == "😀" and r.fill.pieces
    assert any("😀" in n.text for n in r.notes)


def test_out_of_range_values_are_adjusted_with_notes(models):
    layers = models["modernbert"].model.config.num_hidden_layers
    r = mbl.run(models, mbl.Inputs(text="A dog ran.", word=40, layer=layers + 5))
    assert r.fill.word == 2 and r.layer == layers - 1  # "ran", its last content word, not "."
    assert any("beyond" in n.text for n in r.notes) and any(f"Layer {layers + 5}" in n.text for n in r.notes)


def test_a_text_too_long_for_the_model_is_cut_with_a_note(models):
    limit = mbl.txt.token_limit(models["modernbert"].tokenizer, mbl.DEFAULTS.max_tokens)
    r = mbl.run(models, mbl.Inputs(text="😀" * 1000, word=0))
    assert r.fill.n_tokens <= limit
    assert any(n.level == "warning" and str(limit) in n.text for n in r.notes)


def test_the_layer_select_does_not_redo_the_long_forward(models):
    cache = CountingCache()
    mbl.run(models, mbl.Inputs(), cache)
    first = list(cache.calls)
    assert {"long_attention", "timed_forwards", "unpadding", "fill_mask", "rope_demo"} <= set(first)
    mbl.run(models, mbl.Inputs(layer=0), cache)
    assert cache.calls[len(first) :] == ["gate_demo"]  # only the gate at the new layer
    mbl.run(models, mbl.Inputs(layer=0, shift=10), cache)
    assert cache.calls[len(first) + 1 :] == ["rope_demo"]


# ----------------------------------------------------------------------------- figures


def test_the_figures_carry_the_results_numbers(models, default_run):
    r = default_run
    rope, check = r.rope, r.attention.checks[r.layer]
    fig = figures.relative_figure(rope)
    assert np.allclose(fig.data[0].y, rope.near[0]) and np.allclose(fig.data[1].y, rope.far[0])
    assert np.allclose(fig.data[-1].z, rope.grid)
    spectrum = figures.spectrum_figure(r)
    assert np.allclose(spectrum.data[0].y, 2 * math.pi / rope.inv_freq[0])
    att = figures.attention_figure(r.rule, r.attention.maps[r.layer], r.layer, check.kind, check.half)
    assert np.array_equal(att.data[0].z, r.rule.astype(np.int8)) and np.allclose(
        att.data[1].z, r.attention.maps[r.layer]
    )
    cost = figures.cost_figure(r)
    assert list(cost.data[1].y) == list(r.cost.flops) and list(cost.data[0].y) == list(r.cost.flops_global)
    u = r.unpadding
    batch = figures.batch_figure(u)
    assert np.asarray(batch.data[0].z).shape == (len(u.lengths), max(u.lengths))
    assert int((np.asarray(batch.data[0].z) >= 0).sum()) == u.unpadded == np.asarray(batch.data[1].z).shape[1]
    gate = figures.gate_figure(r.gate)
    assert np.allclose(gate.data[1].y, r.gate.act * r.gate.gate)
    for f in (
        figures.fill_figure(r),
        figures.ffn_figure(r.feed_forwards),
        figures.layers_figure(r),
        figures.timing_figure(r),
    ):
        assert isinstance(f, go.Figure) and f.data


def test_past_256_positions_an_attention_cell_is_the_mean_of_its_block_and_says_so():
    """The deck's 512-token slide: 2 × 2 blocks (a quarter of the cells to send and draw); each cell is the block's
    mean weight and the share of its cells the rule allows; the hover and the axes name the block's positions."""
    rng = np.random.default_rng(0)
    n = 512
    rule = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) <= 64
    weights = rng.random((n, n))
    fig = figures.attention_figure(rule, weights, 1, "sliding_attention", 64)
    z_rule, z_weights = np.asarray(fig.data[0].z), np.asarray(fig.data[1].z)
    assert z_rule.shape == z_weights.shape == (256, 256)
    assert np.isclose(z_weights[3, 40], weights[6:8, 80:82].mean(), rtol=1e-6)
    assert z_rule[0, 0] == 100 and z_rule[0, 200] == 0 and z_rule[0, 32] == 75  # query 0–1, keys 64–65: 3 of 4
    assert fig.data[1].x[40] == "80–81" and fig.data[1].y[3] == "6–7"
    assert "2 × 2" in fig.data[1].hovertemplate and "2 × 2" in fig.layout.title.text
    assert list(fig.layout.xaxis.ticktext[:3]) == ["0", "64", "128"]
    odd = figures.attention_figure(rule[:300, :300], weights[:300, :300], 1, "sliding_attention", 64)
    assert np.asarray(odd.data[1].z).shape == (150, 150) and odd.data[1].x[-1] == "298–299"
    exact = figures.attention_figure(rule[:256, :256], weights[:256, :256], 1, "sliding_attention", 64)
    assert np.array_equal(exact.data[0].z, rule[:256, :256].astype(np.int8)) and exact.data[1].x is None


def test_tokens_in_figures_are_escaped():
    fig = figures.batch_figure(
        SimpleNamespace(pieces=[["[CLS]", "<b>x</b>", "[SEP]"], ["[CLS]", "[SEP]"]], lengths=[3, 2])
    )
    assert "&lt;b&gt;x&lt;/b&gt;" in str(fig.data[0].customdata.tolist())
    assert "<b>x</b>" not in str(fig.data[0].customdata.tolist())
    fill = figures.fill_figure(SimpleNamespace(fill=SimpleNamespace(top=[("<i>", 0.5)], words=("<script>",), word=0)))
    assert "<script>" not in fill.layout.title.text and "<i>" not in str(fill.data[0].y)


def test_a_comparison_is_timed_for_an_interval_and_a_busy_server_gets_the_fewest_rounds():
    quiet, busy = mbl.compared_timing(True), mbl.compared_timing(False)
    assert quiet["least"] == measure.DEFAULTS.least and quiet["repeats"] >= quiet["least"]
    assert busy == measure.in_turns(False)  # the one provisional short look of app.measure, as the side-by-side's
    assert (
        busy["least"] == busy["repeats"] == measure.MIN_ROUNDS and quiet["budget_ms"] == mbl.DEFAULTS.compared_budget_ms
    )
    calls = []
    samples = mbl.timed_in_turns({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, "cpu", **busy)
    assert calls == ["a", "b"] * (1 + measure.MIN_ROUNDS)  # one warm-up round, then in turns
    assert len(samples["a"]) == len(samples["b"]) == measure.MIN_ROUNDS


def _unpadding(ratio: dict | None) -> mbl.Unpadding:
    """A 2-sentence batch (2 and 6 tokens: 12 slots padded, 8 packed) with ``ratio`` (packed / padded)."""
    packed = 10.0 * (ratio["ratio"] if ratio else 1.0)
    return mbl.Unpadding(("a", "b"), (("x",) * 2, ("x",) * 6), (2, 6), 0.0, 10.0, packed, 5, ratio)


def test_unpadding_says_quicker_or_slower_only_when_the_interval_is_on_one_side_of_one():
    def iv(r, lo, hi):
        return {"ratio": r, "low": lo, "high": hi, "n": 5}

    assert "was quicker here" in mbl.unpadding_story(_unpadding(iv(0.7, 0.6, 0.8)))
    assert "was slower here" in mbl.unpadding_story(_unpadding(iv(1.3, 1.2, 1.4)))
    noise = mbl.unpadding_story(_unpadding(iv(0.8, 0.5, 1.2)))
    assert "within the noise" in noise and "was quicker" not in noise and "was slower" not in noise
    assert "no conclusion" in mbl.unpadding_story(_unpadding(None))
    assert mbl.rounds_words((3, 3, 9)) == "3, 3 and 9 rounds" and mbl.rounds_words((5, 5)) == "5 rounds"
