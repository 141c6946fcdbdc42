"""app/lessons/xlnet.py and app/figures/xlnet.py: the permutation masks against their definition, typed orders,
the real bundled XLNet under those masks (no leak, attention zero where blocked, the context-free
target), with a masked LM beside it, and the lesson's run (what the page shows). No sizes are pinned:
the bundled checkpoints are retrained from time to time."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app import mlm
from app.core import text
from app.lessons import xlnet
from app.core.lesson import Stop
from app.figures import xlnet as figures

TEXT = "The little girl found a red ball in the park."


def definition(order, n_targets, length, specials_visible=True) -> torch.Tensor:
    """perm_mask written out cell by cell from the words of the definition (1 = may NOT attend)."""
    targets = list(order)[len(order) - n_targets :]
    step = {p: k for k, p in enumerate(targets)}
    mask = torch.zeros(length, length)
    for i in range(length):
        for j in range(length):
            if j in step:  # a target is seen only by the targets after it in the order
                sees = i in step and step[j] < step[i]
            elif j not in order and not specials_visible:  # <sep> <cls> hidden from the targets
                sees = i not in step
            else:  # context: seen by everyone
                sees = True
            mask[i, j] = 0.0 if sees else 1.0
    return mask


cases = st.integers(1, 14).flatmap(
    lambda n: st.tuples(st.permutations(list(range(n))), st.integers(0, n), st.integers(0, 3), st.booleans())
)


# ----------------------------------------------------------------------------- masks


@settings(max_examples=80, deadline=None)
@given(cases)
def test_masks_from_a_random_order_match_the_definition(case):
    order, n_targets, n_specials, specials_visible = case
    length = len(order) + n_specials
    masks = xlnet.masks_from_order(order, n_targets, length, specials_visible)
    assert masks.perm_mask.shape == (length, length)
    assert torch.equal(masks.perm_mask, definition(order, n_targets, length, specials_visible))
    assert masks.targets == tuple(order[len(order) - n_targets :])
    assert masks.context == tuple(order[: len(order) - n_targets])
    # the two streams differ exactly on the targets' diagonal
    eye = torch.eye(length)
    assert torch.equal(masks.content_mask, masks.perm_mask * (1 - eye))
    assert torch.equal(masks.query_mask, masks.perm_mask)
    diff = (masks.query_mask != masks.content_mask).nonzero().tolist()
    assert sorted(diff) == sorted([[t, t] for t in masks.targets])
    # target_mapping: one-hot rows, row k = the k-th target in the order
    assert masks.target_mapping.shape == (n_targets, length)
    assert torch.equal(masks.target_mapping.sum(-1), torch.ones(n_targets))
    assert masks.target_mapping.argmax(-1).tolist() == list(masks.targets)
    # query stream, in words: a target sees an earlier target, never itself or a later one
    for a, t in enumerate(masks.targets):
        for b, u in enumerate(masks.targets):
            assert masks.query_mask[t, u] == (0 if b < a else 1)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 16), st.integers(1, 8), st.integers(0, 10_000))
def test_same_masks_as_the_training_recipe_for_the_same_draw(n, k, seed):
    length = n + 2  # content, then <sep> <cls>
    maskable = torch.zeros(1, length, dtype=torch.bool)
    maskable[0, :n] = True
    perm_mask, target_mapping, target_pos = xlnet.partial_prediction_masks(
        maskable, k, torch.Generator().manual_seed(seed)
    )
    order = xlnet.make_order("random", n, seed)  # the recipe's first draw is the same randperm
    masks = xlnet.masks_from_order(order, xlnet.n_targets_for(n, k=k), length)
    assert torch.equal(masks.perm_mask, perm_mask[0])
    by_position = masks.target_mapping[masks.target_mapping.argmax(-1).argsort()]  # the recipe sorts by position
    assert torch.equal(by_position, target_mapping[0, : len(masks.targets)])
    assert sorted(masks.targets) == target_pos[0, : len(masks.targets)].tolist()


def test_stream_masks_follow_padding_like_the_model():
    perm_mask = torch.zeros(1, 4, 4)
    perm_mask[0, 3, 2] = 1
    attention_mask = torch.tensor([[0, 1, 1, 1]])  # left padding, as XLNet pads
    query = xlnet.query_stream_mask(perm_mask, attention_mask)
    content = xlnet.content_stream_mask(perm_mask, attention_mask)
    assert query[0, :, 0].tolist() == [1, 1, 1, 1]  # nobody attends to the padding
    assert content[0, :, 0].tolist() == [0, 1, 1, 1]  # ... except its own content (as XLNetModel builds it)
    assert query[0, 3, 2] == 1 and content[0, 3, 2] == 1
    assert query[0, 3, 3] == 0  # perm_mask's own diagonal decides the query stream


def test_a_target_with_nothing_visible_is_flagged():
    hidden = xlnet.masks_from_order([2, 0, 1], 3, 5, specials_visible=False)
    assert xlnet.context_free_targets(hidden) == [2]
    assert hidden.query_mask[2].tolist() == [1, 1, 1, 1, 1]
    assert xlnet.visible(hidden.content_mask, 2) == [2]  # its content stream still sees itself
    assert xlnet.context_free_targets(xlnet.masks_from_order([2, 0, 1], 3, 5)) == []  # sees <sep> <cls>
    assert xlnet.context_free_targets(xlnet.masks_from_order([2, 0, 1], 2, 5, specials_visible=False)) == []


def test_masks_from_order_rejects_a_non_permutation():
    for bad in ([0, 0, 1], [0, 5]):
        with pytest.raises(ValueError):
            xlnet.masks_from_order(bad, 1, 4)


# ----------------------------------------------------------------------------- orders


def test_parse_order_accepts_spaces_and_commas():
    assert xlnet.parse_order("3 1 4 2 0", 5) == [3, 1, 4, 2, 0]
    assert xlnet.parse_order(" 3, 1,4 2  0 ", 5) == [3, 1, 4, 2, 0]


@pytest.mark.parametrize(
    "typed, n, words",
    [
        ("", 5, ["empty", "0 to 4"]),
        ("   ", 5, ["empty"]),
        ("0 0 1", 3, ["0 appears more than once"]),
        ("2 0 2 1 1", 3, ["1, 2 appear more than once"]),
        ("0 1 5", 3, ["5 is out of range", "3 pieces", "0 to 2"]),
        ("-1 0 1", 3, ["-1 is out of range"]),
        ("0 1", 3, ["2 is missing", "not a permutation"]),
        ("0 x 1", 3, ["`x` is not a piece number"]),
        ("1.5 0", 2, ["`1.5` is not a piece number"]),
        ("0", 0, ["no pieces"]),
    ],
)
def test_parse_order_says_what_is_wrong(typed, n, words):
    with pytest.raises(xlnet.OrderError) as e:
        xlnet.parse_order(typed, n)
    for w in words:
        assert w in str(e.value)


@given(st.integers(1, 30).flatmap(lambda n: st.permutations(list(range(n)))))
def test_every_permutation_parses_to_itself(order):
    assert xlnet.parse_order(" ".join(map(str, order)), len(order)) == list(order)


@given(st.lists(st.integers(-3, 12), min_size=1, max_size=14), st.integers(1, 10))
def test_anything_but_a_permutation_is_refused(nums, n):
    typed = " ".join(map(str, nums))
    if sorted(nums) == list(range(n)):
        assert xlnet.parse_order(typed, n) == nums
    else:
        with pytest.raises(xlnet.OrderError):
            xlnet.parse_order(typed, n)


def test_make_order_kinds_and_seeds():
    assert xlnet.make_order("left-to-right", 4) == [0, 1, 2, 3]
    assert xlnet.make_order("right-to-left", 4) == [3, 2, 1, 0]
    assert xlnet.make_order("typed", 3, typed="2 0 1") == [2, 0, 1]
    a = xlnet.make_order("random", 12, seed=7)
    assert a == xlnet.make_order("random", 12, seed=7) and sorted(a) == list(range(12))
    assert a != xlnet.make_order("random", 12, seed=8)


def test_n_targets_is_the_last_1_over_k_or_a_clipped_count():
    assert xlnet.n_targets_for(11, k=6) == 2 and xlnet.n_targets_for(12, k=6) == 2 and xlnet.n_targets_for(13, k=6) == 3
    assert xlnet.n_targets_for(5, k=1) == 5 and xlnet.n_targets_for(5, k=24) == 1
    assert xlnet.n_targets_for(5, count=9) == 5 and xlnet.n_targets_for(5, count=0) == 1
    assert xlnet.n_targets_for(0, k=6) == 0


def test_overlapping_spans():
    assert xlnet.overlapping([(0, 3), (4, 10), (5, 5)], [(0, 0), (0, 3), (4, 6), (6, 10), (10, 11)]) == [
        [1],
        [2, 3],
        [],
    ]


# ----------------------------------------------------------------------------- the real model


def _forward(loaded, ids, masks):
    return xlnet.permutation_forward(loaded.model, ids, masks)


def _other_id(tok, current: int) -> int:
    replacement = tok.convert_tokens_to_ids("▁dog")
    if replacement in (current, tok.unk_token_id):
        replacement = tok.convert_tokens_to_ids("▁cat")
    return replacement


def test_pieces_put_sep_cls_at_the_end_and_cap_long_text(bundled):
    tok = bundled("xlnet").tokenizer
    p = xlnet.xlnet_pieces(tok, TEXT)
    assert p.pieces[-2:] == ("<sep>", "<cls>") and p.ids[-2:] == (tok.sep_token_id, tok.cls_token_id)
    assert not p.capped and p.n_content == len(p.ids) - 2 and p.kept_chars == len(TEXT)
    assert TEXT[slice(*p.spans[2])] in p.pieces[2]
    long = xlnet.xlnet_pieces(tok, " ".join([TEXT] * 6))
    assert long.n_content == xlnet.DEFAULTS.max_pieces and long.capped and long.n_before_cap > long.n_content
    sneaky = xlnet.xlnet_pieces(tok, "<sep> hi <cls>")
    assert set(sneaky.dropped_controls) == {"<sep>", "<cls>"} and "<sep>" not in sneaky.pieces[: sneaky.n_content]
    assert xlnet.xlnet_pieces(tok, "   ").n_content == 0
    emoji = xlnet.xlnet_pieces(tok, "A 😀 cat")  # unknown characters stay, as <unk>, with their span
    assert not emoji.dropped_controls and tok.unk_token in emoji.pieces
    assert any("😀" in "A 😀 cat"[a:b] for (a, b), piece in zip(emoji.spans, emoji.pieces) if piece == tok.unk_token)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_changing_a_target_changes_only_the_predictions_after_it(bundled, seed):
    """No leak: a target's own prediction and those before it in the order ignore its token."""
    loaded = bundled("xlnet")
    p = xlnet.xlnet_pieces(loaded.tokenizer, TEXT)
    order = xlnet.make_order("random", p.n_content, seed)
    masks = xlnet.masks_from_order(order, p.n_content - 2 + seed % 2, len(p.ids))  # most pieces are targets
    base = _forward(loaded, p.ids, masks).probs  # (P, V)
    for s, t in enumerate(masks.targets):
        ids = list(p.ids)
        ids[t] = _other_id(loaded.tokenizer, ids[t])
        changed = _forward(loaded, ids, masks).probs
        for r in range(len(masks.targets)):
            delta = float((changed[r] - base[r]).abs().max())
            if r <= s:
                assert delta < 1e-6, f"target {r} moved by {delta} when target {s}'s token changed"
            else:
                assert delta > 1e-7, f"target {r} comes after {s} but ignored it"


