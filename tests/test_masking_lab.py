"""app/lessons/masking.py and app/figures/masking.py: the copy schedule of static ×1, static ×10 and dynamic
masking, masked copies, a masked LM filling the blanks, ``run`` on the bundled models (guards, notes, what
is cached), and the figures' data."""

from __future__ import annotations

import re
import pickle
from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch

from app import masking as m
from app.lessons import masking as lab
from app.core import text as txt
from app.figures import masking as figs
from app.core.lesson import Stop
from app.models import catalogue
from tests.test_coverage import fake_sentence
from tests.conftest import CountingCache, require_bundled

RANDOM_IDS = torch.arange(10, 200)
MASK_ID = 4


def run(bundled, **inputs) -> lab.Result:
    variant = inputs.get("variant", "bert")
    return lab.run({variant: bundled(variant)}, lab.Inputs(**inputs))


def bundled_masked_lms() -> list[str]:
    return [k for k in lab.VARIANTS if catalogue.get(k).bundled_available()]


# ----------------------------------------------------------------------------- the copy schedule


def test_copy_schedule():
    assert lab.copy_schedule("static", 25) == [0] * 25
    assert lab.copy_schedule("static10", 25) == [e % 10 for e in range(25)]
    assert lab.copy_schedule("dynamic", 25) == list(range(25))
    assert [lab.distinct_copies(s, 40) for s in lab.STRATEGIES] == [1, 10, 40]
    with pytest.raises(ValueError):
        lab.copy_index("sometimes", 0)


def test_strategies_are_stated_once():
    assert lab.STRATEGIES == ("static", "static10", "dynamic")
    assert set(lab.STRATEGY_LABELS) == set(lab.STRATEGY_SHORT) == set(lab.STRATEGY_READING) == set(lab.STRATEGIES)
    assert lab.SPEC.strategy.choices == lab.STRATEGIES and lab.SPEC.unit.choices == m.UNITS
    assert lab.SPEC.variant.choices == tuple(catalogue.MASKED_LMS)  # every masked LM, loadable or not


@pytest.mark.parametrize("unit", m.UNITS)
def test_static_masks_repeat_and_dynamic_ones_differ(unit):
    sentence = fake_sentence([1, 2, 1, 3] * 10)
    cfg = m.MaskingConfig()
    plans = {s: lab.epoch_plan(sentence, s, unit, 25, cfg, 7, MASK_ID, RANDOM_IDS) for s in lab.STRATEGIES}
    static, static10, dynamic = plans["static"], plans["static10"], plans["dynamic"]
    assert all(torch.equal(static.corrupted[e], static.corrupted[0]) for e in range(25))
    assert all(torch.equal(static10.corrupted[e], static10.corrupted[e % 10]) for e in range(25))
    assert len({tuple(r) for r in static10.targets[:10].tolist()}) > 1
    assert len({tuple(r) for r in dynamic.targets.tolist()}) >= 20  # fresh masks (a repeat is rare, not impossible)
    assert torch.equal(dynamic.corrupted[:10], static10.corrupted[:10])  # copy c is the same draw for both
    again = lab.epoch_plan(sentence, "dynamic", unit, 25, cfg, 7, MASK_ID, RANDOM_IDS)
    assert torch.equal(again.corrupted, dynamic.corrupted)  # seeded
    times, distinct = lab.times_targeted(static10)
    assert (distinct <= 10).all() and (times >= distinct).all()
    assert torch.equal(times, static10.targets.sum(0))
    assert not dynamic.targets[:, list(sentence.special)].any()  # special tokens are never targets


@pytest.mark.parametrize("unit", ["word", "span"])
def test_a_masked_copy_never_splits_a_word(unit):
    sentence = fake_sentence([1, 3, 2, 4] * 6, pad=2)
    for seed in range(30):
        copy = lab.mask_copy(
            sentence, unit, m.MaskingConfig(mlm_probability=0.4), MASK_ID, RANDOM_IDS, m.generator(seed)
        )
        for w in set(sentence.word_of) - {None}:
            assert len({bool(copy.targets[i]) for i in sentence.pieces_of(w)}) == 1
        assert not copy.targets[list(sentence.special)].any()
        assert ((copy.kinds != m.KEEP) == copy.targets).all()


# ----------------------------------------------------------------------------- the model fills the blanks


