"""Kept figures (app/figures/__init__.py ``kept``): a builder called again with equal arguments gives the same
figure, made from the stored data without plotly's checks, and never one built from other arguments."""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from app import figures
from app.ui import stage


@dataclass(frozen=True)
class Result:
    values: tuple[float, ...]
    title: str


calls: list[Result] = []


@figures.kept
def bars(r: Result, *, colour: str = "#1f77b4") -> go.Figure:
    calls.append(r)
    fig = go.Figure(go.Bar(x=list(range(len(r.values))), y=list(r.values), marker_color=colour))
    fig.update_layout(title=r.title, height=300)
    return fig


@figures.kept
def nothing(r) -> None:
    calls.append(r)
    return None


def test_equal_arguments_give_the_stored_figure_and_other_arguments_a_new_one():
    calls.clear()
    first = bars(Result((1.0, 2.0, 3.0), "one"))
    again = bars(Result((1.0, 2.0, 3.0), "one"))  # an equal result, another object
    assert len(calls) == 1
    assert again is not first and again.to_plotly_json() == first.to_plotly_json()
    other = bars(Result((1.0, 2.0, 4.0), "one"))
    titled = bars(Result((1.0, 2.0, 3.0), "two"))
    coloured = bars(Result((1.0, 2.0, 3.0), "one"), colour="#000000")
    assert len(calls) == 4
    assert list(other.data[0].y) == [1.0, 2.0, 4.0] and titled.layout.title.text == "two"
    assert coloured.data[0].marker.color == "#000000"


def test_arrays_come_back_as_arrays():
    """Plotly ≥ 6 packs numpy arrays as {"dtype", "bdata"} in ``to_dict``; a kept figure keeps the arrays."""

    @figures.kept
    def heat(z: tuple) -> go.Figure:
        return go.Figure(go.Heatmap(z=np.array(z, dtype=np.float32), x=list(range(len(z[0])))))

    z = ((1.0, 2.0), (3.0, 4.0))
    built, kept = heat(z), heat(z)
    assert isinstance(kept.data[0].z, np.ndarray) and kept.data[0].z.dtype == built.data[0].z.dtype
    assert np.array_equal(kept.data[0].z, built.data[0].z) and type(kept.data[0].x) is type(built.data[0].x)


def test_a_figure_given_back_is_a_copy_a_page_may_change():
    calls.clear()
    r = Result((5.0, 6.0), "mine")
    fig = bars(r)
    fig.update_layout(height=999, title="changed")
    fig.data[0].y = (0.0, 0.0)
    kept = bars(r)
    kept.update_layout(height=111)
    assert bars(r).layout.height == 300 and bars(r).layout.title.text == "mine"
    assert list(bars(r).data[0].y) == [5.0, 6.0]
    assert len(calls) == 1


def test_what_cannot_be_kept_is_built_every_time():
    calls.clear()
    lock = threading.Lock()  # cannot be pickled
    bars(Result((1.0,), "x"), colour="#111111")
    before = figures.kept_counts()
    for _ in range(2):
        nothing(lock)
        nothing(Result((1.0,), "x"))  # a builder that gives no figure (nothing to draw) keeps nothing
    assert len(calls) == 5 and figures.kept_counts()["built"] == before["built"]


def test_the_store_keeps_the_most_recently_used(monkeypatch):
    monkeypatch.setattr(figures, "KEPT_FIGURES", 3)
    calls.clear()
    for i in range(5):
        bars(Result((float(i),), "n"))
    bars(Result((4.0,), "n"))
    assert len(calls) == 5
    bars(Result((0.0,), "n"))  # dropped: built again
    assert len(calls) == 6


def test_presenter_style_styles_a_kept_figure_as_a_built_one():
    r = Result((3.0, 1.0, 2.0), "A title for the projector")
    built = bars.__wrapped__(r)
    kept = bars(r)
    bars(r)
    stage.presenter_style(built)
    stage.presenter_style(kept)
    assert kept.to_plotly_json() == built.to_plotly_json()
    assert kept.layout.template.layout.plot_bgcolor == "white"


def plain(fig: go.Figure):
    """The figure as the browser gets it (JSON), as plain data."""
    return json.loads(pio.to_json(fig, validate=False))


LESSONS = ("albert_activations", "compare", "deberta", "masking", "modernbert", "xlnet")  # lessons whose figures
# have subplots, shapes, annotations and heatmaps


