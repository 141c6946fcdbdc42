"""bertviz's head view tells heads apart by colour (issue 52): the palette it is given (app/figures/bertviz_offline.py
``HEAD_COLOURS``) must stay distinguishable to a red-green colour-blind student, checked with a simulator — Machado,
Oliveira & Fernandes (2009), severity 1.0, applied in linear RGB — and CIE76 colour differences in CIELAB. d3's
category10, which bertviz uses, fails the same check (its green and red heads); and every head carries its number."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from app.figures import bertviz_offline as bv

MACHADO = {  # full-severity dichromacy, linear RGB
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
}
CATEGORY10 = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
DISTINCT = 12.0  # ΔE*ab: two colours closer than this read as one at a glance (a just-noticeable difference is ~2.3)


def linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(rgb_linear: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb_linear
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def closest_pair(palette, vision: str) -> float:
    seen = [lab(np.clip(MACHADO[vision] @ linear(c), 0, 1)) for c in palette]
    return min(float(np.linalg.norm(a - b)) for a, b in itertools.combinations(seen, 2))


@pytest.mark.parametrize("vision", sorted(MACHADO))
def test_head_colours_stay_apart_for_a_colour_blind_student(vision):
    assert closest_pair(bv.HEAD_COLOURS, vision) >= DISTINCT
    assert closest_pair(CATEGORY10, vision) < DISTINCT  # what bertviz's own palette does (the check can fail)


def test_the_head_view_draws_with_that_palette_and_numbers_every_head():
    js = bv.view_script(
        "head",
        {"attention": [], "default_filter": "0", "root_div_id": "x", "layer": 0, "heads": [0], "include_layers": [0]},
    )
    assert "d3.schemeCategory10" not in js and f'd3.scaleOrdinal({list(bv.HEAD_COLOURS)!r}'.replace("'", '"') in js
    assert (
        '.append("text")\n            .text((d, i) => i + 1)' in js
    )  # each head's number (from 1, as the page counts)