def test_fill_masks_shapes_and_probabilities(bundled):
    loaded = bundled("bert")
    tok = loaded.tokenizer
    sentence = txt.tokenize(tok, lab.DEFAULT_TEXT, lab.LAB.max_tokens)
    ids = torch.tensor(sentence.ids)
    copy = lab.mask_copy(
        sentence,
        "token",
        m.MaskingConfig(mlm_probability=0.4),
        tok.mask_token_id,
        lab.replacement_ids(tok),
        m.generator(3),
    )
    preds = lab.fill_masks(loaded.model, tok, copy.corrupted, copy.targets, ids, copy.kinds, k=5)
    assert [p.position for p in preds] == copy.targets.nonzero().flatten().tolist()
    for p in preds:
        assert len(p.guesses.ids) == len(p.guesses.pieces) == 5 and list(p.guesses.probabilities) == sorted(
            p.guesses.probabilities, reverse=True
        )
        assert 0 < sum(p.guesses.probabilities) <= 1 + 1e-6 and 0 <= p.p_original <= 1
        assert p.original == tok.convert_ids_to_tokens(int(ids[p.position]))
        assert p.fed == tok.convert_ids_to_tokens(int(copy.corrupted[p.position]))
        assert (p.rank_original == 1) == (p.guesses.ids[0] == p.original_id) or p.p_original == p.guesses.probabilities[
            0
        ]
        if p.original_id in p.guesses.ids:
            assert p.rank_original == p.guesses.ids.index(p.original_id) + 1 and any(p.hits)
        assert (
            p.top(2).guesses.pieces == p.guesses.pieces[:2]
            and p.top(2).guesses.probabilities == p.guesses.probabilities[:2]
        )
    none = torch.zeros_like(copy.targets)
    assert lab.fill_masks(loaded.model, tok, copy.corrupted, none, ids, copy.kinds) == []
    assert not torch.isin(lab.replacement_ids(tok), torch.tensor(tok.all_special_ids)).any()


@pytest.mark.trained
@pytest.mark.parametrize("key", ["bert", "roberta", "distilbert"])
def test_trained_model_recovers_easy_masked_words(bundled, key):
    """Mask 'park' in the default sentence: a trained model has it in its top 10. ('ball' after 'red' is
    too hard for these few-million-parameter models. The ELECTRA generator is left out: it only has to
    propose plausible replacements; tests/test_checkpoints.py checks that it beats the unigram baseline.)"""
    loaded = bundled(key)
    tok = loaded.tokenizer
    sentence = txt.tokenize(tok, lab.DEFAULT_TEXT, lab.LAB.max_tokens)
    ids = torch.tensor(sentence.ids)
    park = next(i for i, (word, _, _) in enumerate(txt.split_words(lab.DEFAULT_TEXT)) if word == "park")
    targets = torch.tensor([w == park for w in sentence.word_of])
    assert targets.sum() == 1
    fed = torch.where(targets, torch.full_like(ids, tok.mask_token_id), ids)
    (pred,) = lab.fill_masks(loaded.model, tok, fed, targets, ids, torch.where(targets, m.MASKED, m.KEEP), k=10)
    assert pred.rank_original <= 10, pred.guesses.pieces


# ----------------------------------------------------------------------------- run: the lesson on the bundled models


