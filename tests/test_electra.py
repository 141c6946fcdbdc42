"""app/lessons/electra.py and app/figures/electra.py: masking and sampling never touch special tokens, a seed
reproduces a round, labels are exactly corrupted != original, ROC-AUC against a brute-force count,
hand edits (pieces, out-of-vocabulary words), and the figures' data. Real runs use the bundled pair."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import plotly.graph_objects as go
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app import mlm
from app.lessons import electra
from app.figures import electra as figures
from app.core.lesson import Stop
from tests.conftest import CountingCache

TEXT = "The little girl found a red ball in the park. She was happy and ran home to show her mom."
SENTENCE = "The little girl found a red ball in the park."


@pytest.fixture(scope="module")
def pair(bundled):
    return bundled("electra-generator"), bundled("electra-discriminator")


def models_of(pair) -> dict:
    return dict(zip(electra.MODELS, pair))


def round_of(pair, text=TEXT, **kw) -> electra.Round:
    return electra.run(models_of(pair), electra.Inputs(text=text, **kw)).round


def brute_force_auc(scores, labels) -> float:
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


# ----------------------------------------------------------------------------- masking and sampling


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60), st.floats(0.01, 1.0), st.integers(0, 2**31 - 1))
def test_masking_picks_round_p_n_content_positions_and_never_a_special_one(special, p, seed):
    special_t = torch.tensor(special)
    masked = electra.mask_positions(special_t, p, torch.Generator().manual_seed(seed))
    n_content = special.count(False)
    assert masked.dtype == torch.bool and masked.shape == special_t.shape
    assert not (masked & special_t).any()
    assert int(masked.sum()) == electra.n_to_mask(n_content, p)
    assert int(masked.sum()) == (0 if n_content == 0 else max(1, min(n_content, round(p * n_content))))
    again = electra.mask_positions(special_t, p, torch.Generator().manual_seed(seed))
    assert torch.equal(masked, again)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.1, 3.0), st.integers(1, 8))
def test_sampling_never_proposes_a_special_token_even_when_it_is_the_favourite(seed, temperature, n):
    vocab, special = 50, torch.tensor([0, 1, 2, 3, 4])
    logits = torch.randn(n, vocab, generator=torch.Generator().manual_seed(seed))
    logits[:, special] += 30.0  # the specials would win almost every draw
    out = electra.sample_replacements(logits, special, torch.Generator().manual_seed(seed), temperature)
    assert out.shape == (n,)
    assert not torch.isin(out, special).any()
    probs = electra.replacement_probs(logits, special, temperature)
    assert torch.allclose(probs.sum(-1), torch.ones(n))
    assert (probs[:, special] == 0).all()


def test_temperature_sharpens_and_flattens_and_must_be_positive():
    logits = torch.tensor([[3.0, 1.0, 0.0, -1.0]])
    none = torch.tensor([], dtype=torch.long)
    cold, warm = electra.replacement_probs(logits, none, 0.2), electra.replacement_probs(logits, none, 3.0)
    assert cold[0, 0] > electra.replacement_probs(logits, none, 1.0)[0, 0] > warm[0, 0]
    values, ids = mlm.top_ids(electra.replacement_probs(logits, none), 3)
    assert ids.tolist() == [[0, 1, 2]] and values[0].tolist() == sorted(values[0].tolist(), reverse=True)
    with pytest.raises(ValueError):
        electra.replacement_probs(logits, none, 0.0)


def test_labels_are_exactly_corrupted_differs_from_original():
    ids = torch.tensor([2, 10, 11, 12, 13, 3])
    masked = torch.tensor([False, True, False, True, True, False])
    corrupted = electra.corrupt(ids, masked, torch.tensor([99, 12, 98]))  # position 3 gets its own token back
    assert corrupted.tolist() == [2, 99, 11, 12, 98, 3]
    assert electra.replaced_labels(corrupted, ids).tolist() == [False, True, False, False, True, False]


# ----------------------------------------------------------------------------- the real pair


def test_encode_flags_specials_unknowns_and_caps_the_length(pair):
    tok = pair[0].tokenizer
    enc = electra.encode(tok, SENTENCE)
    assert enc.tokens[0] == tok.cls_token and enc.tokens[-1] == tok.sep_token
    assert enc.special[0] and enc.special[-1] and not any(enc.special[1:-1])
    assert not enc.truncated and enc.n_kept == enc.n_pieces == len(enc.tokens) - 2 and enc.n_unknown == 0
    emoji = electra.encode(tok, "the cat 😀 sat")
    assert emoji.n_unknown >= 1 and all(s for t, s in zip(emoji.tokens, emoji.special) if t == tok.unk_token)
    long = electra.encode(tok, " ".join([SENTENCE] * 20), max_tokens=30)
    assert len(long.input_ids) == 30 and long.truncated and long.n_kept == 28 and long.n_pieces > 28
    assert long.input_ids[-1] == tok.sep_token_id


def test_a_round_never_masks_or_proposes_special_tokens_and_its_labels_are_the_truth(pair):
    gen, disc = pair
    tok = gen.tokenizer
    specials = set(tok.all_special_ids)
    for seed in range(6):
        rnd = round_of(pair, rate=0.4, temperature=2.0, seed=seed)
        n = len(rnd.tokens)
        assert all(
            len(getattr(rnd, f)) == n for f in ("special", "masked", "replacement", "corrupted", "scores", "labels")
        )
        assert not any(m and s for m, s in zip(rnd.masked, rnd.special))
        for i in range(n):
            if rnd.masked[i]:
                assert rnd.replacement[i] not in tok.all_special_tokens
                assert rnd.corrupted[i] == rnd.replacement[i]
                assert all(a not in tok.all_special_tokens for a, _ in rnd.alternatives[i])
                assert len(rnd.alternatives[i]) == electra.DEFAULTS.top_k
                assert 0 < rnd.replacement_prob[i] <= 1
            else:
                assert rnd.replacement[i] is None and rnd.corrupted[i] == rnd.tokens[i] and rnd.alternatives[i] == []
        assert not any(i in specials for i, s in zip(rnd.corrupted_ids, rnd.masked) if s)
        assert rnd.labels == [c != o for c, o in zip(rnd.corrupted, rnd.tokens)]
        assert rnd.same_as_original == [m and not y for m, y in zip(rnd.masked, rnd.labels)]
        assert all(0.0 <= s <= 1.0 for s in rnd.scores)


def test_a_seed_reproduces_a_round_and_the_temperature_keeps_the_masked_positions(pair):
    a = round_of(pair, seed=11)
    b = round_of(pair, seed=11)
    assert a == b
    hot = round_of(pair, seed=11, temperature=2.5)
    assert hot.masked == a.masked
    others = [round_of(pair, seed=s).masked for s in (12, 13, 14)]
    assert any(m != a.masked for m in others)


def test_moving_the_temperature_reruns_only_the_sampling_not_the_generator(pair):
    cache = CountingCache()
    first = electra.run(models_of(pair), electra.Inputs(text=TEXT, seed=4, temperature=1.0), cache)
    again = electra.run(models_of(pair), electra.Inputs(text=TEXT, seed=4, temperature=2.0), cache)
    assert cache.calls.count("generator_side") == 1  # the forward pass is shared by both temperatures
    assert first.round.masked == again.round.masked
    electra.run(models_of(pair), electra.Inputs(text=TEXT, seed=5), cache)
    assert cache.calls.count("generator_side") == 2  # a new seed masks other positions: a new forward


def test_run_stops_with_a_reason_when_there_is_nothing_to_mask_and_notes_typed_specials(pair):
    for text in ("", "   \n\t"):
        with pytest.raises(Stop, match="empty"):
            electra.run(models_of(pair), electra.Inputs(text=text))
    with pytest.raises(Stop, match="nothing to mask"):
        electra.run(models_of(pair), electra.Inputs(text="😀 你好"))
    tok = pair[0].tokenizer
    typed = electra.run(models_of(pair), electra.Inputs(text=f"the {tok.mask_token} ball 😀 rolled"))
    notes = " ".join(n.text for n in typed.notes)
    assert f"`{tok.mask_token}`" in notes and f"`{tok.unk_token}`" in notes and "`😀`" in notes
    assert "emoji" not in notes.lower()  # the cause is named, not guessed


def test_an_edit_position_that_is_not_a_word_piece_moves_to_the_nearest_one_with_a_note(pair):
    r = electra.run(models_of(pair), electra.Inputs(text=SENTENCE, edit_pos=400, edit_word="ran"))
    assert r.edit_pos == max(r.positions) and any("400" in n.text for n in r.notes)
    assert r.edit.ok and r.edit_labels[r.edit_pos] and len(r.edit_scores) == len(r.encoded.input_ids)


def test_discriminator_scores_match_a_direct_forward_pass(pair):
    _, disc = pair
    ids = torch.tensor(electra.encode(disc.tokenizer, SENTENCE).input_ids)
    with torch.no_grad():
        direct = torch.sigmoid(disc.model(input_ids=ids[None]).logits[0])
    assert torch.allclose(electra.discriminator_scores(disc.model, ids), direct, atol=1e-6)


@pytest.mark.trained
@pytest.mark.parametrize("position, word", [(7, "ran"), (4, "blue"), (10, "she")])
def test_a_hand_replaced_token_scores_above_every_untouched_token(pair, position, word):
    """'The little girl found a red ball in the park.' with one word swapped for an ungrammatical one."""
    _, disc = pair
    tok = disc.tokenizer
    enc = electra.encode(tok, SENTENCE)
    edit = electra.apply_edit(tok, enc.input_ids, position, word)
    assert edit.ok and edit.piece == word
    scores = electra.discriminator_scores(disc.model, torch.tensor(edit.input_ids))
    untouched = [float(scores[i]) for i, s in enumerate(enc.special) if not s and i != position]
    assert float(scores[position]) > max(untouched)


@pytest.mark.slow  # 20 s
@pytest.mark.trained
def test_the_generator_proposes_plausible_fakes_on_the_default_sentence(pair):
    """Issue floor: over 100 seeds, at least 80% of the samples at masked content words are words."""
    assert electra.plausible_share(models_of(pair), seeds=100) >= 0.8


# ----------------------------------------------------------------------------- detection quality


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.booleans()), min_size=2, max_size=40))
def test_roc_auc_matches_a_brute_force_pairwise_count_ties_included(pairs):
    scores = [s / 6 for s, _ in pairs]  # few distinct values: many ties
    labels = [y for _, y in pairs]
    auc = electra.roc_auc(torch.tensor(scores), torch.tensor(labels))
    if all(labels) or not any(labels):
        assert math.isnan(auc)
    else:
        assert auc == pytest.approx(brute_force_auc(scores, labels), abs=1e-12)


def test_detection_metrics_by_hand_and_undefined_cases():
    scores = [0.9, 0.2, 0.7, 0.4, 0.1, 0.95]
    labels = [True, False, False, True, False, False]
    keep = [True, True, True, True, True, False]  # the last is a special token
    d = electra.detection_metrics(scores, labels, keep, threshold=0.5)
    assert (d.n_tokens, d.n_replaced, d.n_flagged, d.true_positives) == (5, 2, 2, 1)
    assert d.precision == 0.5 and d.recall == 0.5
    assert d.auc == pytest.approx(brute_force_auc(scores[:5], labels[:5])) and d.both_classes
    none = electra.detection_metrics([0.1, 0.2], [False, False])
    assert math.isnan(none.auc) and math.isnan(none.precision) and math.isnan(none.recall) and not none.both_classes
    perfect = electra.detection_metrics([0.9, 0.1, 0.8], [True, False, True])
    assert perfect.auc == 1.0 and perfect.precision == 1.0 and perfect.recall == 1.0


# ----------------------------------------------------------------------------- hand edits


def test_the_verdict_on_a_hand_edit_is_read_from_the_scores_even_with_nothing_to_rank_against():
    scores = (0.0, 0.1, 0.7, 0.3, 0.0)  # [CLS] a b c [SEP]; the edit is at 2
    caught = electra.edit_verdict("ran", 2, scores, [1, 3], 0.5)
    assert "P(replaced) = 0.700" in caught and "gets 0.300" in caught and "Rank 1 of 3: **caught**" in caught
    slipped = electra.edit_verdict("ran", 1, scores, [2, 3], 0.5)
    assert "Rank 3 of 3: it slipped past" in slipped
    top = electra.edit_verdict("ran", 3, (0.0, 0.1, 0.2, 0.4, 0.0), [1, 2], 0.5)
    assert "Rank 1 of 3: the top suspect" in top and "caught" not in top  # first, but under the threshold
    alone = electra.edit_verdict("ran", 1, (0.0, 0.445, 0.0), [], 0.5)  # a one-piece sentence
    assert "nan" not in alone and "Rank" not in alone and "only word piece" in alone and "not flagged" in alone
    assert "**caught**" in electra.edit_verdict("ran", 1, (0.0, 0.9, 0.0), [], 0.5)


def test_hand_edits_use_the_first_piece_and_refuse_what_cannot_be_one_token(pair):
    tok = pair[0].tokenizer
    enc = electra.encode(tok, SENTENCE)
    ids = enc.input_ids
    ok = electra.apply_edit(tok, ids, 7, "  Ran ")
    assert ok.ok and ok.piece == "ran" and ok.message is None
    assert [i for i, (a, b) in enumerate(zip(ok.input_ids, ids)) if a != b] == [7]
    long_word = "unbelievably"
    pieces = tok.tokenize(long_word)
    assert len(pieces) > 1
    split = electra.apply_edit(tok, ids, 7, long_word)
    assert split.ok and split.piece == pieces[0] and "first" in split.message and str(len(pieces)) in split.message
    assert split.input_ids[7] == tok.convert_tokens_to_ids(pieces[0])
    for word, reason in [
        ("😀", "outside the vocabulary"),
        ("你", "outside the vocabulary"),
        (tok.mask_token, "special token"),
        (tok.sep_token, "special token"),
    ]:
        refused = electra.apply_edit(tok, ids, 7, word)
        assert not refused.ok and refused.input_ids == ids and reason in refused.message
    assert electra.apply_edit(tok, ids, 7, "   ") == electra.Edit(False, ids, None, None)
    for position in (0, len(ids) - 1, len(ids), -1):  # [CLS], [SEP], past the end
        bad = electra.apply_edit(tok, ids, position, "ran")
        assert not bad.ok and "not a word piece" in bad.message
    same = electra.apply_edit(tok, ids, 7, "ball")
    assert same.ok and same.input_ids == ids and "already there" in same.message
    tick = electra.apply_edit(tok, ids, 7, "a`b")  # a backtick never breaks the message's code span
    assert tick.ok and tick.piece == "a" and "`aˋb`" in tick.message


# ----------------------------------------------------------------------------- signal and curves


def test_signal_counts_and_training_curves(tmp_path):
    assert electra.signal_counts(24, 3) == {"tokens": 24, "mlm": 3, "rtd": 24}
    assert electra.read_curves(tmp_path) is None
    (tmp_path / "curves.json").write_text(
        json.dumps({"eval_step": [100, 200], "disc_auc": [0.6, float("nan")], "step": [20], "train_loss": [3.0]})
    )
    curves = electra.read_curves(tmp_path)
    assert curves["eval_step"] == [100, 200] and curves["disc_auc"] == [0.6, None] and curves["final"] == {}
    (tmp_path / "curves.json").write_text(json.dumps({"eval_step": [100], "disc_auc": []}))
    assert electra.read_curves(tmp_path) is None
    (tmp_path / "curves.json").write_text("{not json")
    assert electra.read_curves(tmp_path) is None
    (tmp_path / "curves.json").write_text(json.dumps({"eval_step": ["100"], "disc_auc": [0.6]}))
    assert electra.read_curves(tmp_path) is None  # a step that is not a number


def staged_curves(tmp_path, joint_stage):
    (tmp_path / "curves.json").write_text(
        json.dumps(
            {
                "eval_step": [250, 500],
                "disc_auc": [0.86, 0.91],
                "step": [20],
                "train_loss": [0.3],
                "final": {"generator": {"cloze_top5": 0.41}, "discriminator": {"auc": 0.905}},
                "joint_stage": joint_stage,
            }
        )
    )
    return electra.read_curves(tmp_path)


def test_curves_of_a_joint_stage_then_a_frozen_generator_tell_both_stages_with_their_own_numbers(tmp_path):
    curves = staged_curves(
        tmp_path,
        {
            "eval_step": [250, 500, 750],
            "disc_auc": [0.92, 0.80, 0.78],
            "steps_done": 750,
            "cloze_top5": [0.01, 0.5, 0.66],
        },
    )
    assert curves["joint"] == {
        "eval_step": [250, 500, 750],
        "disc_auc": [0.92, 0.80, 0.78],
        "cloze_top5": 0.66,
        "steps_done": 750,
    }
    story = electra.curve_story(curves)
    for part in (
        "every 250 steps",
        "jointly for 750 steps",
        "(0.92)",
        "fell to 0.78",
        "cloze top-5 0.66",
        "cloze top-5 0.41",
        "for 500 steps, to 0.91",
    ):
        assert part in story, part
    fig = figures.auc_curve_figure(curves)
    assert [list(t.x) for t in fig.data] == [[250, 500, 750], [1000, 1250]]  # the later stage after the joint one
    assert list(fig.data[1].y) == [0.86, 0.91] and fig.layout.showlegend
    assert any(sh.x0 == sh.x1 == 750 for sh in fig.layout.shapes)  # the swap is marked
    assert go.Figure(fig.to_plotly_json())


def test_curves_without_a_usable_joint_stage_tell_the_one_stage_story(tmp_path):
    for joint_stage in (None, {"eval_step": [250], "disc_auc": []}, {"eval_step": [250], "disc_auc": [None]}, "junk"):
        curves = staged_curves(tmp_path, joint_stage)
        story = electra.curve_story(curves)
        assert "learns alongside" in story and "Grey" not in story
        assert len(figures.auc_curve_figure(curves).data) == 1


# ----------------------------------------------------------------------------- figures


def hand_round(tokens=("[CLS]", "the", "<script>", "ball", "[SEP]")) -> electra.Round:
    n = len(tokens)
    return electra.Round(
        tokens=list(tokens),
        special=[True] + [False] * (n - 2) + [True],
        masked=[False, True, False, True, False],
        replacement=[None, "a", None, "ball", None],
        replacement_prob=[None, 0.3, None, 0.6, None],
        same_as_original=[False, False, False, True, False],
        alternatives=[[], [("a", 0.3), ("<b>", 0.2)], [], [("ball", 0.6), ("cat", 0.1)], []],
        corrupted=["[CLS]", "a", "<script>", "ball", "[SEP]"],
        scores=[0.01, 0.8, 0.3, 0.2, 0.05],
        labels=[False, True, False, False, False],
    )


def hand_edit(tokens, scores, labels, special, edited, original_tokens=None):
    """What edit_figure reads from a Result, by hand: the edited sentence, its scores and labels, the sentence as
    encoded, and the edited position (the edit applied)."""
    return SimpleNamespace(
        edited_tokens=tokens,
        edit_scores=scores,
        edit_labels=labels,
        edit_pos=edited,
        edit=SimpleNamespace(ok=True),
        threshold=0.5,
        encoded=SimpleNamespace(special=special, tokens=original_tokens or ()),
    )


def test_pipeline_figure_has_one_row_per_stage_with_the_values_behind_each_cell():
    rnd = hand_round()
    fig = figures.pipeline_figure(rnd)
    assert len(fig.data) == len(figures.STAGES) == 6
    z = [list(trace.z[0]) for trace in fig.data]
    assert z[0] == [1.0, 0.0, 0.0, 0.0, 1.0]  # specials
    assert z[1] == [0.0, 1.0, 0.0, 1.0, 0.0]  # masked
    assert z[2] == [None, 1.0, None, 0.0, None]  # a real replacement vs the original sampled back
    assert z[3] == z[5] == [0.0, 1.0, 0.0, 0.0, 0.0]  # replaced
    assert z[4] == rnd.scores
    assert list(fig.data[2].text[0]) == ["", "a", "", "ball (=)", ""]
    assert list(fig.data[1].text[0])[1] == "[MASK]"
    assert "0.8000" in fig.data[4].hovertext[0][1] and "counts as original" in fig.data[2].hovertext[0][3]
    assert fig.layout.yaxis.ticktext == figures.STAGES


def test_every_token_in_hover_and_cells_is_escaped():
    fig = figures.pipeline_figure(hand_round())
    edit = figures.edit_figure(
        hand_edit(
            ["[CLS]", "<img src=x onerror=alert(1)>", "[SEP]"],
            [0.1, 0.9, 0.1],
            [False, True, False],
            [True, False, True],
            1,
        )
    )
    for trace in (*fig.data, *edit.data):
        for cell in [*trace.text[0], *trace.hovertext[0]]:
            assert "<script>" not in cell and "<img" not in cell
    assert "&lt;script&gt;" in fig.data[0].text[0][2]
    assert "&lt;b&gt;" in fig.data[2].hovertext[0][1]
    assert list(edit.data[0].z[0]) == [0.0, 1.0, 0.0] and list(edit.data[1].z[0]) == [0.1, 0.9, 0.1]


def test_signal_and_curve_figures_carry_their_numbers():
    sig = figures.signal_figure({"tokens": 24, "mlm": 3, "rtd": 24})
    assert list(sig.data[0].x) == [3, 24] and "(12%)" in sig.data[0].text[0] and "100%" in sig.data[0].text[1]
    cur = figures.auc_curve_figure({"eval_step": [100, 200], "disc_auc": [0.6, 0.8]})
    assert list(cur.data[0].x) == [100, 200] and list(cur.data[0].y) == [0.6, 0.8]


def test_every_figure_is_valid_plotly_when_rebuilt_with_validation():
    """The figures are built unvalidated for speed; rebuilding them validated catches any wrong property."""
    rnd = hand_round()
    built = [
        figures.pipeline_figure(rnd),
        figures.edit_figure(hand_edit(rnd.tokens, rnd.scores, rnd.labels, rnd.special, 1, original_tokens=rnd.tokens)),
        figures.signal_figure({"tokens": 5, "mlm": 2, "rtd": 5}),
        figures.auc_curve_figure({"eval_step": [100, 200, 300], "disc_auc": [0.55, None, 0.8]}),
    ]
    for fig in built:
        spec = fig.to_plotly_json()
        again = go.Figure(spec)  # raises on any invalid property or value
        assert len(again.data) == len(fig.data)
        fig.update_layout(font=dict(size=22), height=500)  # what ui.show_figure does in presenter mode


def test_a_long_sentence_wraps_into_lines_that_keep_every_position_once():
    n, per_line = 37, 16
    tokens = ["[CLS]"] + [f"w{i}" for i in range(1, n - 1)] + ["[SEP]"]
    rnd = electra.Round(
        tokens=tokens,
        special=[i in (0, n - 1) for i in range(n)],
        masked=[i % 5 == 2 for i in range(n)],
        replacement=["x" if i % 5 == 2 else None for i in range(n)],
        replacement_prob=[0.5 if i % 5 == 2 else None for i in range(n)],
        same_as_original=[False] * n,
        alternatives=[[("x", 0.5)] if i % 5 == 2 else [] for i in range(n)],
        corrupted=["x" if i % 5 == 2 else t for i, t in enumerate(tokens)],
        scores=[i / n for i in range(n)],
        labels=[i % 5 == 2 for i in range(n)],
    )
    fig = figures.pipeline_figure(rnd, per_line=per_line)
    stages = len(figures.STAGES)
    assert len(fig.data) == 3 * stages  # 16 + 16 + 5 tokens
    for s in range(stages):
        lines = [fig.data[b * stages + s] for b in range(3)]
        assert [x for t in lines for x in t.x] == list(range(n))
    scores = [z for b in range(3) for z in fig.data[b * stages + 4].z[0]]
    assert scores == rnd.scores
    assert [fig.data[b * stages].xaxis for b in range(3)] == ["x", "x2", "x3"]
    assert sum(t.showscale is True for t in fig.data) == 1
    go.Figure(fig.to_plotly_json())  # valid with validation on