@pytest.mark.parametrize("seed, specials_visible", [(0, True), (3, True), (5, False)])
def test_attention_the_model_used_is_zero_where_the_masks_block(bundled, seed, specials_visible):
    loaded = bundled("xlnet")
    p = xlnet.xlnet_pieces(loaded.tokenizer, TEXT)
    masks = xlnet.masks_from_order(xlnet.make_order("random", p.n_content, seed), 4, len(p.ids), specials_visible)
    out = _forward(loaded, p.ids, masks)
    layers = loaded.model.config.n_layer
    assert out.content_attentions.shape[:2] == out.query_attentions.shape[:2] == (layers, loaded.model.config.n_head)
    # read directly from the attentions: blocked cells are exactly zero, visible ones carry the mass
    assert float(out.content_attentions[:, :, masks.content_mask.bool()].abs().max()) == 0.0
    rows = list(masks.targets)
    q = out.query_attentions[:, :, rows]  # (L, H, P, T)
    assert float(q[:, :, masks.query_mask[rows].bool()].abs().max()) == 0.0
    assert torch.allclose(q.sum(-1), torch.ones_like(q.sum(-1)), atol=1e-5)
    checks = xlnet.attention_check(out, masks)
    assert len(checks) == 2 * layers
    assert all(c["max prob on a blocked cell"] == 0.0 and c["min prob mass on visible cells"] > 0.9999 for c in checks)
    assert all(c["rows"] == 4 for c in checks if c["stream"] == "query")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_runs_and_still_blocks(bundled, dtype):
    """transformers 5.23 keeps XLNet's position embedding in float32; permutation_forward autocasts."""
    import copy

    loaded = bundled("xlnet")
    model = copy.deepcopy(loaded.model).to(dtype)  # a copy: the shared model is never mutated
    p = xlnet.xlnet_pieces(loaded.tokenizer, TEXT)
    masks = xlnet.masks_from_order(xlnet.make_order("random", p.n_content, 1), 3, len(p.ids))
    out = xlnet.permutation_forward(model, p.ids, masks)
    assert out.probs.dtype == torch.float32 and torch.isfinite(out.probs).all()
    assert all(c["max prob on a blocked cell"] == 0.0 for c in xlnet.attention_check(out, masks))