def test_run_on_the_defaults_is_the_library_composed(bundled):
    r = run(bundled)
    tok = bundled("bert").tokenizer
    sentence = txt.tokenize(tok, lab.DEFAULT_TEXT, lab.LAB.max_tokens)
    assert r.sentence == sentence and r.n_maskable == sum(not s for s in sentence.special)
    plan = lab.epoch_plan(
        sentence, "static10", "token", 20, m.MaskingConfig(), 0, tok.mask_token_id, lab.replacement_ids(tok)
    )
    assert r.kinds == tuple(tuple(row) for row in plan.kinds.tolist()) and r.copies == plan.copies
    assert r.fed[0] == tuple(tok.convert_ids_to_tokens(plan.corrupted[0].tolist()))
    assert r.n_distinct == 10 and len(r.kinds) == 20 and r.epoch == 1
    assert all(row[i] == m.KEEP for row in r.kinds for i, s in enumerate(sentence.special) if s)
    assert [p.position for p in r.predictions] == plan.targets[0].nonzero().flatten().tolist()
    assert r.epoch_targets == len(r.predictions) and all(
        len(p.guesses.pieces) == lab.SPEC.topk.default for p in r.predictions
    )
    assert r.shown_as == bundled("bert").shown_as and r.marker.startswith("WordPiece")
    assert r.spans is None and r.notes == ()
    # word indices are app.core.text's: word i of the pieces is word i of split_words, from 0
    words = txt.split_words(lab.DEFAULT_TEXT)
    assert r.n_words == len(words)
    for (a, b), w in zip(r.sentence.offsets, r.sentence.word_of):
        assert w is None or words[w][1] <= a <= b <= words[w][2]
    cov = r.coverage
    assert len(cov.simulated["dynamic"]) == lab.LAB.max_epochs
    assert cov.simulated["dynamic"][-1] > cov.simulated["static10"][-1] > cov.simulated["static"][-1]
    assert r.coverage_now["static10"][2] == 10 and r.coverage_now["dynamic"][2] == 20
    assert sum(r.never.values()) >= r.never["static"] > r.never["dynamic"]
    pickle.loads(pickle.dumps(r))  # plain data: st.cache_data can keep it


def test_run_span_lengths_and_whole_words(bundled):
    r = run(bundled, unit="span")
    assert r.spans.means["expected"] == pytest.approx(3.797, abs=1e-3)  # SpanBERT's p = 0.2, max 10
    assert len(r.spans.pmf) == len(r.spans.drawn) == len(r.spans.placed) == 10
    assert sum(r.spans.drawn) == lab.LAB.n_span_samples and sum(r.spans.placed) > 0
    assert r.spans.means["placed"] <= r.spans.means["drawn"] + 0.2  # the budget cuts spans short
    assert r.coverage.split == 0
    assert run(bundled, unit="word").coverage.split == 0
    token = run(bundled, unit="token")
    assert (token.coverage.split > 0) == (token.multi_piece_words > 0)


def test_cheap_inputs_do_not_redo_the_expensive_steps(bundled):
    models = {"bert": bundled("bert")}
    cache = CountingCache()
    lab.run(models, lab.Inputs(), cache)
    assert sorted(cache.calls) == ["coverage_of", "epoch_plans", "predictions_of"]
    lab.run(models, lab.Inputs(topk=2), cache)  # top-k only trims the guesses
    lab.run(models, lab.Inputs(strategy="static10", mask_frac=0.8), cache)
    assert len(cache.calls) == 3
    r = lab.run(models, lab.Inputs(strategy="dynamic", epoch=15), cache)  # another row: at most a new forward
    assert cache.calls[3:] == (["predictions_of"] if r.epoch_targets else [])
    n = len(cache.calls)
    lab.run(models, lab.Inputs(mask_frac=0.5, random_frac=0.5), cache)  # the split: new plans, same coverage
    assert "epoch_plans" in cache.calls[n:] and "coverage_of" not in cache.calls[n:]


@pytest.mark.parametrize("text", ["", "  \n\t "])
def test_empty_text_stops_with_a_message(bundled, text):
    with pytest.raises(Stop):
        run(bundled, text=text)


def test_a_text_of_only_special_tokens_has_nothing_to_mask(bundled):
    with pytest.raises(Stop):
        run(bundled, text="[MASK] [SEP]")


def test_notes_name_the_real_cause(bundled):
    r = run(bundled, text="The cat 😀 saw 東京 and the [MASK] ran.")
    notes = " ".join(n.text for n in r.notes)
    assert "`[MASK]`" in notes and "😀" in notes and "東" in notes
    mask_at = r.sentence.pieces.index("[MASK]")
    assert r.sentence.special[mask_at] and all(row[mask_at] == m.KEEP for row in r.kinds)  # never a target
    if catalogue.get("roberta").bundled_available():
        rob = run(bundled, variant="roberta", text="The cat 😀 saw a ball.")
        assert any("😀" in n.text for n in rob.notes)  # byte-level BPE: spelled byte by byte, named
        assert not run(bundled, variant="roberta").notes


