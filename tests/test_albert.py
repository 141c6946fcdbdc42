"""app/lessons/albert_activations.py: similarity measures (cosine, linear CKA), per-layer statistics, that ALBERT's
layers really share one block, unrolling the shared block, PCA trajectories, and the activation figures."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app.lessons import albert_activations as A
from app.core import text as txt
from app.figures import albert_activations as figs
from app.core.lesson import Stop
from tests.conftest import CountingCache

FAST = settings(max_examples=25, deadline=None)
TEXT = A.DEFAULT_TEXT


def inputs_of(loaded, text: str = TEXT) -> dict:
    return A.model_inputs(txt.tokenize(loaded.tokenizer, text, 64).ids)


def random_states(seed: int, depth: int = 4, tokens: int = 6, width: int = 8) -> torch.Tensor:
    return torch.randn(depth, tokens, width, generator=torch.Generator().manual_seed(seed))  # (D, T, H)


def random_orthogonal(width: int, seed: int) -> torch.Tensor:
    q, r = torch.linalg.qr(torch.randn(width, width, generator=torch.Generator().manual_seed(seed), dtype=torch.double))
    return (q * torch.sign(torch.diagonal(r))).float()


def hooks(model) -> dict:
    """Forward hooks per module. transformers installs its own output-capturing hooks the first time
    hidden states are asked for, so tests compare before and after rather than expect none."""
    return {n: list(m._forward_hooks) for n, m in model.named_modules() if m._forward_hooks}


def tiny_albert(groups: int = 1, layers: int = 3):
    from transformers import AlbertConfig, AlbertModel

    torch.manual_seed(0)
    cfg = AlbertConfig(
        vocab_size=60,
        embedding_size=8,
        hidden_size=16,
        num_hidden_layers=layers,
        num_hidden_groups=groups,
        num_attention_heads=2,
        intermediate_size=24,
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        attn_implementation="eager",
    )
    return AlbertModel(cfg).eval()


# ----------------------------------------------------------------------------- similarity


@FAST
@given(st.integers(0, 10_000))
def test_cosine_of_a_layer_with_itself_is_one_and_the_matrix_is_symmetric(seed):
    m = A.cosine_matrix(random_states(seed))
    assert torch.allclose(torch.diagonal(m), torch.ones(m.shape[0]), atol=1e-6)
    assert torch.allclose(m, m.T, atol=1e-6)
    assert (m <= 1 + 1e-6).all() and (m >= -1 - 1e-6).all()


@FAST
@given(st.integers(0, 10_000), st.floats(0.1, 10.0))
def test_cka_is_invariant_to_orthogonal_transforms_and_scale(seed, scale):
    x = random_states(seed, depth=1, tokens=10, width=6)[0]
    y = random_states(seed + 1, depth=1, tokens=10, width=5)[0]
    q1, q2 = random_orthogonal(6, seed), random_orthogonal(5, seed + 7)
    assert A.linear_cka(x, x @ q1 * scale) == pytest.approx(1.0, abs=1e-6)
    assert A.linear_cka(x @ q1, y @ q2 * scale) == pytest.approx(A.linear_cka(x, y), abs=1e-6)
    assert A.linear_cka(x, y) == pytest.approx(A.linear_cka(y, x), abs=1e-9)
    assert 0.0 <= A.linear_cka(x, y) <= 1.0 + 1e-9


def test_cka_matrix_and_degenerate_input():
    h = random_states(3)
    m = A.cka_matrix(h)
    assert torch.allclose(torch.diagonal(m), torch.ones(4), atol=1e-6) and torch.allclose(m, m.T)
    assert torch.equal(A.similarity_matrix(h, "cka"), m)
    assert torch.equal(A.similarity_matrix(h, "cosine"), A.cosine_matrix(h))
    assert math.isnan(A.linear_cka(torch.ones(5, 3), torch.randn(5, 3)))  # constant over the tokens
    with pytest.raises(ValueError):
        A.similarity_matrix(h, "euclid")


def test_cka_matrix_equals_pairwise_linear_cka():
    """The Gram-matrix form gives linear_cka's number for every pair, nan where a depth is constant over
    the tokens, at a base-size width where the pairwise form would be slow."""
    g = torch.Generator().manual_seed(5)
    h = torch.randn(6, 9, 768, generator=g)
    h[2] = 0.7  # constant over the tokens
    m = A.cka_matrix(h)
    ref = torch.tensor([[A.linear_cka(h[a], h[b]) for b in range(6)] for a in range(6)])
    assert torch.allclose(m, ref, atol=1e-6, equal_nan=True)
    assert math.isnan(m[2, 2]) and math.isnan(m[0, 2]) and m[0, 0] == pytest.approx(1.0)


# ----------------------------------------------------------------------------- per-layer statistics


def test_transitions_norms_and_entropy_by_hand():
    x = torch.tensor([[[3.0, 4.0]], [[3.0, 4.0]], [[-4.0, 3.0]]])  # (3 depths, 1 token, 2)
    t = A.transitions(x)
    assert t["l2"].tolist() == pytest.approx([0.0, math.sqrt(50)])
    assert t["cosine"].tolist() == pytest.approx([1.0, 0.0], abs=1e-6)
    assert t["angle"].tolist() == pytest.approx([0.0, 90.0], abs=1e-3)
    assert A.hidden_norms(x).tolist() == pytest.approx([5.0, 5.0, 5.0])
    uniform = torch.full((2, 3, 4, 4), 0.25)  # (L, heads, T, T)
    one_hot = torch.eye(4).expand(2, 3, 4, 4)
    assert A.attention_entropy(uniform).tolist() == pytest.approx([2.0, 2.0])
    assert A.attention_entropy(one_hot).tolist() == pytest.approx([0.0, 0.0])


# ----------------------------------------------------------------------------- one shared block


def test_bundled_albert_calls_one_block_l_times_and_bert_l_blocks_once(bundled):
    albert, bert = bundled("albert"), bundled("bert")
    inputs = inputs_of(albert)
    before = hooks(albert.model)
    log = A.count_layer_calls(albert.model, inputs)
    layers = albert.model.config.num_hidden_layers
    assert len(log.modules) == 1 and len(log.calls) == layers
    assert log.distinct_modules_called == 1 and log.distinct_storages == 1
    shared = A.layer_modules(albert.model)[0][1]
    assert hooks(albert.model) == before  # our hooks are gone
    params = A.layer_parameters(albert.model)
    assert hex(shared.attention.query.weight.data_ptr()) in {p["data_ptr"] for p in params}
    assert sum(p["numel"] for p in params) == sum(p.numel() for p in shared.parameters())

    log = A.count_layer_calls(bert.model, inputs_of(bert))
    n = bert.model.config.num_hidden_layers
    assert len(log.modules) == len(log.calls) == log.distinct_modules_called == log.distinct_storages == n


def test_shared_layers_share_storage_in_a_model_built_from_a_config():
    shared, separate = tiny_albert(groups=1, layers=4), tiny_albert(groups=4, layers=4)
    ids = {"input_ids": torch.tensor([[2, 5, 9, 11, 3]])}
    a, b = A.count_layer_calls(shared, ids), A.count_layer_calls(separate, ids)
    assert (len(a.calls), a.distinct_storages) == (4, 1)
    assert (len(b.calls), b.distinct_storages) == (4, 4)
    ptrs = {p.data_ptr() for p in shared.encoder.albert_layer_groups[0].parameters()}
    assert len(ptrs) == len(list(shared.encoder.albert_layer_groups[0].parameters()))  # distinct tensors, stored once


def test_hooks_are_removed_even_when_the_forward_fails():
    model = tiny_albert()
    before = hooks(model)
    with pytest.raises(IndexError):
        A.count_layer_calls(model, {"input_ids": torch.tensor([[2, 500, 3]])})  # id beyond the vocabulary
    assert hooks(model) == before


# ----------------------------------------------------------------------------- unrolling


def test_unrolling_l_applications_equals_the_models_own_output(bundled):
    albert = bundled("albert")
    before = {k: v.clone() for k, v in albert.model.state_dict().items()}
    config_before = albert.model.config.to_dict()
    inputs = inputs_of(albert)
    trace = A.layer_trace(albert.model, inputs)
    hooks_before = hooks(albert.model)
    layers = albert.model.config.num_hidden_layers
    states = A.unroll(albert.model, inputs, 3 * layers)
    assert states.shape == (3 * layers + 1, *trace.hidden.shape[1:])
    assert torch.allclose(states[: layers + 1], trace.hidden, atol=1e-5)
    # the model is only read
    assert albert.model.config.to_dict() == config_before
    assert all(torch.equal(v, before[k]) for k, v in albert.model.state_dict().items())
    assert hooks(albert.model) == hooks_before


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 5), st.integers(0, 3))
def test_unrolling_matches_hidden_states_with_padding(layers, pad):
    model = tiny_albert(layers=layers)
    ids = torch.tensor([[2, 7, 8, 9, 3] + [0] * pad])
    mask = torch.tensor([[1] * 5 + [0] * pad])
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    states = A.unroll(model, {"input_ids": ids, "attention_mask": mask}, layers + 2)
    expected = torch.stack([h[0] for h in out.hidden_states])
    assert torch.allclose(states[: layers + 1], expected, atol=1e-5)


def test_unrolling_in_rounds_equals_one_unroll(bundled):
    albert = bundled("albert")
    inputs = inputs_of(albert)
    layers = albert.model.config.num_hidden_layers
    whole = A.unroll(albert.model, inputs, 3 * layers)
    ids = tuple(inputs["input_ids"][0].tolist())
    assert torch.equal(A.unrolled_to(albert, ids, 3, layers), whole)
    assert torch.equal(A.unroll(albert.model, inputs, layers, start=whole[layers]), whole[layers : 2 * layers + 1])
    with pytest.raises(ValueError, match="start"):
        A.unroll(albert.model, inputs, 1, start=whole[0][:-1])


def test_unrolling_needs_one_shared_block():
    with pytest.raises(ValueError, match="num_hidden_groups"):
        A.unroll(tiny_albert(groups=3), {"input_ids": torch.tensor([[2, 3]])}, 3)
    assert A.is_fully_shared(tiny_albert()) and not A.is_fully_shared(tiny_albert(groups=3))


def test_steps_and_convergence_summary():
    # a state that halves its distance to a fixed point every step
    fixed = torch.ones(1, 3, 4)
    states = torch.stack([fixed[0] + 0.5**k for k in range(7)])  # (7, 3, 4)
    s = A.steps(states, reference=3)
    assert torch.all(s["l2"][1:] < s["l2"][:-1])
    assert s["cosine_to_reference"][2].item() == pytest.approx(1.0)
    c = A.convergence_summary(s["l2"], 3)
    assert c["trend"] == "settling" and c["first"] > c["at_L"] > c["last"]
    flat = A.convergence_summary(torch.ones(6), 3)
    assert flat["trend"] == "not settling"


# ----------------------------------------------------------------------------- input and trajectories


def test_the_token_limit_is_the_position_table_or_the_cap(bundled):
    albert = bundled("albert")
    positions = albert.model.config.max_position_embeddings
    assert A.max_tokens(albert.model, cap=10_000) == positions and A.max_tokens(albert.model, cap=6) == 6
    inputs = A.model_inputs((2, 5, 9, 3))
    assert inputs["input_ids"].shape == inputs["attention_mask"].shape == (1, 4) and inputs["attention_mask"].all()


def test_pca_is_deterministic_and_explains_a_line_fully():
    line = torch.outer(torch.arange(10.0), torch.tensor([1.0, 2.0, -2.0]))  # (10, 3) on one line
    coords, _, ratio = A.pca_2d(line)
    assert ratio[0].item() == pytest.approx(1.0) and ratio[1].item() == pytest.approx(0.0, abs=1e-6)
    assert coords[:, 1].abs().max() < 1e-4
    h = random_states(5)
    t1, t2 = A.trajectory(h, 2, extra=h[:2]), A.trajectory(h, 2, extra=h[:2])
    assert torch.equal(t1["path"], t2["path"]) and t1["path"].shape == (4, 2)
    assert t1["cloud"].shape == (4, 6, 2) and torch.allclose(t1["extra"], t1["path"][:2], atol=1e-5)
    assert 0 <= t1["explained"].sum() <= 1 + 1e-6


# ----------------------------------------------------------------------------- figures


def followed(word: str, **paths) -> SimpleNamespace:
    """What trajectory_figure reads from a Result, by hand: each model's (path, piece followed), or no path."""
    side = {
        name: SimpleNamespace(name=name.upper(), path=paths[name][0], tokens=(paths[name][1],), piece=0)
        if name in paths
        else SimpleNamespace(name=name.upper(), path=None)
        for name in ("albert", "bert")
    }
    return SimpleNamespace(**side, words=(word,), word=0)


