"""Which figure a view puts on the stage (issue 27): a lesson that offers more than its key figure states the choice
in its SPEC (``app.core.state.figure_param``: the ``figure`` URL parameter, validated like every URL value), its
figures module names the same figures in the same order (``FIGURES``), its page marks each of them for the stage,
the default deck names the figure each slide's title is about, and the handout prints that figure too. No browser
here: tests/e2e/test_stage.py checks the stage itself at 1280×720 and 1920×1080."""

from __future__ import annotations

import importlib
import json
from types import SimpleNamespace

import numpy as np
import pytest

from app.core import state
from app.figures import stage_figure
from app.lecture import deck, handout
from app.lessons import LESSONS
from tests.conftest import ROOT

DEFAULT = deck.default_deck()


def spec_of(slug: str):
    return importlib.import_module(f"app.lessons.{slug}").SPEC


def offered(slug: str):
    return next((p for p in spec_of(slug) if p.name == state.FIGURE), None)


CHOOSING = [lesson for lesson in LESSONS if offered(lesson.slug) is not None]


# ----------------------------------------------------------------------------- the parameter


def test_the_figure_parameter_defaults_to_the_key_figure_and_refuses_other_names_with_a_note():
    p = state.figure_param((("grid", "Targets"), ("coverage", "Coverage")))
    assert (p.name, p.kind, p.default, p.choices) == ("figure", "choice", "grid", ("grid", "coverage"))
    assert p.shown("coverage") == "Coverage" and p.label and p.help
    assert state.parse({"figure": "coverage"}, (p,)) == ({"figure": "coverage"}, [])
    values, notes = state.parse({"figure": "<b>bogus</b>"}, (p,))
    assert values == {"figure": "grid"} and len(notes) == 1
    assert "figure=<b>bogus</b>" in notes[0] and "expected one of grid, coverage" in notes[0]
    assert state.encode({"figure": "grid"}, (p,)) == {}  # the key figure stays out of links
    assert state.encode({"figure": "coverage"}, (p,)) == {"figure": "coverage"}


def test_the_lessons_that_offer_a_choice():
    assert {lesson.slug for lesson in CHOOSING} >= {"masking", "albert_activations", "distillation", "deberta"}


@pytest.mark.parametrize("lesson", CHOOSING, ids=lambda lesson: lesson.slug)
def test_spec_figures_module_and_page_name_the_same_figures(lesson):
    """The SPEC's choices are ``FIGURES``' names in order, the first built by ``key_figure``; the page marks the key
    figure ``key=True`` and every other one ``key="<name>"``, so the stage can find whichever a view names."""
    figures = importlib.import_module(f"app.figures.{lesson.slug}")
    p = offered(lesson.slug)
    assert tuple(figures.FIGURES) == p.choices
    assert figures.FIGURES[p.default] is figures.key_figure
    page = (ROOT / lesson.path).read_text(encoding="utf-8")
    assert "key=True" in page
    for name in p.choices[1:]:
        assert page.count(f'key="{name}"') == 1, (lesson.slug, name)


# ----------------------------------------------------------------------------- the default deck


def test_the_default_deck_names_the_figure_each_title_is_about():
    by_title = {v.title: v.params.get(state.FIGURE) for v in DEFAULT}
    assert by_title["Static ×1 vs dynamic masking over 40 epochs"] == "coverage"  # all three strategies, over epochs
    assert by_title["Unroll ALBERT's block to 4× its depth"] == "unrolled"
    assert by_title["A longer prefix: BERT's scores move, DeBERTa's first layer does not"] == "shift"
    assert by_title["Dark knowledge at temperature 4"] is None  # the key figure: the soft targets themselves


def test_the_default_deck_validates_cleanly_and_round_trips_with_its_figures():
    views, notes = deck.validate(
        [{"page": v.page, "query": v.params, "title": v.title, "note": v.note} for v in DEFAULT]
    )
    assert notes == []
    named = [v.params.get(state.FIGURE) for v in views]
    assert named.count(None) < len(named) and [v.params.get(state.FIGURE) for v in DEFAULT] == named
    assert deck.decode(deck.encode(views))[0] == views
    assert deck.from_json(deck.to_json(views))[0] == views