def test_a_target_first_with_nothing_visible_attends_uniformly_and_would_leak(bundled):
    """Why the page does not show a guess for it: the fully blocked softmax is uniform, own content included."""
    loaded = bundled("xlnet")
    p = xlnet.xlnet_pieces(loaded.tokenizer, TEXT)
    n, length = p.n_content, len(p.ids)
    masks = xlnet.masks_from_order(list(range(n)), n, length, specials_visible=False)
    assert xlnet.context_free_targets(masks) == [0]
    out = _forward(loaded, p.ids, masks)
    assert torch.allclose(out.query_attentions[:, :, 0], torch.full_like(out.query_attentions[:, :, 0], 1 / length))
    checks = [c for c in xlnet.attention_check(out, masks) if c["stream"] == "query"]
    assert all(c["context-free rows"] == 1 and c["max distance from uniform"] < 1e-6 for c in checks)
    assert all(c["max prob on a blocked cell"] == 0.0 for c in checks)  # the other target rows are clean
    ids = list(p.ids)
    ids[0] = _other_id(loaded.tokenizer, ids[0])
    leaked = float((_forward(loaded, ids, masks).probs[0] - out.probs[0]).abs().max())
    assert leaked > 1e-7  # its "prediction" depends on its own token: a leak, hence excluded


