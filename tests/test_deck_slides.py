"""Every slide of the default deck stages what its note talks about (issue 51). For each slide: the figure its view
names (``figure=``, or the lesson's key figure) is the one the note is about, and what the note says can be seen in
that figure's data — slide 6 predicts every piece from the end backwards, slide 9 is the selection guide, slide 11
puts every layer (global and local) side by side. Takeaways that describe a model's output are computed from the
view's own result: on slide 12 they follow the heads' probabilities, and a whole-word view's is about whole words.

The lessons run on the bundled checkpoints, as the handout runs them (``handout.load_models``); no browser here
(tests/e2e/test_stage.py looks at the stage itself)."""

from __future__ import annotations

import importlib
import json
from dataclasses import replace

import pytest

from app import measure
from app.core import state
from app.core.lesson import direct
from app.figures import Document, stage_figure
from app.lecture import deck, handout

DEFAULT = deck.default_deck()
RUNS: dict[int, tuple] = {}


def run_slide(n: int):
    """(view, result, the staged figure's name, the staged figure) for slide ``n`` (from 1), computed once."""
    if n not in RUNS:
        v = DEFAULT[n - 1]
        lib = handout.library(v)
        values = handout.values_of(v)
        result = lib.run(handout.load_models(v), lib.Inputs.from_values(values), direct)
        spec = next((p for p in lib.SPEC if p.name == state.FIGURE), None)
        name = values.get(state.FIGURE) if spec else None
        module = importlib.import_module(f"app.figures.{v.page}")
        RUNS[n] = (v, result, name, stage_figure(module, result, name))
    return RUNS[n]


def titles(fig) -> list[str]:
    """The figure's title and its panels' titles."""
    return [fig.layout.title.text or ""] + [a.text for a in fig.layout.annotations or ()]


# ----------------------------------------------------------------------------- what each slide's stage must show


def masking_coverage(v, r, fig):
    assert "fixed mask" in v.note and "fresh mask" in v.note
    final = {t.name.lower(): t.y[-1] for t in fig.data if t.name.endswith("simulated")}
    static = next(y for k, y in final.items() if k.startswith("static ×1"))
    dynamic = next(y for k, y in final.items() if k.startswith("dynamic"))
    assert static < 0.3 < 0.9 < dynamic  # one fixed mask: ~15% ever predicted; a fresh one: almost all


def albert_parts(v, r, fig):
    assert "bar by bar" in v.note and fig.layout.barmode == "stack"
    assert any("yours" in str(x) for x in fig.data[0].x)
    assert fig.layout.xaxis.tickangle == 0  # level labels, not 190 px of rotated ones


def albert_unrolled(v, r, fig):
    assert "again and again" in v.note and "application" in " ".join(titles(fig))


def distillation_soft(v, r, fig):
    assert "temperature" in v.note and "T = 4" in fig.layout.title.text


def electra_pipeline(v, r, fig):
    assert "discriminator" in v.note and fig.layout.title.text.startswith("Replaced-token detection")
    from app.figures import electra

    staged = electra.key_figure(r, stage=True)  # what the page puts on a projector's stage
    assert min(t.textfont.size for t in staged.data) >= 18
    assert len({t.y[0] for t in staged.data}) == 6  # every stage of the round


def xlnet_backwards(v, r, fig):
    assert "every piece is predicted" in v.note and "last to the first" in v.note
    order, targets = r.view.order, r.view.targets
    assert list(targets) == list(order) and list(order) == sorted(order, reverse=True)  # all of them, from the end


def attention_heads(v, r, fig):
    assert "each colour is a head" in v.note and "below" not in v.note  # nothing promised from a folded figure
    assert isinstance(fig, Document) and r.layer >= 1


def compare_cost(v, r, fig):
    assert "forward time" in v.note and "not ranked" in v.note
    latency = fig.data[2]
    assert latency.error_x.array is not None and len(latency.error_x.array) == len(r.costs)
    if len(r.ties) == 1 and len(r.ties[0]) == len(r.costs):
        assert "every interval overlaps another — not ranked" in fig.layout.title.text
    for group in r.ties:  # named as not ranked in the title, rather than ranked by the bars
        assert "not ranked" in fig.layout.title.text.lower()


def compare_guide(v, r, fig):
    assert "selection guide" in v.note and fig.data[0].type == "table"
    questions, answers = fig.data[0].cells.values
    assert len(questions) == len(r.guide) >= 3
    assert any("speed" in q for q in questions) and any("memory" in q for q in questions)


def deberta_shift(v, r, fig):
    assert "wherever they stand" in v.note and "behind the prefix" in fig.layout.title.text


def modernbert_layers(v, r, fig):
    assert "Every layer side by side" in v.note
    checks = r.attention.checks
    assert len(fig.data) == len(checks)  # one panel a layer
    kinds = [c.kind for c in checks]
    assert "full_attention" in kinds and "sliding_attention" in kinds
    panels = [a.text for a in fig.layout.annotations]
    assert [("global" in p, "local" in p) for p in panels] == [
        (k == "full_attention", k != "full_attention") for k in kinds
    ]


