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

from app.figures import Document
from app.lessons import LESSONS

HOSTILE = "The girl <img src=x onerror=alert(1)> found </script> a \u202eball\u200b in ![x](http://evil) the park."
TEXT_FIELDS = ("text", "text_b", "edit_word")  # the boxes a visitor types in (and a link can fill)
RAW = ("<img", "</script", "\u202e", "\u200b")  # must never reach a figure as themselves
SEEN = ("girl", "found", "ball", "park", "&lt;", "⟨U+")  # the text did reach the figures (a small vocabulary reads
# "<" as [UNK], and BERT's tokenizer drops format characters before they are pieces)


def _figures(slug: str, f, r) -> list:
    """Every figure pages/<slug>.py builds from ``r`` (``f`` is app.figures.<slug>), the key figure first."""
    key = f.key_figure(r)
    more = {
        "albert_activations": lambda: [f.similarity_heatmaps(r), r.unrolled and f.unroll_figure(r),
                                       f.trajectory_figure(r) if r.albert.path is not None or r.bert.path is not None
                                       else None],
        "albert_params": lambda: [r.yours and f.embedding_sweep_figure(r), f.compute_scatter(r)],
        "attention": lambda: [f.attention_heatmap(r)],
        "claims": lambda: [r.has_results and f.finals_figure(r)],
        "compare": lambda: [f.token_grid_figure(r), r.guesses and f.fill_mask_figure(r),
                            r.electra and f.discriminator_figure(r.electra)],
        "deberta": lambda: [f.positions_figure(r), f.buckets_figure(r), r.shifts and f.shift_figure(r.shifts),
                            f.prediction_figure(r.prediction)],
        "distillation": lambda: [f.temperature_figure(r), f.position_kl_figure(r), f.claims_figure(r.claims)],
        "electra": lambda: [f.edit_figure(r), f.signal_figure(r.signal), r.curves and f.auc_curve_figure(r.curves)],
        "masking": lambda: [f.coverage_figure(r), f.distinct_masks_figure(r), r.spans and f.span_length_figure(r.spans),
                            r.predictions and f.predictions_figure(r)],
        "modernbert": lambda: [f.fill_figure(r), f.spectrum_figure(r), f.relative_figure(r.rope), f.layers_figure(r),
                               f.cost_figure(r), f.timing_figure(r), f.ffn_figure(r.feed_forwards),
                               f.gate_figure(r.gate), f.batch_figure(r.unpadding)],
        "sentence_order": lambda: [f.kinds_figure(r), f.accuracy_figure(r)],
        "xlnet": lambda: [f.stream_masks_figure(r.view), f.attention_figure(r)],
    }[slug]
    return [key, *(fig for fig in more() if fig)]


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
        checks = [(figure.html, ("<img", "\u202e", "\u200b")),
                  (figure.html.lower(), ("\\u202e", "\\u200b"))]
    else:
        checks = [(s, RAW) for s in strings(figure.to_plotly_json())]
    return [(raw, s[max(0, s.index(raw) - 80):s.index(raw) + 80]) for s, forbidden in checks for raw in forbidden
            if raw in s]


def _texts(figure) -> list[str]:
    return [figure.html] if isinstance(figure, Document) else strings(figure.to_plotly_json())


def models_for(lib, inputs, bundled) -> dict:
    keys = tuple(getattr(lib, "MODELS", ())) or ((inputs.variant,) if hasattr(inputs, "variant") else ())
    return {k: bundled(k) for k in keys}


@pytest.mark.parametrize("slug", [pytest.param(lesson.slug, marks=pytest.mark.slow) if lesson.slug == "sentence_order"
                                  else lesson.slug for lesson in LESSONS])  # sentence_order: 30 s of pair pools
def test_hostile_text_reaches_no_figure_as_markup_or_an_invisible_character(slug, bundled):
    lib = importlib.import_module(f"app.lessons.{slug}")
    f = importlib.import_module(f"app.figures.{slug}")
    fields = {name: HOSTILE for name in TEXT_FIELDS if name in lib.Inputs.__dataclass_fields__}
    inputs = lib.Inputs(**fields)
    r = lib.run(models_for(lib, inputs, bundled), inputs)
    figures = _figures(slug, f, r)
    assert figures, slug
    found = [o for fig in figures for o in offences(fig)]
    assert not found, f"{slug}: {found[:3]}"
    if fields and slug != "sentence_order":  # no user text enters sentence order's figures (by design)
        everything = [s for fig in figures for s in _texts(fig)]
        assert any(w in s for s in everything for w in SEEN), f"{slug}: the text never reached a figure"


def test_every_lesson_is_walked():
    """A new lesson adds its page's figures to _figures above (the test fails with a KeyError until it does)."""
    import inspect

    source = inspect.getsource(_figures)
    assert all(f'"{lesson.slug}":' in source for lesson in LESSONS)