def test_the_masked_lm_guesses_the_same_words_all_at_once(bundled):
    bert, xl = bundled("bert"), bundled("xlnet")
    p = xlnet.xlnet_pieces(xl.tokenizer, TEXT)
    red, ball = p.pieces.index("▁red"), p.pieces.index("▁ball")
    out = xlnet.masked_lm_all_at_once(bert.model, bert.tokenizer, TEXT, [p.spans[red], p.spans[ball]])
    assert [out.pieces[j] for j in out.masked] == ["red", "ball"]
    assert out.for_target == [[0], [1]]
    assert out.probs.shape == (2, bert.model.config.vocab_size)
    assert torch.allclose(out.probs.sum(-1), torch.ones(2), atol=1e-5)
    assert all(0 <= a <= 1 for a in out.actual)
    # independence: the guess for "ball" cannot depend on the other masked word
    other = TEXT.replace("red", "big")
    p2 = xlnet.xlnet_pieces(xl.tokenizer, other)
    out2 = xlnet.masked_lm_all_at_once(
        bert.model, bert.tokenizer, other, [p2.spans[p2.pieces.index("▁big")], p2.spans[p2.pieces.index("▁ball")]]
    )
    assert torch.allclose(out.probs[1], out2.probs[1], atol=1e-6)