def sentence_pair(v, r, fig):
    assert "in order and swapped" in v.note and "in order and swapped" in fig.layout.title.text


def claims_curves(v, r, fig):
    assert "curves over seeds" in v.note and r.comparison.claim in fig.layout.title.text.replace("<br>", " ")


SLIDES = {  # the slide's title -> (the figure its note is about, by its FIGURES name; None: the lesson offers one)
    "Static ×1 vs dynamic masking over 40 epochs": ("coverage", masking_coverage),
    "ALBERT-xxlarge: 4096 wide, still 223M parameters": ("parts", albert_parts),
    "Unroll ALBERT's block to 4× its depth": ("unrolled", albert_unrolled),
    "Dark knowledge at temperature 4": ("soft", distillation_soft),
    "A hot generator": ("pipeline", electra_pipeline),
    "Right-to-left factorization": ("order", xlnet_backwards),
    "Every head of one layer, live": ("view", attention_heads),
    "Every variant on one sentence: what each costs here": ("cost", compare_cost),
    "Which one to choose: cost on a paragraph": ("guide", compare_guide),
    "A longer prefix: BERT's scores move, DeBERTa's first layer does not": ("shift", deberta_shift),
    "512 tokens through local and global layers": ("layers", modernbert_layers),
    "NSP vs SOP: sentence objectives": ("pair", sentence_pair),
    "Does it work?": ("curves", claims_curves),
}


def test_every_default_slide_is_listed_here():
    assert [v.title for v in DEFAULT] == list(SLIDES)


@pytest.mark.slow  # every lesson of the default deck run on the bundled checkpoints (~1-3 min)
@pytest.mark.parametrize("n", range(1, len(DEFAULT) + 1), ids=lambda n: f"slide{n}")
def test_the_staged_figure_is_the_one_the_note_is_about(n):
    v, r, name, fig = run_slide(n)
    wanted, check = SLIDES[v.title]
    figures = importlib.import_module(f"app.figures.{v.page}")
    offered = getattr(figures, "FIGURES", {})
    assert wanted in offered, f"{v.page} offers no figure {wanted!r}"
    assert (name or next(iter(offered))) == wanted  # the view names it (or it is the lesson's key figure)
    built = offered[wanted](r)
    assert built is not None, "the named figure has nothing to draw: the stage would fall back to the key figure"
    if isinstance(built, Document):
        assert fig == built
    else:
        assert json.loads(fig.to_json()) == json.loads(built.to_json())  # the same figure (key order aside)
    check(v, r, fig)


def test_every_lesson_with_several_stage_figures_offers_the_choice():
    """A lesson whose page draws more than one figure from its Result lets a view choose which goes on the stage."""
    from app.lessons import LESSONS

    for lesson in LESSONS:
        page = (importlib.import_module("tests.conftest").ROOT / lesson.path).read_text(encoding="utf-8")
        shown = page.count("ui.show_figure(") + page.count("ui.show_html(")
        spec = importlib.import_module(lesson.library).SPEC
        if shown > 1:
            assert any(p.name == state.FIGURE for p in spec), lesson.slug


def test_the_rope_and_albert_examples_stage_their_own_figures():
    from app.lecture.examples import EXAMPLES

    by_label = {ex.label: ex.query for ex in EXAMPLES}
    assert by_label["Rotary positions 4,000 tokens apart"].get("figure") == "rope"
    assert by_label["ALBERT's shared layers, every layer side by side"].get("figure") == "layers"


# ----------------------------------------------------------------------------- takeaways computed from the output


@pytest.mark.slow  # the sentence heads on the held-out pairs
def test_the_nsp_sop_takeaway_follows_the_heads_on_the_slides_pair():
    from app.lessons import sentence_order as so

    v, r, _, _ = run_slide(12)
    text = so.takeaway(r)
    assert text != so.TAKEAWAY  # not the hand-written line ("only order can tell them apart")
    for h in r.heads:
        (_, ab), (_, ba) = r.user[h.key]
        assert f"{ba:.0%} {h.says}" in text
        caught = ab < 0.5 < ba
        short = h.name.split(" (")[0]
        if caught and all(so.catches_swap(x, r.user) for x in r.heads):
            assert "both heads catch the swap" in text or len(r.heads) == 1
        elif not caught:
            assert f"the {short} does not" in text or "neither" in text or "misses" in text
    for h in r.heads:
        assert f"{r.grid.cell(h.key, 'sop').accuracy:.0%}" in text


