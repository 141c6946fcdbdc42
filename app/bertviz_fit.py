"""How much of a model's attention bertviz's views carry, and how tall they draw: the rules the attention lesson
(app/lessons/attention.py: its notes, its Result) and the document's renderer (app/figures/bertviz_offline.py) share.
Pure Python.

A view's document writes out every weight it is sent (layers · heads · T² of them, twice as many for a pair, for
bertviz's A/B filters); above ``MAX_WEIGHTS`` it gets fewer layers. Layers count from 1, as in bertviz's menus here.
"""

from __future__ import annotations

MAX_WEIGHTS = 1_000_000  # weights one document carries (about 5 MB); above it, fewer layers are sent


def fit_layers(
    view: str, n_layers: int, n_heads: int, length: int, pair: bool, layer: int, budget: int | None = None
) -> list[int]:
    """The layers (from 1) to send so the document carries at most ``budget`` (default ``MAX_WEIGHTS``)
    weights: all of them when they fit; otherwise the head view gets only ``layer`` and the model view the
    layers from ``layer`` on that fit. A pair sends about twice as many (bertviz's A/B filters)."""
    budget = MAX_WEIGHTS if budget is None else budget
    per_layer = n_heads * length * length * (2 if pair else 1)
    if n_layers * per_layer <= budget:
        return list(range(1, n_layers + 1))
    if view == "head":
        return [layer]
    count = max(1, budget // per_layer)
    first = max(1, min(layer, n_layers - count + 1))
    return list(range(first, min(n_layers, first + count - 1) + 1))


def height_hint(view: str, n_layers: int, n_heads: int, length: int) -> int:
    """Pixels the view needs (the iframe's height), from the sizes bertviz's scripts draw with."""
    controls = 40
    if view == "head":
        return int(controls + 30 + 22.5 * (length + 1) + 20)
    thumb = length * 7 * (12 / n_heads) + 10
    axis = 15 + 5 + 13 + 5
    detail = length * 18 + 2 * 15 + 25
    return int(controls + max(n_layers * thumb + axis, detail) + 20)