def test_impossible_split_and_stale_epoch_become_notes(bundled):
    r = run(bundled, mask_frac=0.8, random_frac=0.5, epochs=5, epoch=30)
    assert r.cfg.random_fraction == pytest.approx(0.2) and r.cfg.unchanged_fraction == pytest.approx(0, abs=1e-9)
    assert [n.level for n in r.notes].count("warning") == 1
    assert r.epoch == 5 and len(r.notes) == 2
    assert r.shares is None or r.shares[2] == 0  # nothing stays unchanged


def test_a_long_text_is_capped_and_says_so(bundled):
    r = run(bundled, text="The dog ran to the park. " * 40)
    assert len(r.sentence.ids) == lab.LAB.max_tokens and r.sentence.truncated
    assert any(n.level == "warning" and str(lab.LAB.max_tokens) in n.text for n in r.notes)
    assert all(len(row) == lab.LAB.max_tokens for row in r.kinds)


@pytest.mark.parametrize("key", ["roberta", "albert", "distilbert", "electra-generator", "deberta", "modernbert"])
def test_every_bundled_masked_lm_runs_the_lab(bundled, key):
    require_bundled(key)
    r = run(bundled, variant=key, unit="span")
    tok = bundled(key).tokenizer
    assert r.sentence.ids[0] in tok.all_special_ids or r.sentence.ids[-1] in tok.all_special_ids
    assert all(row[i] == m.KEEP for row in r.kinds for i, s in enumerate(r.sentence.special) if s)
    assert [p.position for p in r.predictions] == [i for i, k in enumerate(r.kinds[0]) if k != m.KEEP]
    assert r.marker and r.coverage.split == 0


# ----------------------------------------------------------------------------- figures (on their data)


def test_grid_figure_data():
    tokens = ["<s>", "the", "cat", "</s>"]
    special = [True, False, False, True]
    kinds = [[0, m.MASKED, 0, 0], [0, 0, m.RANDOM, 0]]
    shown = [["<s>", "<mask>", "cat", "</s>"], ["<s>", "the", "<b>dog", "</s>"]]
    fig = figs.epoch_grid_figure(tokens, special, kinds, shown, [0, 1], highlight=1)
    z = fig.data[0].z
    assert [list(r) for r in z] == [
        [figs.SPECIAL, m.MASKED, m.KEEP, figs.SPECIAL],
        [figs.SPECIAL, m.KEEP, m.RANDOM, figs.SPECIAL],
    ]
    assert fig.data[0].text[0][1] == "&lt;mask&gt;" and fig.data[0].text[1][2] == "&lt;b&gt;dog"  # escaped
    assert list(fig.data[0].x) == ["0·&lt;s&gt;", "1·the", "2·cat", "3·&lt;/s&gt;"]
    assert fig.data[0].customdata[1][2][3] == 2  # masked copy, 1-based
    assert len(fig.layout.shapes) == 1 and fig.layout.shapes[0].y0 == 0.5


def test_coverage_and_distinct_figures_data():
    sim = {"static": [0.15, 0.15], "static10": [0.15, 0.28], "dynamic": [0.15, 0.28]}
    ana = {s: [0.15, 0.2775] for s in sim}
    fig = figs.coverage_figure(
        SimpleNamespace(coverage=SimpleNamespace(simulated=sim, analytic=ana, n_draws=200), epochs=2)
    )
    assert len(fig.data) == 6 and list(fig.data[2].y) == [0.15, 0.28] and list(fig.data[3].y) == [0.15, 0.2775]
    # the values are fractions: the axis reads them as percentages, 0 to (just over) 100%
    assert fig.layout.yaxis.tickformat == ".0%" and tuple(fig.layout.yaxis.range) == (0, 1.02)
    fig = figs.distinct_masks_figure(
        SimpleNamespace(
            sentence=SimpleNamespace(pieces=["[CLS]", "a", "b", "[SEP]"], special=[True, False, False, True]),
            distinct={"static": [0, 1, 0, 0], "dynamic": [0, 2, 3, 0]},
            times={"static": [0, 5, 0, 0], "dynamic": [0, 2, 3, 0]},
            epochs=5,
        )
    )
    assert (
        list(fig.data[1].y) == [2, 3]
        and list(fig.data[0].customdata) == [5, 0]
        and list(fig.data[0].x) == ["1·a", "2·b"]
    )