def test_the_nsp_sop_takeaway_says_which_head_misses_the_swap():
    from app.lessons import sentence_order as so

    sop = so.Head("albert", "sop", so.HEAD_NAMES["sop"], so.SAYS["sop"], "stand-in")
    nsp = so.Head("bert-nsp", "nsp", so.HEAD_NAMES["nsp"], so.SAYS["nsp"], "stand-in")
    cells = tuple(
        so.Cell(h.key, h.objective, task, c, 100, 0.0, 1.0)
        for h, task, c in ((sop, "nsp", 60), (sop, "sop", 86), (nsp, "nsp", 85), (nsp, "sop", 52))
    )
    grid = so.Grid(cells, {}, "", "", ())
    user = {"albert": ((0.9, 0.1), (0.2, 0.8)), "bert-nsp": ((0.8, 0.2), (0.7, 0.3))}
    r = so.Result((sop, nsp), "A", "B", user, {}, (), {}, {}, {}, 50, (), grid)
    text = so.takeaway(r)
    assert "only the SOP head catches the swap" in text and "the NSP head does not" in text
    assert "80% swapped" in text and "30% not next" in text and "86%" in text and "52%" in text
    user["bert-nsp"] = ((0.3, 0.7), (0.29, 0.71))  # NSP says "not next" both ways: still no catch
    assert "only the SOP head" in so.takeaway(r)
    user["bert-nsp"] = ((0.8, 0.2), (0.29, 0.71))
    assert "both heads catch the swap" in so.takeaway(r)


@pytest.fixture(scope="module")
def whole_word():
    from app.lecture.examples import EXAMPLES
    from app.lessons import masking

    ex = next(ex for ex in EXAMPLES if ex.label == "Whole-word masking on a long word")
    v = deck.view("masking", ex.query, ex.label, ex.why)
    values = handout.values_of(v)
    return masking.run(handout.load_models(v), masking.Inputs.from_values(values), direct)


def test_a_whole_word_views_takeaway_is_about_whole_words(whole_word):
    from app.lessons import masking

    r = whole_word
    text = masking.takeaway(r)
    assert r.unit == "word"
    assert "Whole-word masking" in text and "static" not in text.lower() and "dynamic" not in text.lower()
    targeted, several, cut = masking.word_targets(r)
    assert cut == 0 and several >= 1  # the long word's pieces, always together
    assert f"{targeted} target words" in text and "none left half-hidden" in text


def test_token_masking_can_cut_a_word_and_the_count_says_so(whole_word):
    from app.lessons import masking

    r = whole_word
    pieces = [
        t
        for t, w in enumerate(r.sentence.word_of)
        if w is not None and sum(1 for x in r.sentence.word_of if x == w) > 1
    ]
    kinds = tuple(tuple(1 if t == pieces[0] else 0 for t in range(len(r.sentence.pieces))) for _ in r.kinds)
    cut = replace(r, kinds=kinds)
    assert masking.word_targets(cut)[2] == len(r.kinds)  # one piece of a long word hidden, every epoch
    assert "left half-hidden" in masking.takeaway(cut) and "none left" not in masking.takeaway(cut)


# ----------------------------------------------------------------------------- timing that does not reorder


def test_the_median_interval_is_the_order_statistics_that_cover_it():
    iv = measure.median_interval([5, 1, 9, 3, 7, 2, 8, 4, 6])
    assert (iv["median"], iv["low"], iv["high"]) == (5, 2, 8) and iv["coverage"] == pytest.approx(1 - 20 / 512)
    iv = measure.median_interval([3, 1, 2, 5, 4])
    assert (iv["low"], iv["high"]) == (1, 5) and iv["coverage"] == pytest.approx(0.9375)
    assert measure.median_interval([]) is None


def test_overlapping_intervals_are_grouped_not_ranked():
    ivs = {
        name: measure.median_interval(xs)
        for name, xs in {
            "a": [1.0, 1.1, 1.2, 1.3, 1.4],
            "b": [1.25, 1.5, 1.6, 1.7, 1.8],
            "c": [3.0, 3.1, 3.2, 3.3, 3.4],
            "d": [5.0, 5.1, 5.2, 5.3, 5.4],
        }.items()
    }
    assert measure.overlapping(ivs) == [["a", "b"]]


def test_the_cost_figure_draws_each_median_with_its_interval_and_names_the_overlaps():
    from app.figures import compare as figs

    fig = figs.cost_figure(
        ["A", "B", "C"],
        [1, 2, 3],
        [1, 2, 3],
        [2.0, 2.2, 9.0],
        "CPU",
        [1.5, 2.0, 8.0],
        [2.5, 3.0, 10.0],
        (("A", "B"),),
        0.96,
    )
    latency = fig.data[2]
    assert list(latency.error_x.array) == pytest.approx([0.5, 0.8, 1.0])
    assert list(latency.error_x.arrayminus) == pytest.approx([0.5, 0.2, 1.0])
    assert (
        "Not ranked, intervals overlap: A, B" in fig.layout.title.text
        and "96% interval" in fig.layout.annotations[2].text
    )
    every = figs.cost_figure(["A", "B"], [1, 2], [1, 2], [2.0, 2.2], "CPU", [1.5, 2.0], [2.5, 3.0], (("A", "B"),), 0.96)
    assert "every interval overlaps another — not ranked" in every.layout.title.text
