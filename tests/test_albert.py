"""app/albert.py: similarity measures (cosine, linear CKA), per-layer statistics, that ALBERT's layers
really share one block, unrolling the shared block, PCA trajectories, and the activation figures."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app import albert as A
from app.figures import albert as figs

FAST = settings(max_examples=25, deadline=None)
TEXT = A.DEFAULTS.text


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
    cfg = AlbertConfig(vocab_size=60, embedding_size=8, hidden_size=16, num_hidden_layers=layers,
                       num_hidden_groups=groups, num_attention_heads=2, intermediate_size=24,
                       max_position_embeddings=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                       attn_implementation="eager")
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
    inputs, *_ = A.encode(albert.tokenizer, TEXT, 64)
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

    inputs, *_ = A.encode(bert.tokenizer, TEXT, 64)
    log = A.count_layer_calls(bert.model, inputs)
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
    inputs, *_ = A.encode(albert.tokenizer, TEXT, 64)
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


def test_words_tokens_and_truncation(bundled):
    albert = bundled("albert")
    inputs, tokens, offsets, n_full = A.encode(albert.tokenizer, TEXT, 6)
    assert inputs["input_ids"].shape == (1, 6) and len(tokens) == len(offsets) == 6 and n_full > 6
    words = A.word_spans("The little girl, 42 times!")
    assert [w for w, *_ in words] == ["The", "little", "girl", "42", "times"]
    offsets = [(0, 0), (0, 3), (4, 7), (7, 10), (0, 0)]
    assert A.token_for_span(offsets, 4, 10) == 2
    assert A.token_for_span(offsets, 20, 25) is None
    assert A.model_limit(albert.model, albert.tokenizer, cap=10_000) == albert.model.config.max_position_embeddings


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
    fig = figs.similarity_heatmaps({"ALBERT": m, "BERT": A.cosine_matrix(h)}, "cka")
    assert torch.allclose(torch.tensor([list(r) for r in fig.data[0].z]), m)
    assert fig.data[0].zmax == 1.0

    s = A.steps(h, 2)
    fig = figs.unroll_figure(s, 2)
    assert list(fig.data[0].y) == pytest.approx(s["l2"].tolist())
    assert list(fig.data[1].y) == pytest.approx(s["cosine_to_reference"].tolist())

    t = A.trajectory(h, 1, extra=h[:2])
    fig = figs.trajectory_figure({"ALBERT": t}, "girl")
    assert list(fig.data[1].x) == pytest.approx(t["path"][:, 0].tolist())
    assert len(fig.data[2].x) == 3  # the last depth, then two unrolled points