@pytest.mark.trained
def test_trained_xlnet_finishes_a_simple_sentence(bundled):
    loaded = bundled("xlnet")
    p = xlnet.xlnet_pieces(loaded.tokenizer, TEXT)
    park = p.pieces.index("▁park")
    order = [i for i in range(p.n_content) if i != park] + [park]
    masks = xlnet.masks_from_order(order, 1, len(p.ids))
    top = mlm.predictions(_forward(loaded, p.ids, masks).probs, loaded.tokenizer, 5)[0].raw
    assert "▁park" in [piece for piece, _ in top]


# ----------------------------------------------------------------------------- the lesson's run


def models_of(bundled) -> dict:
    return {k: bundled(k) for k in xlnet.MODELS}


def test_a_typed_order_never_breaks_out_of_its_code_span():
    with pytest.raises(xlnet.OrderError) as e:
        xlnet.parse_order("0 `[x](http://e)` 1", 3)
    assert text.md("`[x](http://e)`", 12) in str(e.value) and "`[x]" not in str(e.value)


def test_run_on_the_defaults_shows_the_seeded_order_and_a_clean_check(bundled):
    models = models_of(bundled)
    r = xlnet.run(models, xlnet.Inputs())
    p = xlnet.xlnet_pieces(models["xlnet"].tokenizer, xlnet.DEFAULT_TEXT)
    n = p.n_content
    order = xlnet.make_order("random", n, 0)
    n_targets = xlnet.n_targets_for(n, k=xlnet.DEFAULTS.k)
    assert r.pieces.ids == p.ids and r.masks.order == tuple(order) and r.order_kind == "random" and r.order_note is None
    assert r.n_targets == n_targets and [q.position for q in r.predictions] == order[n - n_targets :]
    assert [q.step for q in r.predictions] == list(range(n - n_targets, n))
    for q in r.predictions:
        assert not q.context_free and len(q.top) == xlnet.DEFAULTS.top_k and 0 <= q.actual <= 1 and q.rank >= 1
        assert q.sees == len(xlnet.visible(r.masks.query_mask, q.position))
        assert q.mlm_masked and len(q.mlm_top) == len(q.mlm_masked) and 0 <= q.mlm_actual <= 1
    config = models["xlnet"].model.config
    assert (r.n_layers, r.n_heads) == (config.n_layer, config.n_head) and len(r.checks) == 2 * config.n_layer
    assert r.worst_blocked == 0.0 and r.least_visible_mass > 0.9999 and r.query_rows == n_targets
    # the map shown is the model's own: the last layer's query stream, mean over heads
    out = xlnet.permutation_forward(models["xlnet"].model, p.ids, r.masks)
    np.testing.assert_allclose(r.attention, out.query_attentions[-1].mean(0).numpy(), atol=1e-6)
    assert r.layer == 0 and r.attention_rows == r.masks.targets
    assert "bundled" in r.xlnet or "xlnet" in r.xlnet
    assert r.notes == ()


def test_top_k_stream_and_layer_only_pick_from_the_cached_forward_passes(bundled):
    """The expensive steps run once; moving a cheap widget re-uses them (as ui.cache does, keyed by args)."""
    models = models_of(bundled)
    memo, ran = {}, []

    def cache(step, *args):
        key = (step.__name__, *(id(a) if hasattr(a, "model") else a for a in args))
        if key not in memo:
            ran.append(step.__name__)
            memo[key] = step(*args)
        return memo[key]

    first = xlnet.run(models, xlnet.Inputs(), cache)
    assert sorted(ran) == ["masked_lm_side", "xlnet_side"]
    again = xlnet.run(models, xlnet.Inputs(top_k=2, stream="content", layer=1), cache)
    assert len(ran) == 2  # nothing recomputed
    assert all(len(q.top) == 2 and q.top == a.top[:2] for q, a in zip(again.predictions, first.predictions))
    assert again.attention_rows == tuple(range(len(first.pieces.ids)))
    np.testing.assert_array_equal(again.attention_mask, first.masks.content_mask.numpy())
    xlnet.run(models, xlnet.Inputs(seed=1), cache)
    assert ran.count("xlnet_side") == 2  # a new order is a new forward pass