def test_a_deck_view_naming_a_figure_its_lesson_lacks_is_a_note_not_a_traceback():
    entries = [
        {"page": "masking", "query": {"figure": "attention"}, "title": "wrong name"},
        {"page": "masking", "query": {"figure": "coverage", "epochs": "40"}, "title": "right"},
        {"page": "electra", "query": {"stage": "coverage"}, "title": "no such setting"},  # every lesson offers figure=
        {"page": "deberta", "query": {"figure": "</script><b>x"}, "title": "hostile"},
    ]
    views, notes = deck.validate(entries)
    assert [v.params for v in views] == [{}, {"epochs": "40", "figure": "coverage"}, {}, {}]
    text = "\n".join(notes)
    assert len(notes) == 3
    assert "`figure=attention`" in text and "expected one of grid, coverage" in text
    assert "has no such setting" in text and "View 3" in text
    assert "</script>" not in text.replace("`figure=</script><b>x`", "")  # the value is shown only as code
    # and through the URL form, as a lecturer's own deck arrives
    views2, notes2 = deck.decode(deck.encode([deck.view(e["page"], e["query"], e["title"]) for e in entries]))
    assert views2 == views and notes2 == notes


# ----------------------------------------------------------------------------- the figure a view names


def test_stage_figure_builds_the_named_figure_else_the_key_figure():
    key = SimpleNamespace(name="key")
    module = SimpleNamespace(
        key_figure=lambda r: key, FIGURES={"key": None, "other": lambda r: ("other", r), "empty": lambda r: None}
    )
    module.FIGURES["key"] = module.key_figure
    assert stage_figure(module, 1, "other") == ("other", 1)
    assert stage_figure(module, 1, "key") is key and stage_figure(module, 1, None) is key
    assert stage_figure(module, 1, "empty") is key  # nothing to draw with these settings: the key figure
    assert stage_figure(module, 1, "unknown") is key
    assert stage_figure(SimpleNamespace(key_figure=lambda r: key), 1, "other") is key  # a lesson with no choice


def test_the_unrolled_and_prefix_figures_say_when_there_is_nothing_to_draw():
    from app.figures import albert_activations, deberta

    assert albert_activations.unroll_figure(SimpleNamespace(unrolled=None, albert=None)) is None
    assert deberta.prefix_figure(SimpleNamespace(shifts=())) is None


def test_the_prefix_figure_puts_bert_and_deberta_side_by_side_with_their_largest_change():
    from app.figures import deberta

    def shift(model, family, delta):
        without = np.arange(8, dtype=float).reshape(2, 2, 2)
        return SimpleNamespace(
            model=model,
            family=family,
            pieces=("<a>", "b"),
            without=without,
            shifted=without + delta,
            max_delta=float(np.abs(delta).max()),
        )

    fig = deberta.prefix_figure(
        SimpleNamespace(
            shifts=(shift("DeBERTa", "deberta", np.zeros((2, 2, 2))), shift("BERT", "bert", np.full((2, 2, 2), 0.5)))
        )
    )
    assert [t.name for t in fig.data] == ["BERT", "unchanged", "DeBERTa", "unchanged"]
    assert [t.xaxis for t in fig.data] == ["x", "x", "x2", "x2"]
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["BERT: largest change 0.5", "DeBERTa: largest change 0"]
    assert list(fig.data[2].y) == list(fig.data[2].x)  # DeBERTa's dots on its diagonal
    assert "&lt;a&gt;" in json.dumps(fig.data[0].customdata.tolist())


@pytest.mark.parametrize("n, cells", [(256, 256), (512, 256)])
def test_modernberts_attention_axes_run_over_the_cells_only(n, cells):
    """The square cells used to stretch the key axis to −400…1000 for 512 positions: each panel now shrinks to a
    square (constrain="domain") and both axes run over its cells, −0.5…cells − 0.5 (past 256 positions a cell
    is a block of positions)."""
    from app.figures import modernbert

    fig = modernbert.attention_figure(np.ones((n, n), bool), np.zeros((n, n)), 1, "sliding_attention", 32)
    for x, y in (("xaxis", "yaxis"), ("xaxis2", "yaxis2")):
        assert list(fig.layout[x].range) == [-0.5, cells - 0.5] and fig.layout[x].constrain == "domain"
        assert list(fig.layout[y].range) == [cells - 0.5, -0.5] and fig.layout[y].constrain == "domain"