def test_span_and_prediction_figures_data():
    pmf = m.span_length_pmf(0.2, 3)
    fig = figs.span_length_figure(
        SimpleNamespace(pmf=pmf, drawn=[50, 30, 20], placed=[8, 2, 0], means={"expected": 1.7})
    )
    assert (
        list(fig.data[0].y) == [0.5, 0.3, 0.2] and list(fig.data[1].y) == [0.8, 0.2, 0.0] and list(fig.data[2].y) == pmf
    )
    assert fig.layout.shapes[0].x0 == 1.7
    fig = figs.predictions_figure(
        SimpleNamespace(
            label="BERT",
            predictions=[
                SimpleNamespace(
                    position=1,
                    original="ball",
                    fed="<mask>",
                    guesses=SimpleNamespace(pieces=["ball", "<b>"], probabilities=[0.5, 0.2]),
                    hits=[True, False],
                )
            ],
        )
    )
    assert [list(r) for r in fig.data[0].z] == [[0.5, 0.2]] and fig.data[0].text[0][0] == "ball ✓"
    assert fig.data[0].text[0][1] == "&lt;b&gt;" and list(fig.data[0].y) == ["1·ball (fed &lt;mask&gt;)"]


def test_the_guesses_title_stays_clear_of_the_chart_toolbar():
    """The toolbar (plotly's modebar) appears at the top right of a chart on hover: it covered this figure's centred
    title, an x-axis title over the ranks in a half-width column (issue 27). The title sits on the left, in its
    own band above the ranks."""
    fig = figs.predictions_figure(
        SimpleNamespace(
            label="BERT",
            predictions=[
                SimpleNamespace(
                    position=1,
                    original="ball",
                    fed="<mask>",
                    guesses=SimpleNamespace(pieces=["ball", "toy"], probabilities=[0.5, 0.2]),
                    hits=[True, False],
                )
            ],
        )
    )
    assert fig.layout.title.text == "BERT: guesses, best first"
    assert fig.layout.title.x == 0 and fig.layout.title.xanchor == "left" and fig.layout.title.yref == "container"
    assert fig.layout.xaxis.title.text is None  # nothing centred at the top, where the toolbar opens
    assert fig.layout.margin.t >= 60  # the title's band, above the rank labels


def test_the_split_adds_up_to_100_and_the_takeaway_gives_the_measured_rate(bundled):
    assert lab.whole_percents((0.857, 0.057, 0.086)) == (86, 6, 8)  # each rounded alone: 86 + 6 + 9 = 101
    r = run(bundled, rate=0.5)
    assert "15%" not in lab.TAKEAWAY and "15%" not in lab.takeaway(r)
    assert f"the same {r.coverage.rate:.0%} of positions" in lab.takeaway(r) and "50%" in lab.takeaway(r)
    text = lab.split_text(r)
    assert sum(int(p) for p in re.findall(r"\((\d+)%\)", text)) == 100
    counts = [int(c) for c in re.findall(r"\*\*(\d+)\*\*", text)]
    assert sum(counts) == round(r.targets_per_epoch * r.epochs) and "add up to 100" in text


# ----------------------------------------------------------------------------- SpanBERT's span-boundary objective


def test_span_masking_shows_each_tokens_boundaries_and_position_and_the_models_mlm_guess(bundled):
    """Issue 49 item 10: for the chosen span of the inspected epoch, the boundaries and relative position SBO
    predicts each masked token from (app/span_boundary.py on the epoch's own span indices), beside the lesson model's
    masked-LM guess at the same token; the page says the model has no SBO head."""
    require_bundled("bert")
    text = "The little girl found a red ball in the park. She kicked it over the puddles to the wobbly treehouse."
    for epoch in range(1, 8):
        r = run(bundled, text=text, unit="span", strategy="dynamic", epoch=epoch, span=1)
        if r.sbo is not None and r.sbo.n_spans >= 2:
            break
    assert r.sbo is not None and r.sbo.n_spans >= 2
    row = r.kinds[r.epoch - 1]
    targets = [i for i, k in enumerate(row) if k != m.KEEP]
    spans = (
        r.sbo.span,
        *(
            run(bundled, text=text, unit="span", strategy="dynamic", epoch=r.epoch, span=k).sbo.span
            for k in range(2, r.sbo.n_spans + 1)
        ),
    )
    assert sorted(i for s in spans for i in s.positions) == targets  # every target of the epoch, in one span each
    assert [s.number for s in spans] == list(range(1, r.sbo.n_spans + 1))
    s = r.sbo.span
    assert (s.left, s.right) == (s.start - 1, s.end + 1)
    assert r.sbo.left == r.sentence.pieces[s.left] and r.sbo.right == r.sentence.pieces[s.right]
    assert r.sbo.left_fed == r.fed[r.epoch - 1][s.left]
    guesses = {p.position: p for p in r.predictions}
    for t, rel, i in zip(r.sbo.targets, s.relative, s.positions):
        assert (t.position, t.relative, t.original, t.fed) == (i, rel, r.sentence.pieces[i], r.fed[r.epoch - 1][i])
        assert t.mlm_top == guesses[i].guesses.pieces[0] and t.mlm_rank == guesses[i].rank_original
    said = lab.sbo_model_text(r.sbo, r.label)
    assert "What it cannot show" in said and "None of this lab's models was trained with SBO" in said
    assert "**Ours**" in said and "**The paper's**" in said and "Joshi et al., 2020" in said
    first = sum(t.mlm_rank == 1 for t in r.sbo.targets)
    assert f"ranked first at {first} of {txt.count(len(r.sbo.targets), 'token')}" in said
    words = lab.sbo_text(r.sbo)
    assert f"covers positions {s.start}–{s.end}" in words and f"p{len(s)}" in words


