"""ELECTRA's P(replaced) colour scale is one scale, defined once (app/figures/electra.py ``SCORE``), and the same on
a laptop, on a projector and in the handout (issue 27: each renderer drew its own).

ELECTRA's figures skip plotly.py's validation (speed), so a scale *name* reached plotly.js unexpanded — and
plotly.js does not know "RdBu_r": the page's theme, presenter mode's template and the handout's plain plotly.js
each fell back to a different default. A scale spelled out as colours draws the same everywhere.
"""

import json

import plotly.io as pio

from app.figures import compare as compare_figures, electra as figures
from app.ui import stage
from tests.test_electra import hand_round


def scales(fig) -> list:
    """The colour scales of the traces that show P(replaced), as the figure's JSON carries them to plotly.js."""
    data = json.loads(fig.to_json())["data"]
    return [t["colorscale"] for t in data if "P(replaced)" in json.dumps(t.get("colorbar", {}))]


def test_the_score_scale_is_spelled_out_as_colours():
    assert isinstance(figures.SCORE, (list, tuple)) and len(figures.SCORE) >= 2
    assert all(isinstance(stop, (int, float)) and color.startswith("rgb") for stop, color in figures.SCORE)


def test_one_scale_on_the_page_on_the_projector_and_in_the_handout():
    page = figures.pipeline_figure(hand_round())
    expected = json.loads(json.dumps(figures.SCORE))
    assert scales(page) and all(s == expected for s in scales(page))
    projector = figures.pipeline_figure(hand_round())
    stage.presenter_style(projector)  # presenter mode's restyle: its template must not bring a scale of its own
    assert scales(projector) == scales(page)
    handout = json.loads(pio.to_json(page, validate=False))  # as app/lecture/handout.py hands it to plotly.js
    assert all(
        t["colorscale"] == expected for t in handout["data"] if "P(replaced)" in json.dumps(t.get("colorbar", {}))
    )
    side_by_side = compare_figures.discriminator_figure([("as written", ["a", "b"], [0.1, 0.9])])
    assert compare_figures.SCORE is figures.SCORE and scales(side_by_side) == [expected]
