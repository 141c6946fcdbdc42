"""Hostile text through every lesson into its figures (issue 24 item 5): markup, a closing script tag, a bidi
override, a zero-width space and a markdown image typed in the box reach no figure as themselves.

Plotly renders a subset of HTML in text, hover text, tick labels, annotations and titles, and a bidi override
(U+202E) or a zero-width space (U+200B) would reorder or hide what a student reads there: every value a user
controls goes through ``app.core.text.html`` (visible + HTML escape). The markdown checks are
tests/pages/test_injection.py; this walks the figures' JSON (``fig.to_plotly_json()``), every string in it.

Each lesson runs its own ``run`` on the bundled models (as the handout does), then builds every figure its page
builds, from the Result, as the page calls them.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from app.figures.words import figure_words

from app.figures import Document
from app.lessons import LESSONS

HOSTILE = "The girl <img src=x onerror=alert(1)> found </script> a \u202eball\u200b in ![x](http://evil) the park."
TEXT_FIELDS = ("text", "text_b", "edit_word")  # the boxes a visitor types in (and a link can fill)
RAW = ("<img", "</script", "\u202e", "\u200b")  # must never reach a figure as themselves
SEEN = ("girl", "found", "ball", "park", "&lt;", "⟨U+")  # the text did reach the figures (a small vocabulary reads
# "<" as [UNK], and BERT's tokenizer drops format characters before they are pieces)


def strings(value) -> list[str]:
    """Every string inside a figure's JSON: dicts, lists, tuples and numpy arrays (customdata) walked."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in strings(v)]
    if isinstance(value, np.ndarray) and value.dtype == object:
        return strings(value.tolist())
    return []


def offences(figure) -> list[tuple[str, str]]:
    """(what, where) for every hostile piece that reaches ``figure`` as itself. A plotly figure: any of RAW in any
    string. A bertviz document (its own scripts, so its own ``</script>`` tags): no raw ``<img`` in the page, and no
    bidi or zero-width character, raw or as a JSON escape that the browser reads back into one."""
    if isinstance(figure, Document):
        checks = [(figure.html, ("<img", "\u202e", "\u200b")), (figure.html.lower(), ("\\u202e", "\\u200b"))]
    else:
        checks = [(s, RAW) for s in strings(figure.to_plotly_json())]
    return [
        (raw, s[max(0, s.index(raw) - 80) : s.index(raw) + 80])
        for s, forbidden in checks
        for raw in forbidden
        if raw in s
    ]


def _texts(figure) -> list[str]:
    return [figure.html] if isinstance(figure, Document) else strings(figure.to_plotly_json())


def models_for(lib, inputs, bundled) -> dict:
    keys = tuple(getattr(lib, "MODELS", ())) or ((inputs.variant,) if hasattr(inputs, "variant") else ())
    return {k: bundled(k) for k in keys}


@pytest.mark.parametrize(
    "slug",
    [
        pytest.param(lesson.slug, marks=pytest.mark.slow) if lesson.slug == "sentence_order" else lesson.slug
        for lesson in LESSONS
    ],
)  # sentence_order: 30 s of pair pools
def test_hostile_text_reaches_no_figure_as_markup_or_an_invisible_character(slug, bundled):
    lib = importlib.import_module(f"app.lessons.{slug}")
    f = importlib.import_module(f"app.figures.{slug}")
    fields = {name: HOSTILE for name in TEXT_FIELDS if name in lib.Inputs.__dataclass_fields__}
    inputs = lib.Inputs(**fields)
    r = lib.run(models_for(lib, inputs, bundled), inputs)
    figures = f.every_figure(r)
    assert figures, slug
    assert all(figure_words(fig).strip() for fig in figures if hasattr(fig, "layout")), slug  # every one in words
    found = [o for fig in figures for o in offences(fig)]
    assert not found, f"{slug}: {found[:3]}"
    if fields and slug not in TEXT_NOT_IN_FIGURES:  # the rule: what a visitor types reaches a figure
        everything = [s for fig in figures for s in _texts(fig)]
        assert any(w in s for s in everything for w in SEEN), (
            f"{slug}: the text typed in {sorted(fields)} reaches none of app/figures/{slug}.py's every_figure(r) — a "
            "lesson with a text box shows that text in a figure (escaped with app.core.text.html); if it must not, "
            "add the lesson to TEXT_NOT_IN_FIGURES with the reason"
        )


#: lessons whose text box does not reach their figures, and why (the rule above is otherwise for every lesson)
TEXT_NOT_IN_FIGURES = {
    "sentence_order": "its figures are the heads' accuracy on generated pairs; the typed pair is shown as text",
}


def test_every_figure_module_lists_its_figures():
    """Each lesson's figure module says which figures its page draws (``every_figure(r)``, key figure first), so this
    test, and any other that walks them, needs no list of its own: a new lesson is walked as soon as it exists."""
    import inspect

    for lesson in LESSONS:
        f = importlib.import_module(f"app.figures.{lesson.slug}")
        assert callable(getattr(f, "every_figure", None)), (
            f"app/figures/{lesson.slug}.py has no every_figure(r): list the figures its page draws, key figure first"
        )
        assert "key_figure(r)" in inspect.getsource(f.every_figure), lesson.slug
    assert set(TEXT_NOT_IN_FIGURES) <= {lesson.slug for lesson in LESSONS}