def test_the_projector_template_styles_every_trace_type_the_app_draws():
    """white_template keeps trace defaults only for the types the app draws (copying all 24 cost 8 ms a figure):
    a new go.<Trace> in app/ must be added to DRAWN_TRACES."""
    import re
    from pathlib import Path

    from app.figures import DRAWN_TRACES, white_template

    root = Path(__file__).resolve().parents[1] / "app"
    used = {m.lower() for p in root.rglob("*.py") for m in re.findall(r"\bgo\.([A-Z][A-Za-z]+)\(", p.read_text())}
    assert used - {"figure"} <= set(DRAWN_TRACES), used
    assert set(white_template().to_plotly_json()["data"]) == set(DRAWN_TRACES)


def test_every_shape_a_figure_marks_stays_visible_on_a_projector_and_on_paper():
    """plotly's simple_white draws shapes 0 px wide: ALBERT's 'the model stops' line vanished in presenter mode."""
    from app.figures import white_template

    t = white_template()
    assert t.layout.shapedefaults.to_plotly_json() == {}
    assert t.layout.xaxis.showgrid is False  # otherwise simple_white
    import plotly.io as pio

    assert pio.templates["simple_white"].layout.shapedefaults.line.width == 0  # the global template untouched


# ----------------------------------------------------------------------------- the handout


@pytest.mark.parametrize(
    "title, marker",
    [
        ("Static ×1 vs dynamic masking over 40 epochs", "positions ever a target"),
        ("Unroll ALBERT's block to 4× its depth", "change per application"),
    ],
)
def test_the_handout_prints_the_figure_the_view_names(title, marker):
    v = next(v for v in DEFAULT if v.title == title)
    s = handout.section(v, handout.load_models(v), v.link("http://hall.example"), number=1)
    assert s.figure and marker in s.figure, s.problem
    key = handout.section(
        deck.view(v.page, {k: x for k, x in v.params.items() if k != state.FIGURE}, title),
        handout.load_models(v),
        "http://hall.example",
        number=2,
    )
    assert key.figure and marker not in key.figure  # without the name: the key figure, as before


def test_presenter_style_sets_large_black_type_and_fits_a_long_title_on_one_line():
    """On a projector the figure keeps its own style (Streamlit's theme is off there: it greys and shrinks the
    ticks): ticks and axis titles at PRESENTER_FONT in the page's typeface, small notes grown, and a long title
    smaller rather than wrapped (a wrapped title ran into legends above the plot)."""
    import plotly.graph_objects as go
    from app.ui import stage

    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    fig.add_annotation(text="the model stops: L = 6", x=0.5, y=0.5, font=dict(size=11))
    fig.add_annotation(text="already large", x=0.2, y=0.2, font=dict(size=30))
    long = "Dynamic masking beats one static mask reused every epoch. — verdict: <b>not settled by 3 seeds</b>"
    fig.update_layout(title_text=long)
    stage.presenter_style(fig)
    assert fig.layout.font.size == stage.PRESENTER_FONT and fig.layout.font.color == "#000"
    assert "Source Sans" in fig.layout.font.family
    assert [a.font.size for a in fig.layout.annotations] == [stage.PRESENTER_NOTE_FONT, 30]
    assert fig.layout.title.text == long and "<br>" not in fig.layout.title.text
    size = fig.layout.title.font.size
    assert stage.PRESENTER_NOTE_FONT <= size < stage.PRESENTER_FONT + 2
    assert 0.5 * size * (len(long) - len("<b></b>")) <= stage.PRESENTER_TITLE_PX
    assert stage.title_size("Parameters by part") == stage.PRESENTER_FONT + 2