def test_run_guards_and_notes_name_the_cause(bundled):
    models = models_of(bundled)
    tok = models["xlnet"].tokenizer
    for blank in ("", "  \n "):
        with pytest.raises(Stop):
            xlnet.run(models, xlnet.Inputs(text=blank))
    with pytest.raises(Stop):
        xlnet.run(models, xlnet.Inputs(text=f"{tok.sep_token} {tok.cls_token}"))
    r = xlnet.run(models, xlnet.Inputs(text=f"The cat {tok.sep_token} sat 😀."))
    shown = " ".join(n.text for n in r.notes)
    assert text.md(tok.sep_token) in shown and tok.sep_token not in r.pieces.pieces[: r.pieces.n_content]
    assert text.md(tok.unk_token) in shown and "😀" in shown
    long = xlnet.run(models, xlnet.Inputs(text=" ".join([TEXT] * 6)))
    assert long.pieces.n_content == xlnet.DEFAULTS.max_pieces and str(xlnet.DEFAULTS.max_pieces) in long.notes[0].text
    many = xlnet.run(models, xlnet.Inputs(split="count", n_targets=xlnet.DEFAULTS.max_pieces, layer=48))
    n = many.pieces.n_content
    assert many.n_targets == n and any(f"only {n} pieces" in note.text for note in many.notes)
    assert many.layer == 0 and any(f"{many.n_layers} layers" in note.text for note in many.notes)


@pytest.mark.parametrize("typed, level", [("", "info"), ("0 0 1", "warning"), ("0 x", "warning")])
def test_an_order_that_is_not_a_permutation_falls_back_to_left_to_right_with_a_note(bundled, typed, level):
    r = xlnet.run(models_of(bundled), xlnet.Inputs(order="typed", typed=typed))
    assert r.order_kind == "left-to-right" and r.masks.order == tuple(range(r.pieces.n_content))
    assert r.order_note.level == level


def test_run_marks_a_target_first_with_nothing_visible_and_gives_no_guess_for_it(bundled):
    r = xlnet.run(
        models_of(bundled),
        xlnet.Inputs(order="left-to-right", split="count", n_targets=xlnet.DEFAULTS.max_pieces, specials=False),
    )
    assert r.free == (0,)
    first, *rest = r.predictions
    assert first.context_free and first.top == () and first.actual is None and first.rank is None
    assert all(not q.context_free and q.top for q in rest)
    assert r.worst_blocked == 0.0 and r.uniform_distance < 1e-6 and r.query_rows == len(rest)


# ----------------------------------------------------------------------------- figures


PIECES = ("▁The", "▁cat", "</script><b>x", "▁sat", "<sep>", "<cls>")


def _all_text(fig) -> str:
    parts = []
    for trace in fig.data:
        if getattr(trace, "text", None) is not None:
            parts += [str(c) for row in trace.text for c in (row if isinstance(row, (list, tuple)) else [row])]
    layout = fig.layout
    for axis in (layout.xaxis, layout.yaxis, layout.xaxis2, layout.yaxis2, layout.xaxis3, layout.yaxis3):
        if axis is not None and axis.ticktext is not None:
            parts += list(axis.ticktext)
    return "\n".join(parts)


def test_stream_masks_figure_holds_exactly_the_masks():
    masks = xlnet.masks_from_order([3, 0, 2, 1], 2, 6)
    fig = figures.stream_masks_figure(xlnet.mask_view(PIECES, masks))
    assert np.array_equal(fig.data[0].z, masks.content_mask.numpy())
    query = np.array(fig.data[1].z, dtype=float)
    for i in range(6):
        if i in masks.targets:
            assert np.array_equal(query[i], masks.query_mask[i].numpy())
        else:
            assert np.isnan(query[i]).all()  # no query stream is computed for context
    assert np.array_equal(fig.data[2].z, masks.target_mapping.numpy())
    text = _all_text(fig)
    assert "&lt;/script&gt;&lt;b&gt;x" in text and "&lt;sep&gt;" in text
    assert "</script>" not in text and "<sep>" not in text and "<b>x" not in text
    assert (
        "When predicting «▁cat» (step 3), it sees «▁The», «&lt;/script&gt;&lt;b&gt;x», «▁sat», «&lt;sep&gt;», "
        "«&lt;cls&gt;»"
    ) in text