def test_activation_figures_carry_the_numbers():
    h = random_states(1)
    att = torch.softmax(torch.randn(3, 2, 6, 6), -1)
    series = {**A.transitions(h), "norm": A.hidden_norms(h), "entropy": A.attention_entropy(att)}
    fig = figs.layer_metrics_figure({"ALBERT": series, "BERT": series})
    assert len(fig.data) == 8
    assert list(fig.data[0].y) == pytest.approx(series["l2"].tolist())
    assert list(fig.data[1].customdata) == pytest.approx(series["cosine"].tolist())
    assert list(fig.data[2].x) == [0, 1, 2, 3]  # norms start at depth 0

    m = A.cka_matrix(h)
    fig = figs.similarity_heatmaps(
        SimpleNamespace(
            albert=SimpleNamespace(similarity=m), bert=SimpleNamespace(similarity=A.cosine_matrix(h)), measure="cka"
        )
    )
    assert torch.allclose(torch.tensor([list(r) for r in fig.data[0].z]), m)
    assert fig.data[0].zmax == 1.0

    s = A.steps(h, 2)
    fig = figs.unroll_figure(SimpleNamespace(unrolled=SimpleNamespace(steps=s), albert=SimpleNamespace(layers=2)))
    assert list(fig.data[0].y) == pytest.approx(s["l2"].tolist())
    assert list(fig.data[1].y) == pytest.approx(s["cosine_to_reference"].tolist())

    t = A.trajectory(h, 1, extra=h[:2])
    fig = figs.trajectory_figure(followed("girl", albert=(t, "▁girl")))
    assert list(fig.data[1].x) == pytest.approx(t["path"][:, 0].tolist())
    assert len(fig.data[2].x) == 3  # the last depth, then two unrolled points
    assert "▁girl" in fig.layout.annotations[0].text