@pytest.mark.parametrize("slug", sorted(LESSONS))
def test_every_figure_of_a_lesson_comes_back_from_the_store_as_it_was_built(slug, default_result):
    import importlib

    module = importlib.import_module(f"app.figures.{slug}")
    r = default_result(slug)  # the session's default view (tests/conftest.py): its MODELS, the bundled ones
    builders = {
        name: getattr(module, name)
        for name in dir(module)
        if callable(getattr(module, name)) and hasattr(getattr(module, name), "__wrapped__")
    }
    checked = 0
    for name, build in builders.items():
        try:
            built = build.__wrapped__(copy.deepcopy(r))
        except (AttributeError, TypeError):  # a builder of a part of the result (r.shifts, r.view, ...)
            continue
        if not isinstance(built, go.Figure):
            continue
        build(r)
        again = build(copy.deepcopy(r))
        assert plain(again) == plain(built), name
        for mine, theirs in zip(again.data, built.data):  # what code reads from the figure, not only its JSON
            for prop in ("x", "y", "z", "text", "customdata"):
                a, b = getattr(mine, prop, None), getattr(theirs, prop, None)
                assert type(a) is type(b), (name, prop, type(a), type(b))
                if isinstance(b, np.ndarray):
                    assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=b.dtype.kind == "f"), (name, prop)
        stage.presenter_style(built)
        stage.presenter_style(again)
        assert plain(again) == plain(built), name
        checked += 1
    assert checked >= 2


def test_a_folded_figure_is_named_by_its_title_read_once():
    """The line that stands in a folded figure's place reads the title's escaped words once: a typed ``<b>`` stays
    ``<b>`` on screen, not ``&lt;b&gt;`` (the builders escape user words in titles; ``fold`` escapes again)."""
    fig = go.Figure(layout={"title": {"text": "Soft targets for &lt;b&gt; &amp; co<br><sup>second line</sup>"}})
    assert stage.figure_title(fig) == "Soft targets for <b> & co"


def test_an_untouched_kept_figure_is_sent_and_described_without_being_made(monkeypatch):
    """A kept figure given back is made (plotly's deep copies) only when something reads or changes it; sent to the
    browser unchanged, its wire form and words come from the store by its digest, equal to the built figure's."""
    from app.figures.words import figure_words

    r = Result((7.0, 1.0, 4.0), "Sent as kept")
    built = bars.__wrapped__(r)
    bars(r)
    made = []
    real_init = go.Figure.__init__
    monkeypatch.setattr(go.Figure, "__init__", lambda self, *a, **k: (made.append(1), real_init(self, *a, **k))[1])
    first = bars(r)
    assert isinstance(first, go.Figure) and figures.kept_key(first) is not None
    assert figures.wire_form(first) == plain(built) and figure_words(first) == figure_words(built)
    assert figures.kept_key(first) is None  # made once, for the first sending; the store says it from now on
    figure_words(bars(r))  # (the words of a made figure are not kept: those of the next untouched one are)
    again, wire, words = bars(r), plain(built), figure_words(built)
    made.clear()
    assert figures.wire_form(again) == wire and figure_words(again) == words
    assert made == [] and figures.kept_key(again) is not None  # sent and described without being made
    # read or changed, it is the figure it stands for, made from a fresh copy
    assert list(again.data[0].y) == [7.0, 1.0, 4.0] and figures.kept_key(again) is None and made == [1]
    changed = bars(r)
    changed.update_layout(height=123)
    assert figures.wire_form(changed)["layout"]["height"] == 123 and bars(r).layout.height == 300
    # copied or pickled, it is a plain Figure equal to the built one
    import pickle

    for twin in (copy.deepcopy(bars(r)), pickle.loads(pickle.dumps(bars(r)))):
        assert type(twin) is go.Figure and plain(twin) == plain(built)


def test_the_same_result_object_is_not_pickled_again_to_find_its_figure(monkeypatch):
    """A Result is one shared, frozen object: its digest is remembered by its identity (held weakly), so a rerun
    finds its figure without pickling it again; an equal Result that is another object is pickled and finds it too."""
    import pickle as real_pickle

    calls.clear()
    r = Result((2.0, 9.0), "the same object")
    bars(r)
    pickled = []

    class Counting:
        HIGHEST_PROTOCOL = real_pickle.HIGHEST_PROTOCOL
        loads = staticmethod(real_pickle.loads)

        @staticmethod
        def dumps(obj, protocol=None):
            pickled.append(obj)
            return real_pickle.dumps(obj, protocol=protocol)

    monkeypatch.setattr(figures, "pickle", Counting)
    assert list(bars(r).data[0].y) == [2.0, 9.0] and pickled == []
    assert bars(Result((2.0, 9.0), "the same object")).layout.title.text == "the same object" and len(pickled) == 1
    assert len(calls) == 1
    other = Result((2.0, 9.5), "the same object")  # another Result: its own figure
    assert list(bars(other).data[0].y) == [2.0, 9.5] and len(calls) == 2
