"""Figures for the sentence-objective lesson: ``sentence_order.run``'s Result in, plotly Figure out. No user text enters
these figures (the pairs are called (A, B) and (B, A)); head names and kinds are the lesson's own words, escaped anyway
with app.core.text.html.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import plotly.graph_objects as go

from app.core.text import html as esc
from app.sentence_pairs import KIND_LABELS, KINDS
from app.figures import kept

COLOURS = {"sop": "#4c78a8", "nsp": "#f58518"}  # ALBERT's SOP head, BERT's NSP head
ORDERS = ("(A, B): as typed", "(B, A): swapped")


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title=title,
        height=height,
        margin=dict(l=10, r=10, t=70, b=30),
        plot_bgcolor="white",
        legend=dict(orientation="h", y=-0.2),
    )
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


Probs = tuple[float, float]  # (P(B follows A), P(it does not))


@kept
def order_figure(heads: list[tuple[str, str, str]], user: dict[str, tuple[Probs, Probs]]) -> go.Figure:
    """The key figure: each head's P(B does not follow A) for the pair as typed and swapped.

    heads: (key, objective, name) in order; user[key] = ((P0, P1) for (A, B), (P0, P1) for (B, A)).
    One bar trace per head; y = P1 for the two orders. A dashed line marks 0.5 (the head's decision)."""
    fig = go.Figure()
    for key, objective, name in heads:
        (ab, ba) = user[key]
        says = "swapped" if objective == "sop" else "not next"
        fig.add_trace(
            go.Bar(
                x=list(ORDERS),
                y=[ab[1], ba[1]],
                name=f"{esc(name)}: P({says})",
                marker_color=COLOURS[objective],
                text=[f"{ab[1]:.0%}", f"{ba[1]:.0%}"],
                textposition="outside",
                customdata=[[ab[0]], [ba[0]]],
                hovertemplate=(
                    f"{esc(name)}<br>%{{x}}<br>P({says}) = %{{y:.4f}}<br>"
                    "P(follows) = %{customdata[0]:.4f}<extra></extra>"
                ),
            )
        )
    fig.add_hline(
        y=0.5,
        line_dash="dash",
        line_color="#333",
        line_width=2,
        layer="above",
        annotation_text="0.5: the head's decision",
        annotation_position="top left",
        annotation_font_size=14,
    )
    fig.update_yaxes(range=[0, 1.12], title_text="P(B does not follow A)", tickformat=".0%")
    fig.update_layout(barmode="group")
    return _layout(fig, "Each head on your two sentences, in order and swapped", 420)


def _heads(r) -> list[tuple[str, str, str]]:
    """(key, objective, name) of every head the lesson ran, in order."""
    return [(h.key, h.objective, h.name) for h in r.heads]


@kept
def kinds_figure(r) -> go.Figure:
    """Mean P(B does not follow A) per kind of generated pair (in order, B from another story, swapped:
    ``r.mean_not``), one bar trace per head."""
    heads, mean_not, kinds, kind_labels, n_pairs = _heads(r), r.mean_not, list(KINDS), KIND_LABELS, r.n_pairs
    fig = go.Figure()
    x = [_two_lines(esc(kind_labels[k])) for k in kinds]
    for key, objective, name in heads:
        y = [mean_not[key][k] for k in kinds]
        fig.add_trace(
            go.Bar(
                x=x,
                y=y,
                name=esc(name),
                marker_color=COLOURS[objective],
                text=[f"{v:.0%}" for v in y],
                textposition="outside",
                hovertemplate=f"{esc(name)}<br>%{{x}}<br>mean P(does not follow) = %{{y:.4f}} "
                f"over {n_pairs} pairs<extra></extra>",
            )
        )
    fig.add_hline(y=0.5, line_dash="dot", line_color="#555")
    fig.update_yaxes(range=[0, 1.12], title_text="mean P(B does not follow A)", tickformat=".0%")
    fig.update_xaxes(tickangle=0)  # two short lines a label: slanted, the first was cut in a half-width column
    fig.update_layout(barmode="group")
    return _layout(fig, f"On {n_pairs} held-out pairs of each kind", 400)


def _two_lines(label: str) -> str:
    """A kind's label on two lines, broken after its colon or before its bracket: "swapped (B, A):<br>SOP's
    negative", "in order<br>(A, B)"."""
    if ": " in label:
        return label.replace(": ", ":<br>", 1)
    return label.replace(" (", "<br>(", 1)


@kept
def accuracy_figure(r) -> go.Figure:
    """Each head (rows) on each task (columns): accuracy (``r.accuracy``) over the task's 2 · n_pairs pairs (half
    negatives: 0.5 is chance). z[i][j] = accuracy of head i on task j (NSP, SOP); the title is the lesson's, computed
    from the grid (``r.grid.title``: it names ALBERT's Table 5 pattern only when the heads show it)."""
    heads, accuracy = _heads(r), r.accuracy
    tasks = (("nsp", "NSP task: in order vs another story"), ("sop", "SOP task: in order vs swapped"))
    z = [[accuracy[key][t] for t, _ in tasks] for key, _, _ in heads]
    cells = [[r.grid.cell(key, t) for t, _ in tasks] for key, _, _ in heads]
    custom = [[[c.correct, c.n, c.low, c.high, c.verdict] for c in row] for row in cells]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[label for _, label in tasks],
            y=[esc(name) for _, _, name in heads],
            zmin=0.0,
            zmax=1.0,
            colorscale="RdBu",
            zmid=0.5,
            text=[[f"{v:.0%}" for v in row] for row in z],
            texttemplate="%{text}",
            textfont=dict(size=18),
            colorbar=dict(title="accuracy", tickformat=".0%"),
            customdata=custom,
            hovertemplate=(
                "%{y}<br>%{x}<br>accuracy %{z:.3f}: %{customdata[0]} of %{customdata[1]} pairs (0.5 = chance)"
                "<br>95% interval %{customdata[2]:.3f}–%{customdata[3]:.3f}: %{customdata[4]}<extra></extra>"
            ),
        )
    )
    fig.update_yaxes(autorange="reversed")
    head, _, aside = r.grid.title.partition(" (")  # two lines: in a half-width column one was cut at the edge
    return _layout(fig, esc(head) + (f"<br>({esc(aside)}" if aside else ""), 130 + 90 * len(heads))


@kept
def key_figure(r) -> go.Figure:
    """The lesson's key figure (stage and handout): every head on the user's pair, in order and swapped."""
    return order_figure(_heads(r), r.user)


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/sentence_order.py's SPEC), key first.
FIGURES = {"pair": key_figure, "accuracy": accuracy_figure, "kinds": kinds_figure}


def every_figure(r) -> list:
    """Every figure pages/sentence_order.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        kinds_figure(r),
        accuracy_figure(r),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