def test_the_trajectory_figure_escapes_the_users_word_and_piece():
    h = random_states(2)
    t = A.trajectory(h, 0)
    fig = figs.trajectory_figure(followed("<img src=x>", bert=(t, "<b>x</b>")))
    assert "<img" not in fig.data[1].hovertemplate and "&lt;img src=x&gt;" in fig.data[1].hovertemplate
    assert "<b>" not in fig.layout.annotations[0].text and "&lt;b&gt;x&lt;/b&gt;" in fig.layout.annotations[0].text


# ----------------------------------------------------------------------------- the lesson's run


@pytest.fixture(scope="module")
def models(bundled):
    return {k: bundled(k) for k in A.MODELS}


def test_run_on_the_bundled_pair_matches_the_models_own_computation(models):
    r = A.run(models, A.Inputs())
    albert, bert = models["albert"], models["bert"]
    assert r.notes == () and r.measure == "cka"
    assert list(r.words) == [w for w, _, _ in txt.split_words(TEXT)] and r.words[r.word] == "girl"
    for view, loaded in ((r.albert, albert), (r.bert, bert)):
        cfg = loaded.model.config
        tk = txt.tokenize(loaded.tokenizer, TEXT)
        assert view.name == loaded.variant.label and view.shown_as == loaded.shown_as
        assert view.layers == cfg.num_hidden_layers and view.tokens == tk.pieces
        assert view.similarity.shape == (cfg.num_hidden_layers + 1,) * 2
        assert torch.allclose(torch.diagonal(view.similarity), torch.ones(cfg.num_hidden_layers + 1), atol=1e-5)
        assert len(view.series["l2"]) == len(view.series["entropy"]) == cfg.num_hidden_layers
        assert view.piece == tk.pieces_of(r.word)[0]  # the first piece of word 2, counted from 0
        assert view.path["path"].shape == (cfg.num_hidden_layers + 1, 2)
        trace = A.layer_trace(loaded.model, A.model_inputs(tk.ids))
        assert torch.allclose(view.series["l2"], A.transitions(trace.hidden)["l2"])
    assert len(r.albert.calls.calls) == albert.model.config.num_hidden_layers and r.albert.calls.distinct_storages == 1
    assert r.bert.calls.distinct_storages == bert.model.config.num_hidden_layers
    assert r.albert.turn[0] <= r.albert.turn[1]
    u = r.unrolled
    layers = albert.model.config.num_hidden_layers
    assert u.applications == A.DEFAULTS.repeat * layers and len(u.steps["l2"]) == u.applications
    assert u.check < 1e-5 and u.summary["trend"] in ("settling", "slowing", "not settling")
    assert len(r.albert.path["extra"]) == u.applications - layers  # the unrolled applications past L
    assert r.bert.path["extra"] is None