def test_a_span_beyond_the_epochs_spans_shows_the_first_and_other_units_have_no_sbo(bundled):
    require_bundled("bert")
    r = run(bundled, unit="span", span=lab.SPEC.span.hi)
    assert r.sbo is not None and r.sbo.span.number == 1
    assert any(f"span {lab.SPEC.span.hi} does not exist, showing span 1" in n.text for n in r.notes)
    assert run(bundled, unit="token").sbo is None and run(bundled, unit="word").sbo is None


def test_sbo_figure_marks_the_boundaries_the_predicted_token_and_escapes_tokens(bundled):
    require_bundled("bert")
    r = next(
        x
        for x in (run(bundled, unit="span", strategy="dynamic", epoch=e, rate=0.4) for e in range(1, 9))
        if x.sbo is not None
    )
    fig = figs.sbo_figure(r)
    assert [f.layout.title.text for f in figs.every_figure(r)].count(fig.layout.title.text) == 1
    s, (first, last) = r.sbo.span, r.sbo.window
    heat = fig.data[0]
    assert len(heat.z) == len(s) and len(heat.z[0]) == last - first + 1
    for row, t in zip(heat.z, r.sbo.targets):
        roles = dict(zip(range(first, last + 1), row))
        assert roles[s.left] == roles[s.right] == figs.SBO_BOUNDARY
        assert roles[t.position] == figs.SBO_PREDICTED
        assert all(roles[i] == figs.SBO_SPAN for i in s.positions if i != t.position)
        assert sum(v == figs.SBO_BOUNDARY for v in row) == 2  # SBO reads exactly two outputs
    # a token that is markup (a RoBERTa <s>, a typed <b>) is escaped in cells, rows and the MLM notes
    sentence = fake_sentence([1, 1, 1, 1])
    pieces = ("<s>", "<b>x", "</s>y", "z", "<i>w", "</s>")
    sentence = replace(sentence, pieces=pieces)
    fed = ("<s>", "<b>x", "<mask>", "<mask>", "<i>w", "</s>")
    blank = lab.Blank(2, m.MASKED, "</s>y", "<mask>", 0, SimpleNamespace(pieces=["<script>"]), 0.1, 3)
    sbo, note = lab.sbo_of(sentence, (-1, -1, 0, 0, -1, -1), fed, (blank,), 1, 1)
    assert note is None and (sbo.left, sbo.right) == ("<b>x", "<i>w") and sbo.targets[0].mlm_top == "<script>"
    fake = SimpleNamespace(sbo=sbo, sentence=sentence, fed=(fed,), epoch=1)
    fig = figs.sbo_figure(fake)
    shown = (
        [c for row in fig.data[0].text for c in row] + list(fig.data[0].y) + [a.text for a in fig.layout.annotations]
    )
    assert "&lt;b&gt;x" in fig.data[0].text[0][1] and "&lt;script&gt;" in fig.layout.annotations[0].text
    assert not any(tag in c for c in shown for tag in ("<s>", "<b>x", "<script>", "<i>", "<mask>"))