def test_stream_masks_titles_fit_over_their_panels():
    """The three subplot titles ran into one another and the third was cut ("…prediction k is po", issue 27):
    each title, at its font, is narrower than its panel at the plot width a 1280-px window gives, so none reaches
    into its neighbour's or out of the figure."""
    masks = xlnet.masks_from_order([3, 0, 2, 1], 2, 6)
    fig = figures.stream_masks_figure(xlnet.mask_view(PIECES, masks))
    titles = [a for a in fig.layout.annotations if a.text in figures.STREAM_TITLES]
    assert len(titles) == 3
    spans = []
    for title, axis in zip(titles, (fig.layout.xaxis, fig.layout.xaxis2, fig.layout.xaxis3)):
        size = title.font.size or 16
        wide = max(len(line) for line in title.text.split("<br>")) * 0.55 * size / figures.STREAM_PLOT_PX  # paper units
        lo, hi = axis.domain
        assert wide <= hi - lo, f"{title.text!r} is wider than its panel"
        spans.append((title.x - wide / 2, title.x + wide / 2))
    assert all(0 <= a and b <= 1 for a, b in spans)
    assert all(spans[k][1] < spans[k + 1][0] for k in range(2))  # no two titles overlap
    assert fig.layout.yaxis3.side == "right"  # target_mapping's row labels stay out of the query panel


def test_order_figure_marks_what_each_step_sees():
    masks = xlnet.masks_from_order([3, 0, 2, 1], 2, 6)  # targets: 2 then 1
    z = np.array(figures.order_figure(xlnet.mask_view(PIECES, masks)).data[0].z)
    assert z.shape == (4, 6)
    H, C, E, OWN = figures.HIDDEN, figures.CONTEXT, figures.EARLIER, figures.OWN
    assert z[2].tolist() == [C, H, OWN, C, C, C]  # step 2 predicts position 2: sees context and specials
    assert z[3].tolist() == [C, OWN, E, C, C, C]  # step 3 predicts position 1: also sees the earlier target
    assert z[0].tolist() == [C, H, H, OWN, C, C]  # context: never sees a target
    free = xlnet.masks_from_order([0, 1, 2, 3], 4, 6, specials_visible=False)
    fig = figures.order_figure(xlnet.mask_view(PIECES, free))
    assert np.array(fig.data[0].z)[0].tolist() == [OWN, H, H, H, H, H]
    assert "no context!" in fig.layout.yaxis.ticktext[0]


def test_attention_figure_shows_only_computed_rows_and_marks_blocked_cells():
    masks = xlnet.masks_from_order([3, 0, 2, 1], 2, 6)
    attention = np.random.default_rng(0).random((6, 6))
    rows = list(masks.targets)
    fig = figures.attention_figure(
        SimpleNamespace(
            pieces=SimpleNamespace(pieces=PIECES, n_content=4),
            attention=attention,
            attention_mask=masks.query_mask.numpy(),
            attention_rows=tuple(rows),
            stream="query",
            layer=0,
            n_layers=2,
            n_heads=2,
        )
    )
    z = np.array(fig.data[0].z, dtype=float)
    assert np.allclose(z[rows], attention[rows]) and np.isnan(np.delete(z, rows, axis=0)).all()
    marked = sorted(zip(fig.data[1].y, fig.data[1].x))
    expected = sorted((i, j) for i in rows for j in range(6) if masks.query_mask[i, j] == 1)
    assert marked == expected
    assert math.isclose(
        float(attention[2, 0]), float(fig.data[0].text[2][0].split("<b>")[1].split("</b>")[0]), rel_tol=1e-5
    )