def test_run_caches_the_forward_passes_and_the_slider_runs_only_the_rounds_it_adds(models):
    cache = CountingCache()
    A.run(models, A.Inputs(), cache)
    assert sorted(cache.calls) == ["forward", "forward"] + ["unrolled"] * A.DEFAULTS.repeat  # L applications a round
    A.run(models, A.Inputs(measure="cosine", word=5), cache)  # measure and word: no model runs again
    A.run(models, A.Inputs(repeat=1), cache)  # down: every round is cached
    assert len(cache.calls) == 2 + A.DEFAULTS.repeat
    A.run(models, A.Inputs(repeat=A.DEFAULTS.repeat + 1), cache)  # up by one: one more round
    assert len(cache.calls) == 3 + A.DEFAULTS.repeat
    r = A.run(models, A.Inputs(repeat=1, measure="cosine"), cache)
    assert r.unrolled.summary is None and len(r.unrolled.steps["l2"]) == r.albert.layers
    assert torch.equal(r.albert.similarity, A.run(models, A.Inputs(measure="cosine")).albert.similarity)


@pytest.mark.parametrize("text", ["", "  \n\t "])
def test_an_empty_text_stops_with_a_message(models, text):
    with pytest.raises(Stop) as stop:
        A.run(models, A.Inputs(text=text))
    assert "empty" in stop.value.note.text


