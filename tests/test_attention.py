"""app/lessons/attention.py and app/figures/attention.py: attentions from every variant, mean and rollout."""

import json
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.lessons import attention
from app.core import text
from app.figures import attention as figures
from app.figures.attention import attention_heatmap
from app.core.lesson import Stop
from app.models import catalogue
from tests.conftest import require_bundled

VARIANTS = list(catalogue.CATALOGUE)
TEXT = "The little girl found a red ball in the park."


def needs_bundled(key):
    require_bundled(key)


# ----------------------------------------------------------------------------- aggregation


@st.composite
def attentions(draw):
    """Random row-stochastic attentions (layers, heads, T, T), like a softmax's output."""
    layers, heads, length = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 7))
    seed = draw(st.integers(0, 2**32 - 1))
    logits = np.random.default_rng(seed).normal(scale=3.0, size=(layers, heads, length, length))
    att = np.exp(logits)
    return att / att.sum(-1, keepdims=True)


@settings(max_examples=60, deadline=None)
@given(attentions())
def test_every_aggregate_has_rows_that_sum_to_one(att):
    layers, heads, length, _ = att.shape
    per_layer = attention.mean_over_heads(att)
    assert per_layer.shape == (layers, length, length)
    np.testing.assert_allclose(per_layer.sum(-1), 1.0, atol=1e-9)
    overall = attention.mean_attention(att)
    np.testing.assert_allclose(overall.sum(-1), 1.0, atol=1e-9)
    np.testing.assert_allclose(overall, per_layer.mean(0), atol=1e-12)
    for upto in range(1, layers + 1):
        rolled = attention.rollout(att, upto=upto)
        assert rolled.shape == (length, length) and (rolled >= 0).all()
        np.testing.assert_allclose(rolled.sum(-1), 1.0, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_residual_attention_renormalises_any_nonnegative_rows(length, residual, seed):
    weights = np.random.default_rng(seed).uniform(0.01, 5.0, size=(length, length))  # rows need not sum to 1
    mixed = attention.residual_attention(weights, residual)
    np.testing.assert_allclose(mixed.sum(-1), 1.0, atol=1e-9)


def test_rollout_matches_a_hand_computation_on_two_layers_and_three_tokens():
    # Layer 1: two heads whose mean is A1 = [[1, 0, 0], [.5, .5, 0], [0, 0, 1]].
    layer1 = [[[1, 0, 0], [1, 0, 0], [0, 0, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]]
    # Layer 2: both heads are the cyclic shift A2 (token i looks at token i + 1).
    shift = [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
    att = np.array([layer1, [shift, shift]], dtype=float)  # (2 layers, 2 heads, 3, 3)
    # By hand: Â = 0.5·A + 0.5·I (rows already sum to 1), rollout = Â2 @ Â1.
    a1_hat = np.array([[1, 0, 0], [0.25, 0.75, 0], [0, 0, 1]])
    a2_hat = np.array([[0.5, 0.5, 0], [0, 0.5, 0.5], [0.5, 0, 0.5]])
    expected = np.array([[0.625, 0.375, 0.0], [0.125, 0.375, 0.5], [0.5, 0.0, 0.5]])
    np.testing.assert_allclose(a2_hat @ a1_hat, expected)
    np.testing.assert_allclose(attention.rollout(att, upto=1), a1_hat)
    np.testing.assert_allclose(attention.rollout(att), expected)
    np.testing.assert_allclose(attention.mean_attention(att), (np.array(layer1).mean(0) + np.array(shift)) / 2)


def test_rollout_edge_cases():
    eye = np.broadcast_to(np.eye(4), (3, 2, 4, 4))
    np.testing.assert_allclose(attention.rollout(eye), np.eye(4))  # attending to oneself keeps tokens apart
    uniform = np.full((2, 1, 4, 4), 0.25)
    plain = attention.rollout(uniform, residual=0.0)  # no residual: the plain product of the layers
    np.testing.assert_allclose(plain, uniform[1, 0] @ uniform[0, 0])
    with pytest.raises(ValueError):
        attention.rollout(uniform, upto=3)
    with pytest.raises(ValueError):
        attention.mean_attention(np.ones((4, 4)))


# ----------------------------------------------------------------------------- every bundled variant


def lesson(loaded, **inputs) -> attention.Result:
    return attention.run({loaded.variant.key: loaded}, attention.Inputs(variant=loaded.variant.key, **inputs))


@pytest.mark.parametrize("key", VARIANTS)
def test_attentions_from_every_variant_have_the_right_shape(bundled, key):
    needs_bundled(key)
    loaded = bundled(key)
    r = lesson(loaded, text=TEXT, text_b="She was happy.")
    config = loaded.model.config
    length = len(r.tokens)
    assert r.attentions.shape == (config.num_hidden_layers, config.num_attention_heads, length, length)
    assert r.attentions.dtype == np.float32
    np.testing.assert_allclose(r.attentions.sum(-1), 1.0, atol=1e-4)  # rows = queries, over the keys
    assert r.pair and 0 < r.encoded.sentence_b_start < length
    if key != "modernbert":  # its local layers see a window only
        # No padding and no masks: every query sees every key (XLNet's content stream includes itself).
        assert (r.attentions > 0).all()
    np.testing.assert_allclose(r.weights.sum(-1), 1.0, atol=1e-5)  # the rollout map


def test_xlnet_attentions_come_back_as_batch_heads_queries_keys(bundled):
    needs_bundled("xlnet")
    import torch

    loaded = bundled("xlnet")
    enc = loaded.tokenizer(["The little girl found a red ball."], return_tensors="pt")
    with torch.no_grad():
        out = loaded.model(**enc, output_attentions=True)  # no target_mapping: the content stream only
    length = enc["input_ids"].shape[1]
    assert all(torch.is_tensor(a) for a in out.attentions)  # with target_mapping they would be (content, query) pairs
    assert out.attentions[0].shape == (1, loaded.model.config.n_head, length, length)
    torch.testing.assert_close(out.attentions[0].sum(-1), torch.ones(1, loaded.model.config.n_head, length))


@pytest.mark.parametrize(
    "key,expected",
    [
        ("bert", True),
        ("roberta", False),
        ("albert", True),
        ("distilbert", False),
        ("electra-generator", True),
        ("electra-discriminator", True),
        ("xlnet", True),
        ("deberta", False),
        ("modernbert", False),
    ],
)
def test_which_variants_read_token_types(bundled, key, expected):
    needs_bundled(key)
    assert attention.uses_token_types(bundled(key).model) is expected


@pytest.mark.parametrize(
    "key,template",
    [
        ("bert", "[CLS] A [SEP] B [SEP]"),
        ("roberta", "<s> A </s> </s> B </s>"),
        ("albert", "[CLS] A [SEP] B [SEP]"),
        ("distilbert", "[CLS] A [SEP] B [SEP]"),
        ("xlnet", "A <sep> B <sep> <cls>"),
    ],
)
def test_pairs_use_the_tokenizers_own_format_and_segments(bundled, key, template):
    needs_bundled(key)
    loaded = bundled(key)
    enc = attention.encode(loaded.tokenizer, loaded.model, TEXT, "She was happy.")
    assert enc.template == template
    b = enc.sentence_b_start
    if enc.token_type_ids is None:
        assert not attention.uses_token_types(loaded.model)
    else:
        assert set(enc.token_type_ids[:b]) == {0} and enc.token_type_ids[b] == 1
        if key == "xlnet":
            assert enc.token_type_ids[-1] == 2  # XLNet's <cls> has its own segment
    single = attention.encode(loaded.tokenizer, loaded.model, TEXT)
    assert single.sentence_b_start is None and "B" not in single.template.split()
    assert enc.tokens == tuple(loaded.tokenizer.convert_ids_to_tokens(list(enc.input_ids)))


def test_empty_long_and_emoji_input(bundled):
    needs_bundled("bert")
    loaded = bundled("bert")
    tok = loaded.tokenizer
    for blank in ("", "   ", "\n\t"):
        with pytest.raises(ValueError, match="empty"):
            attention.encode(tok, loaded.model, blank)
        with pytest.raises(Stop):
            lesson(loaded, text=blank)
    long = attention.encode(tok, loaded.model, "the ball is red. " * 200, max_tokens=16)
    assert len(long.input_ids) == 16 == long.cap and long.n_full > 16 and long.truncated
    assert long.tokens[0] == "[CLS]" and long.tokens[-1] == "[SEP]"
    capped = attention.encode(tok, loaded.model, "the ball is red. " * 200, max_tokens=10_000)
    assert capped.cap == attention.model_limit(tok, loaded.model) == len(capped.input_ids)
    pair = attention.encode(tok, loaded.model, "the ball is red. " * 50, "she was happy.", max_tokens=20)
    assert len(pair.input_ids) == 20 and pair.sentence_b_start is not None  # the longer sentence was cut
    r = lesson(loaded, text="the ball is red. " * 50, max_tokens=16)
    assert r.notes[0].level == "warning" and "16" in r.notes[0].text and len(r.tokens) == 16
    # unknown pieces and typed special tokens are named by their real cause, per sentence
    r = lesson(loaded, text="🎈 The ball 🐶 猫", text_b=f"she {tok.mask_token} it")
    assert tok.unk_token in r.tokens
    shown = " ".join(n.text for n in r.notes)
    assert text.md(tok.unk_token) in shown and "🎈" in shown and "猫" in shown and text.md(tok.mask_token) in shown
    assert "Sentence A:" in shown and "Sentence B:" in shown
    only_emoji = lesson(loaded, text="🎈🎈🎈")
    np.testing.assert_allclose(only_emoji.attentions.sum(-1), 1.0, atol=1e-4)


def test_layer_and_head_beyond_the_model_are_moved_into_range_with_a_note(bundled):
    needs_bundled("bert")
    loaded = bundled("bert")
    r = lesson(loaded, layer=64, head=64, agg="layer")
    assert r.layer == r.n_layers and r.head == 0
    assert sum(f"{r.n_layers} layers" in n.text or f"{r.n_heads} heads" in n.text for n in r.notes) == 2
    np.testing.assert_allclose(r.weights, attention.mean_over_heads(r.attentions)[-1])
    one = lesson(loaded, layer=2, head=3, agg="layer")
    np.testing.assert_array_equal(one.weights, one.attentions[1, 2])
    assert one.what == "layer 2, head 3" and not one.notes
    np.testing.assert_allclose(lesson(loaded, agg="mean").weights, attention.mean_attention(one.attentions))


def test_map_layer_head_and_view_never_rerun_the_model(bundled, monkeypatch):
    """The forward pass runs once per input (as ui.cache does, keyed by args); bertviz's document is drawn from the
    Result by the figure module, once per view: an equal Result, run again, finds the one kept."""
    from app.figures import bertviz_offline

    drawn = []
    real = bertviz_offline.render
    monkeypatch.setattr(bertviz_offline, "render", lambda *a, **k: drawn.append(a[0]) or real(*a, **k))
    monkeypatch.setattr(figures, "_documents", type(figures._documents)())
    needs_bundled("bert")
    loaded = bundled("bert")
    memo, ran = {}, []

    def cache(step, *args):
        key = (
            step.__name__,
            *(id(a) if hasattr(a, "model") else a.tobytes() if hasattr(a, "tobytes") else a for a in args),
        )
        if key not in memo:
            ran.append(step.__name__)
            memo[key] = step(*args)
        return memo[key]

    models = {"bert": loaded}
    first = figures.key_figure(attention.run(models, attention.Inputs(), cache))
    for agg in ("layer", "mean", "rollout"):
        again = figures.key_figure(attention.run(models, attention.Inputs(agg=agg), cache))
        assert again.html is first.html  # the document kept, not written again
    model_view = figures.key_figure(attention.run(models, attention.Inputs(view="model", layer=2), cache))
    assert ran.count("attentions_of") == 1 and drawn == ["head", "model"]
    assert '"total_heads":' in model_view.html and '"total_heads":' not in first.html
    attention.run(models, attention.Inputs(text_b="She was happy."), cache)
    assert ran.count("attentions_of") == 2


def test_the_document_is_bertvizs_view_of_exactly_these_attentions(bundled):
    needs_bundled("bert")
    from tests.test_bertviz_offline import params_in

    r = lesson(bundled("bert"), view="model", text_b="She was happy.")
    params = params_in(figures.document(r))
    assert params["include_layers"] == list(r.layers_sent) == list(range(1, r.n_layers + 1))
    assert params["total_heads"] == r.n_heads and len(params["attention"]) == 5  # All, A->A, B->B, A->B, B->A
    np.testing.assert_allclose(np.array(params["attention"][0]["attn"]), r.attentions, atol=6e-4)  # 3 decimals
    assert r.height > 0


# --------------------------------------------------------------------------- variants whose checkpoints are on the way


def tiny(key: str):
    """A tiny DeBERTa or ModernBERT built from a config (their bundled checkpoints may not exist yet), with the
    bundled RoBERTa tokenizer (byte-level BPE, like theirs), wrapped as a loaded catalogue variant."""
    needs_bundled("roberta")
    import torch
    from transformers import AutoTokenizer, DebertaConfig, DebertaForMaskedLM, ModernBertConfig, ModernBertForMaskedLM

    from app.models.loading import Loaded

    variant = catalogue.get(key)
    tok = AutoTokenizer.from_pretrained(catalogue.get("roberta").bundled_path)
    torch.manual_seed(0)
    common = dict(
        vocab_size=len(tok),
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        pad_token_id=tok.pad_token_id,
    )
    if key == "deberta":
        model = DebertaForMaskedLM(
            DebertaConfig(
                num_hidden_layers=2, type_vocab_size=0, relative_attention=True, pos_att_type=["c2p", "p2c"], **common
            )
        )
    else:
        model = ModernBertForMaskedLM(
            ModernBertConfig(num_hidden_layers=3, local_attention=4, global_attn_every_n_layers=3, **common)
        )
    model.set_attn_implementation("eager")
    return Loaded(variant, model.eval(), tok, "bundled", "a config", "cpu", "float32", 0.0)


@pytest.mark.parametrize("key", ["deberta", "modernbert"])
def test_the_new_variants_run_through_the_lesson(key):
    loaded = tiny(key)
    r = lesson(loaded, text=TEXT, text_b="She was happy.")
    length = len(r.tokens)
    assert r.attentions.shape == (loaded.model.config.num_hidden_layers, 2, length, length)
    np.testing.assert_allclose(r.attentions.sum(-1), 1.0, atol=1e-4)
    assert not r.reads_token_types and r.pair and figures.document(r)
    assert any(r.label in n.text for n in r.notes)  # its family note
    if key == "modernbert":
        far = np.abs(np.arange(length)[:, None] - np.arange(length)[None, :]) > 2  # beyond local_attention / 2
        assert (r.attentions[1:, :, far] == 0).all() and (r.attentions[0, :, far] > 0).all()


def test_stack_attentions_refuses_missing_attentions():
    with pytest.raises(RuntimeError, match="eager"):
        attention.stack_attentions(())


# ----------------------------------------------------------------------------- figure


def test_heatmap_carries_the_exact_weights_and_escaped_tokens():
    att = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 2, 4))  # (2, 2, 4, 4)
    weights = attention.rollout(att)
    tokens = ["[CLS]", "Ġball", "</script><b>x</b>", "[SEP]"]
    fig = attention_heatmap(SimpleNamespace(weights=weights, tokens=tokens, label="rollout", what="<i>"))
    np.testing.assert_array_equal(np.array(fig.data[0].z), weights)
    assert list(fig.data[0].customdata[1][2]) == ["ball", "&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;", 1, 2]  # from, to
    assert list(fig.layout.yaxis.ticktext) == ["[CLS]", "ball", "&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;", "[SEP]"]
    assert "%{z:.6f}" in fig.data[0].hovertemplate and "customdata[0]" in fig.data[0].hovertemplate
    assert "<i>" not in fig.layout.title.text
    exported = json.loads(fig.to_json())  # what the browser gets; its camera button saves PNG/SVG from it
    assert exported["data"][0]["type"] == "heatmap"
    with pytest.raises(ValueError):
        attention_heatmap(SimpleNamespace(weights=weights, tokens=tokens[:3], label="wrong", what="size"))
