"""app/figures/words.py: any plotly figure in words, read off the figure (its text alternative when the lesson wrote
none): the title, the axes, each trace's extremes, typed labels quoted and plotly's markup undone."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.figures.words import MAX_CHARS, MAX_TRACES, figure_words


def test_bars_say_their_highest_and_lowest_with_the_labels_as_typed():
    fig = go.Figure(go.Bar(x=["a &lt;b&gt;", "HACKED", "c"], y=[1, 5, 2], name="BERT"))
    fig.update_layout(title="Pieces <b>per</b> word", yaxis_title="pieces")
    assert figure_words(fig) == (
        "Pieces per word. Axes: up, pieces. BERT: 3 bars, highest «HACKED» 5, lowest «a <b>» 1."
    )


def test_horizontal_bars_read_their_categories_from_y():
    fig = go.Figure(go.Bar(y=["park", "sky"], x=[0.217, 0.036], orientation="h"))
    assert figure_words(fig) == "A figure. 2 bars, highest «park» 0.217, lowest «sky» 0.036."


def test_a_line_says_where_it_starts_ends_and_peaks():
    fig = go.Figure(go.Scatter(x=[250, 500, 750], y=[0.5, 0.91, 0.8], mode="lines+markers", name="ELECTRA"))
    fig.update_layout(xaxis_title="training step", yaxis_title="ROC-AUC")
    assert figure_words(fig) == (
        "A figure. Axes: across, training step; up, ROC-AUC. ELECTRA: a line of 3 from 250 "
        "(0.5) to 750 (0.8), highest 0.91 at 500, lowest 0.5 at 250."
    )


def test_a_shaded_band_is_said_as_a_band_not_a_line_back_to_its_start():
    """A ± 1 sd band is one trace drawn out along its top and back along its bottom (fill="toself"): read as a line
    it went "from 0 to 0" (the claims page's learning curves)."""
    x = [0.0, 2e12, 4e12]
    band = go.Scatter(x=x + x[::-1], y=[0.51, 0.53, 0.52, 0.50, 0.49, 0.50], fill="toself", name="BERT (± 1 sd)")
    words = figure_words(go.Figure(band))
    assert "BERT (± 1 sd): a band over 0 to 4e+12, between 0.49 and 0.53" in words and "from 0" not in words


def test_a_grid_names_its_hottest_and_coldest_cells_by_their_labels():
    fig = go.Figure(go.Heatmap(z=[[1, 2], [3, np.nan]], x=["the", "girl"], y=["layer 1", "layer 2"]))
    assert figure_words(fig) == (
        "A figure. A grid of 2 rows × 2 columns, highest 3 at «layer 2» × «the», lowest 1 at «layer 1» × «the»."
    )


def test_a_large_grid_is_read_at_once_and_hidden_traces_are_left_out():
    z = np.zeros((256, 256))
    z[7, 9] = 0.5
    fig = go.Figure([go.Heatmap(z=z), go.Scatter(x=[1], y=[1], visible="legendonly", name="ghost")])
    said = figure_words(fig)
    assert "a grid of 256 rows × 256 columns, highest 0.5 at 7 × 9" in said.lower() and "ghost" not in said


def test_many_traces_are_counted_and_the_words_stay_short():
    fig = go.Figure([go.Scatter(x=list(range(50)), y=list(range(50)), name=f"seed {i} " + "x" * 60) for i in range(9)])
    said = figure_words(fig)
    assert len(said) <= MAX_CHARS and said.count("seed ") <= MAX_TRACES
    fig = go.Figure([go.Bar(x=["a"], y=[1], name=f"s{i}") for i in range(9)])
    assert figure_words(fig).endswith(f"And {9 - MAX_TRACES} more traces.")


def test_empty_and_unknown_traces_are_said_plainly():
    fig = go.Figure([go.Bar(x=[], y=[]), go.Pie(values=[1, 2], name="share")])
    assert figure_words(fig) == "A figure. No bars; share: a pie trace."