def test_words_count_from_zero_and_a_word_beyond_the_text_is_its_last_content_word(models):
    r = A.run(models, A.Inputs(word=0))
    assert r.word == 0 and r.albert.tokens[r.albert.piece].lstrip("▁").lower() == "the"
    r = A.run(models, A.Inputs(word=40))
    assert r.words[r.word] == "park" and r.word == len(r.words) - 2  # not the full stop
    assert any("Word 40" in n.text and "park" in n.text for n in r.notes)


def test_unknown_pieces_show_the_unknown_token_itself(models):
    text = "猫が好き 🐱 שלום and the <b>red</b> ball"
    r = A.run(models, A.Inputs(text=text))
    for loaded in models.values():
        unk = loaded.tokenizer.unk_token
        if loaded.tokenizer.unk_token_id in txt.tokenize(loaded.tokenizer, text).ids:
            assert any(f"`{unk}`" in n.text for n in r.notes), unk
    assert not any("&lt;" in n.text or "&gt;" in n.text for n in r.notes)


def test_a_long_text_is_cut_to_each_models_limit_and_says_so(models):
    text = " ".join(["the little girl found a red ball"] * 60)
    r = A.run(models, A.Inputs(text=text, word=400))
    for view, loaded in ((r.albert, models["albert"]), (r.bert, models["bert"])):
        limit = min(A.max_tokens(loaded.model), txt.token_limit(loaded.tokenizer))
        assert len(view.tokens) == limit
        assert any(n.level == "warning" and n.text.startswith(view.name) and str(limit) in n.text for n in r.notes)
        assert view.piece is None and view.path is None  # word 400 lies past what either model read
    assert sum("no word piece for word 400" in n.text for n in r.notes) == 2


def test_the_unrolled_step_sizes_log_axis_is_labelled_one_two_five():
    """plotly's own log ticks label 0.9, 0.8, ... as "9 8 7" (its digit style), which read as 9, 8, 7 on a
    projector: the axis has explicit 1-2-5 ticks over the data's range."""
    from app.figures.albert_activations import one_two_five

    assert one_two_five([8.6, 2.3, 0.55]) == [0.5, 1.0, 2.0, 5.0, 10.0]
    assert one_two_five([0.01, 0.2]) == [0.01, 0.02, 0.05, 0.1, 0.2]
    assert one_two_five([0, None]) == []


def test_the_shared_layers_intro_does_not_call_it_an_iterative_settling_while_quoting_oscillating():
    quoted = "oscillating rather than converging"
    assert quoted in A.INTRO and quoted in A.layers_story.__doc__  # what the paper reports, said the same way
    for said in (A.INTRO, *A.TRENDS.values()):
        assert "one step of an iterative process" not in said
        assert "settling towards a fixed point" not in said  # only what this block does past L, measured
    assert "past L" in A.TRENDS["settling"] and "did not ask" in A.INTRO
    assert set(A.TRENDS) == {"settling", "slowing", "not settling"}  # every trend unroll's summary can give
