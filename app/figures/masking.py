"""Figures of the masking lab (app/lessons/masking.py): ``masking.run``'s Result (or its ``spans``) in, a plotly Figure
out.

Every token that enters a figure goes through ``app.core.text.html`` first: plotly reads a small set of tags
in text and hover labels, so a RoBERTa ``<s>`` would otherwise vanish (and a ``<b>`` would turn bold).
"""

from __future__ import annotations

import textwrap

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.masking import KEEP, KIND_NAMES, MASKED, RANDOM, UNCHANGED
from app.masking import STRATEGY_LABELS, STRATEGY_SHORT
from app.core.text import count
from app.core.text import html as esc
from app.figures import kept

SPECIAL = 4  # the grid's value for a special token (never a target)
GRID_NAMES = {**KIND_NAMES, SPECIAL: "special token (never a target)"}
# Okabe–Ito colours (safe for colour-blind viewers), a light grey for "not a target".
GRID_COLORS = {KEEP: "#dedede", MASKED: "#0072B2", RANDOM: "#E69F00", UNCHANGED: "#009E73", SPECIAL: "#fbf3d0"}
STRATEGY_COLORS = {"static": "#D55E00", "static10": "#0072B2", "dynamic": "#009E73"}


def position_labels(tokens: list[str]) -> list[str]:
    """Unique axis labels: 'position·token' (a token can occur twice in a sentence)."""
    return [f"{i}·{esc(t)}" for i, t in enumerate(tokens)]


def _objects(nested: list) -> np.ndarray:
    """A nested list of strings (and numbers) as an object array: plotly validates it in one step, not
    cell by cell, which keeps a rerun fast; it still serialises as plain JSON lists."""
    out = np.empty((len(nested), len(nested[0]) if nested else 0), dtype=object)
    for i, row in enumerate(nested):
        for j, cell in enumerate(row):
            out[i, j] = cell
    return out


def _discrete_scale(colors: list[str]) -> list:
    n = len(colors)
    scale = []
    for i, c in enumerate(colors):
        scale += [[i / n, c], [(i + 1) / n, c]]
    return scale


@kept
def epoch_grid_figure(
    tokens: list[str],
    special: list[bool],
    kinds: list[list[int]],
    shown: list[list[str]],
    copies: list[int],
    highlight: int | None = None,
    title: str = "",
) -> go.Figure:
    """Epochs × positions: what each position became in each epoch.

    kinds: (E, T) KEEP/MASKED/RANDOM/UNCHANGED; shown: (E, T) the token fed to the model; copies: (E,)
    the masked copy each epoch used; highlight: a 0-based epoch to outline. z is (E, T) with SPECIAL
    where a token is special. Hover gives the original token, what it became and the copy.
    """
    E, T = len(kinds), len(tokens)
    z = [[SPECIAL if special[t] else kinds[e][t] for t in range(T)] for e in range(E)]
    text = [[esc(shown[e][t]) if kinds[e][t] != KEEP else "" for t in range(T)] for e in range(E)]
    custom = [
        [[esc(tokens[t]), esc(shown[e][t]), GRID_NAMES[z[e][t]], copies[e] + 1] for t in range(T)] for e in range(E)
    ]
    shapes = []
    if highlight is not None and 0 <= highlight < E:
        shapes.append(
            dict(
                type="rect",
                x0=-0.5,
                x1=T - 0.5,
                y0=highlight - 0.5,
                y1=highlight + 0.5,
                line=dict(color="#000", width=3),
            )
        )
    heatmap = dict(
        type="heatmap",
        z=z,
        x=position_labels(tokens),
        y=[f"epoch {e + 1}" for e in range(E)],
        text=_objects(text),
        texttemplate="%{text}",
        textfont=dict(size=10),
        customdata=_objects(custom),
        zmin=-0.5,
        zmax=SPECIAL + 0.5,
        colorscale=_discrete_scale([GRID_COLORS[k] for k in range(SPECIAL + 1)]),
        xgap=1,
        ygap=1,
        colorbar=dict(
            tickvals=list(range(SPECIAL + 1)),
            ticktext=[GRID_NAMES[k] for k in range(SPECIAL + 1)],
            title="",
            orientation="h",
            y=-0.01,
            yanchor="top",
            thickness=14,
            len=1.0,
        ),
        hovertemplate="%{y}, position %{x}<br>original <b>%{customdata[0]}</b> → fed <b>%{customdata[1]}</b>"
        "<br>%{customdata[2]}<br>masked copy %{customdata[3]}<extra></extra>",
    )
    return go.Figure(
        [heatmap],
        dict(
            title=dict(text=title, y=0.995, yanchor="top"),
            height=min(1400, 250 + 24 * E),
            shapes=shapes,
            margin=dict(l=10, r=10, t=130, b=60),
            xaxis=dict(side="top", tickangle=-60, dtick=1 if T <= 64 else None),
            yaxis=dict(autorange="reversed"),
        ),
    )


@kept
def coverage_figure(r) -> go.Figure:
    """Fraction of positions that have been a target at least once, by epoch, per strategy (``r.coverage``), with the
    epochs chosen (``r.epochs``) marked.

    simulated[s], analytic[s]: (E,) for each strategy s. Solid: the mean over ``n_draws`` seeded
    draws; dashed: 1 - (1 - p)^k with k the distinct masks seen so far.
    """
    cov, mark_epoch = r.coverage, r.epochs
    simulated = {k: list(v) for k, v in cov.simulated.items()}
    analytic = {k: list(v) for k, v in cov.analytic.items()}
    n_draws = cov.n_draws
    traces = []
    for s, ys in simulated.items():
        xs = list(range(1, len(ys) + 1))
        traces.append(
            dict(
                type="scatter",
                x=xs,
                y=ys,
                mode="lines+markers",
                marker=dict(size=5),
                line=dict(color=STRATEGY_COLORS[s], width=3),
                name=f"{STRATEGY_SHORT[s]} — simulated",
                hovertemplate=f"{STRATEGY_LABELS[s]}<br>epoch %{{x}}: %{{y:.2%}} of positions "
                f"(mean of {n_draws} draws)<extra></extra>",
            )
        )
        traces.append(
            dict(
                type="scatter",
                x=xs,
                y=analytic[s],
                mode="lines",
                line=dict(color=STRATEGY_COLORS[s], dash="dash", width=2),
                name=f"{STRATEGY_SHORT[s]} — 1 − (1 − p)^k",
                hovertemplate=f"{STRATEGY_LABELS[s]}<br>epoch %{{x}}: 1 − (1 − p)^k = %{{y:.2%}}<extra></extra>",
            )
        )
    shapes, notes = [], []
    if mark_epoch:
        shapes.append(
            dict(
                type="line", x0=mark_epoch, x1=mark_epoch, y0=0, y1=1, yref="paper", line=dict(color="#888", dash="dot")
            )
        )
        notes.append(
            dict(x=mark_epoch, y=0.02, yref="paper", text=f"{mark_epoch} epochs", showarrow=False, xanchor="left")
        )
    return go.Figure(
        traces,
        dict(
            xaxis_title="epoch",
            yaxis_title="positions ever a target",  # short: a projector's plot is ~350 px tall
            yaxis=dict(tickformat=".0%", range=[0, 1.02]),  # a fraction, shown as a percentage up to 100%
            # the legend at the figure's foot, below the axis title at any height (paper units under the plot moved with
            # its height: on a projector's stage the "epoch" title landed on the legend)
            height=480,
            margin=dict(l=10, r=10, t=30, b=140),
            legend=dict(orientation="h", x=0, xanchor="left", y=0, yref="container", yanchor="bottom"),
            shapes=shapes,
            annotations=notes,
        ),
    )


@kept
def distinct_masks_figure(r) -> go.Figure:
    """Per position of ``r.sentence`` (special tokens left out): in how many distinct masks it was a target, per
    strategy, over ``r.epochs`` epochs.

    r.distinct[s], r.times[s]: (T,) counts for strategy s; hover also gives the epochs it was a target.
    """
    tokens, special, epochs = list(r.sentence.pieces), list(r.sentence.special), r.epochs
    distinct = {k: list(v) for k, v in r.distinct.items()}
    times = {k: list(v) for k, v in r.times.items()}
    keep = [i for i, s in enumerate(special) if not s]
    x = [position_labels(tokens)[i] for i in keep]
    traces = [
        dict(
            type="bar",
            x=x,
            y=[counts[i] for i in keep],
            name=STRATEGY_SHORT[s],
            marker_color=STRATEGY_COLORS[s],
            customdata=[times[s][i] for i in keep],
            hovertemplate=f"{STRATEGY_LABELS[s]}<br>%{{x}}: a target in %{{y}} distinct mask(s), "
            f"in %{{customdata}} of {epochs} epochs<extra></extra>",
        )
        for s, counts in distinct.items()
    ]
    return go.Figure(
        traces,
        dict(
            barmode="group",
            yaxis_title="distinct masks as a target",
            height=380,
            margin=dict(l=10, r=10, t=30, b=10),
            xaxis=dict(tickangle=-60),
            legend=dict(orientation="h", y=1.12),
        ),
    )


@kept
def span_length_figure(spans) -> go.Figure:
    """Span lengths in words (``Result.spans``): the truncated geometric pmf, the drawn lengths and those actually
    placed.

    pmf: (L,) P(length = k) for k = 1..L; drawn, placed: (L,) counts per length; means: label -> value,
    drawn as vertical lines.
    """
    pmf, drawn, placed, means = list(spans.pmf), list(spans.drawn), list(spans.placed), spans.means
    ks = list(range(1, len(pmf) + 1))
    n_drawn, n_placed = max(1, sum(drawn)), max(1, sum(placed))
    fig = go.Figure(
        [
            go.Bar(
                x=ks,
                y=[c / n_drawn for c in drawn],
                name=f"drawn ({sum(drawn):,} samples)",
                marker_color="#0072B2",
                customdata=drawn,
                hovertemplate="length %{x}: %{y:.3f} of drawn spans (%{customdata:,})<extra></extra>",
            ),
            go.Bar(
                x=ks,
                y=[c / n_placed for c in placed],
                name=f"placed in your sentence ({sum(placed):,} spans)",
                marker_color="#E69F00",
                customdata=placed,
                hovertemplate="length %{x}: %{y:.3f} of placed spans (%{customdata:,})<extra></extra>",
            ),
            go.Scatter(
                x=ks,
                y=pmf,
                mode="markers",
                marker=dict(symbol="diamond", size=11, color="#000"),
                name="truncated geometric pmf",
                hovertemplate="P(length = %{x}) = %{y:.4f}<extra></extra>",
            ),
        ]
    )
    dashes = ["dash", "dot", "dashdot", "longdash"]
    shapes = [
        dict(type="line", x0=v, x1=v, y0=0, y1=1, yref="paper", line=dict(dash=dashes[i % 4], color="#555"))
        for i, v in enumerate(means.values())
    ]
    notes = [
        dict(x=v, y=1.02 + 0.08 * i, yref="paper", text=f"{label} {v:.2f}", showarrow=False)
        for i, (label, v) in enumerate(means.items())
    ]
    fig.update_layout(
        barmode="group",
        xaxis=dict(title="span length (words)", dtick=1),
        yaxis_title="share of spans",
        height=420,
        margin=dict(l=10, r=10, t=80, b=10),
        legend=dict(orientation="h", y=-0.2),
        shapes=shapes,
        annotations=notes,
    )
    return fig


@kept
def predictions_figure(r, phone: bool = False) -> go.Figure:
    """Targets × rank: the model's (``r.label``) top-k at each target of the chosen epoch (``r.predictions``),
    coloured by probability. ``phone``: the first ``PHONE_RANKS`` guesses, each row's label on two lines, so a guess
    has a cell it can be read in at 390 px.

    Per target: its position, original piece and the piece the model was shown; its guesses' pieces and
    probabilities and which are the original (``hits``), (k,) each. z is the probabilities; a ✓ marks the original
    piece.
    """
    positions, originals = [p.position for p in r.predictions], [p.original for p in r.predictions]
    fed, tokens = [p.fed for p in r.predictions], [list(p.guesses.pieces) for p in r.predictions]
    probs, is_original = [list(p.guesses.probabilities) for p in r.predictions], [list(p.hits) for p in r.predictions]
    if phone:
        tokens, probs, is_original = ([row[:PHONE_RANKS] for row in x] for x in (tokens, probs, is_original))
    model = r.label
    k = len(probs[0]) if probs else 0
    rows = [f"{i}·{esc(o)}{'<br>' if phone else ' '}(fed {esc(f)})" for i, o, f in zip(positions, originals, fed)]
    text = [[f"{esc(t)}{' ✓' if o else ''}" for t, o in zip(tt, oo)] for tt, oo in zip(tokens, is_original)]
    fig = go.Figure(
        go.Heatmap(
            z=probs,
            x=[f"#{r + 1}" for r in range(k)],
            y=rows,
            text=_objects(text),
            texttemplate="%{text}",
            customdata=_objects([["the original piece" if o else "" for o in oo] for oo in is_original]),
            colorscale="Blues",
            zmin=0,
            zmax=max([max(p) for p in probs] + [1e-9]),
            xgap=2,
            ygap=2,
            colorbar=dict(title="p", tickformat=".2~%"),
            hovertemplate="%{y}<br>guess %{x}: <b>%{text}</b> p = %{z:.4f} %{customdata}<extra></extra>",
        )
    )
    title = f"{esc(model)}: guesses, best first" if model else "the model's guesses, best first"
    if phone:
        fig.update_traces(textfont=dict(size=13))
        title += f" (the first {k} on a phone)"
    # the title on the left, above the ranks: the chart's toolbar appears at the top right, over a centred title
    fig.update_layout(
        height=min(1200, 150 + (52 if phone else 40) * len(rows)),
        margin=dict(l=10, r=10, t=60, b=10),
        title=dict(text=title, x=0, xanchor="left", y=1, yref="container", yanchor="top", pad=dict(t=6)),
        yaxis=dict(autorange="reversed"),
        xaxis=dict(side="top"),
    )
    return fig


PHONE_RANKS = 3  # guesses per target a phone shows: cells of ~70 px beside the targets' names

SBO_CONTEXT, SBO_BOUNDARY, SBO_PREDICTED, SBO_SPAN = 0, 1, 2, 3
SBO_NAMES = {
    SBO_CONTEXT: "not used by SBO",
    SBO_BOUNDARY: "boundary x_{s−1} / x_{e+1}: SBO's input",
    SBO_PREDICTED: "the token predicted (from the boundaries and p)",
    SBO_SPAN: "the span's other tokens: not used for this one",
}
SBO_COLORS = {SBO_CONTEXT: "#eeeeee", SBO_BOUNDARY: "#56B4E9", SBO_PREDICTED: "#E69F00", SBO_SPAN: "#f3dcb6"}


@kept
def sbo_figure(r) -> go.Figure:
    """SpanBERT's span-boundary objective for the chosen span of the inspected epoch (``r.sbo``): one row per token
    of the span (the token SBO predicts), columns the positions around it. In each row the two boundary positions
    (s − 1, e + 1) are SBO's input, the row's own position is what it predicts (with its relative position p), the
    span's other tokens and the context are not used. z (rows, columns) holds those roles (SBO_NAMES); cell text is
    what the encoder is fed there; at the right of each row, the lesson model's masked-LM guess at that token."""
    s = r.sbo
    sp, tokens, fed = s.span, list(r.sentence.pieces), list(r.fed[r.epoch - 1])
    cols = list(range(s.window[0], s.window[1] + 1))
    z, text, custom, rows = [], [], [], []
    for t in s.targets:
        role = [
            SBO_BOUNDARY
            if c in (sp.left, sp.right)
            else SBO_PREDICTED
            if c == t.position
            else SBO_SPAN
            if sp.start <= c <= sp.end
            else SBO_CONTEXT
            for c in cols
        ]
        z.append(role)
        text.append([esc(fed[c]) + (f"<br>p{t.relative}" if c == t.position else "") for c in cols])
        custom.append([[esc(tokens[c]), esc(fed[c]), SBO_NAMES[k]] for c, k in zip(cols, role)])
        rows.append(f"{t.position}·{esc(t.original)} (p{t.relative})")
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=position_labels(tokens)[s.window[0] : s.window[1] + 1],
            y=rows,
            text=_objects(text),
            texttemplate="%{text}",
            textfont=dict(size=12),
            customdata=_objects(custom),
            zmin=-0.5,
            zmax=SBO_SPAN + 0.5,
            colorscale=_discrete_scale([SBO_COLORS[k] for k in range(SBO_SPAN + 1)]),
            xgap=2,
            ygap=2,
            showscale=False,
            hovertemplate="predicting %{y}<br>position %{x}: original <b>%{customdata[0]}</b>, fed "
            "<b>%{customdata[1]}</b><br>%{customdata[2]}<extra></extra>",
            name="SBO",
        )
    )
    for k in range(SBO_SPAN + 1):  # the colour key, as legend entries (they wrap; a colour bar's names would not)
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=SBO_NAMES[k],
                hoverinfo="skip",
                marker=dict(symbol="square", size=12, color=SBO_COLORS[k], line=dict(color="#666", width=1)),
            )
        )
    notes = []
    for t, row in zip(s.targets, rows):
        guess = (
            "no guess"
            if t.mlm_top is None
            else f"MLM: <b>{esc(t.mlm_top)}</b> (original ranked {t.mlm_rank}{' ✓' if t.mlm_rank == 1 else ''})"
        )
        notes.append(
            dict(x=1.01, xref="paper", xanchor="left", y=row, yref="y", text=guess, showarrow=False, font=dict(size=12))
        )
    title = (
        f"Span-boundary objective: span {sp.number} of {s.n_spans}, epoch {r.epoch} — each row predicts its "
        f"token from the two blue boundaries and p"
    )
    lines = textwrap.wrap(title, 80)
    fig.update_layout(
        title=dict(
            text="<br>".join(lines), x=0, xanchor="left", y=1, yref="container", yanchor="top", pad=dict(t=20)
        ),  # plotly places a title of several lines from the top only with pad.t
        height=min(900, 220 + 22 * len(lines) + 44 * len(rows)),
        annotations=notes,
        margin=dict(l=10, r=250, t=90 + 22 * len(lines), b=70),
        plot_bgcolor="white",
        legend=dict(
            orientation="h",
            x=0,
            xanchor="left",
            y=-0.02,
            yanchor="top",
            font=dict(size=12),
            itemclick=False,
            itemdoubleclick=False,
        ),
        xaxis=dict(side="top", tickangle=-45, showgrid=False),
        yaxis=dict(autorange="reversed", showgrid=False),
    )
    return fig


PHONE_ROW_PX = 24  # one position's row on a phone: 12-px labels and cell text with room between them
PHONE_TITLE_CHARS = 40  # a title's line on a phone (14-px type in ~358 px)
PHONE_CELL_CHARS = 9  # what the inspected epoch's cell shows of its token on a phone (hover and tap: all of it)


def _short(token: str, most: int = PHONE_CELL_CHARS) -> str:
    return token if len(token) <= most else token[: most - 1] + "…"


def _phone_grid_frame(fig: go.Figure, title: str, pick: int, T: int, E: int) -> None:
    """The phone grid's frame around the inspected epoch, its axes, its wrapped title and its legend below."""
    fig.add_shape(
        type="rect", x0=pick + 0.5, x1=pick + 1.5, y0=-0.5, y1=T - 0.5, line=dict(color="#000", width=2), row=1, col=1
    )
    fig.update_xaxes(
        side="top",
        tickfont=dict(size=12),
        row=1,
        col=1,
        title=dict(text="epoch", font=dict(size=12)),
        tickmode="array",
        tickvals=sorted({1, *range(5, E + 1, 5), E}),
        range=[0.5, E + 0.5],
    )
    fig.update_xaxes(side="top", tickfont=dict(size=12), row=1, col=2)
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=12), row=1, col=1)
    lines = textwrap.wrap(title, PHONE_TITLE_CHARS) or [""]
    top = 84 + 20 * len(lines)  # the title's lines, then the epochs' numbers and their axis title
    fig.update_layout(
        title=dict(
            text="<br>".join(lines),
            x=0,
            xanchor="left",
            y=1,
            yref="container",
            yanchor="top",
            pad=dict(t=20),
            font=dict(size=14),
        ),  # plotly places a title of several lines from the top only with pad.t: with less, its first line is cut
        height=top + 150 + PHONE_ROW_PX * T,
        showlegend=True,
        legend=dict(
            orientation="h",
            x=0,
            xanchor="left",
            y=-0.01,
            yanchor="top",
            font=dict(size=12),
            itemclick=False,
            itemdoubleclick=False,
        ),
        margin=dict(l=6, r=6, t=top, b=140),
        plot_bgcolor="white",
        meta="phone",
    )


@kept
def phone_grid_figure(
    tokens: list[str],
    special: list[bool],
    kinds: list[list[int]],
    shown: list[list[str]],
    copies: list[int],
    highlight: int | None = None,
    title: str = "",
) -> go.Figure:
    """``epoch_grid_figure`` for a phone (app/ui/layout.py): the grid turned a quarter, so the pieces are rows read
    left to right in one fixed label column, and two panels share them — every epoch as a column of colour
    (positions × epochs: the rows that repeat on a desktop are columns that repeat here), and beside it the
    inspected epoch (``highlight``, 0-based) alone, wide enough to read what the model was fed at each position.
    The colour key is a legend above the grid (a colour bar's five names would not fit across). Same data as
    the desktop grid: z (T, E) is its transpose; hover gives the same words."""
    E, T = len(kinds), len(tokens)
    pick = highlight if highlight is not None and 0 <= highlight < E else 0
    z = [[SPECIAL if special[t] else kinds[e][t] for e in range(E)] for t in range(T)]  # (T, E)
    custom = [
        [[esc(tokens[t]), esc(shown[e][t]), GRID_NAMES[z[t][e]], copies[e] + 1, e + 1] for e in range(E)]
        for t in range(T)
    ]
    labels = position_labels(tokens)
    hover = (
        "epoch %{customdata[4]}, position %{y}<br>original <b>%{customdata[0]}</b> → fed <b>%{customdata[1]}</b>"
        "<br>%{customdata[2]}<br>masked copy %{customdata[3]}<extra></extra>"
    )
    scale = _discrete_scale([GRID_COLORS[k] for k in range(SPECIAL + 1)])
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.6, 0.4], horizontal_spacing=0.03)
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=list(range(1, E + 1)),
            y=labels,
            customdata=_objects(custom),
            zmin=-0.5,
            zmax=SPECIAL + 0.5,
            colorscale=scale,
            showscale=False,
            xgap=1,
            ygap=1,
            hovertemplate=hover,
            name="every epoch",
        ),
        row=1,
        col=1,
    )
    fed = [[esc(_short(shown[pick][t])) if kinds[pick][t] != KEEP else esc(_short(tokens[t]))] for t in range(T)]
    fig.add_trace(
        go.Heatmap(
            z=[[row[pick]] for row in z],
            x=[f"epoch {pick + 1}: fed"],
            y=labels,
            customdata=_objects([[row[pick]] for row in custom]),
            text=_objects(fed),
            texttemplate="%{text}",
            textfont=dict(size=12),
            zmin=-0.5,
            zmax=SPECIAL + 0.5,
            colorscale=scale,
            showscale=False,
            xgap=1,
            ygap=1,
            hovertemplate=hover,
            name=f"epoch {pick + 1}",
        ),
        row=1,
        col=2,
    )
    for k in range(SPECIAL + 1):  # the colour key, as legend entries (a legend wraps; a colour bar's names do not)
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=GRID_NAMES[k],
                hoverinfo="skip",
                marker=dict(symbol="square", size=12, color=GRID_COLORS[k], line=dict(color="#666", width=1)),
            ),
            row=1,
            col=1,
        )
    _phone_grid_frame(fig, title, pick, T, E)
    return fig


@kept
def key_figure(r, phone: bool = False) -> go.Figure:
    """The lesson's key figure, from ``masking_lab.run``'s Result (the page's stage and the handout): which
    positions are targets, epoch by epoch, under the chosen strategy. ``phone``: drawn for a phone's width
    (``phone_grid_figure``)."""
    s = r.sentence
    build = phone_grid_figure if phone else epoch_grid_figure
    return build(
        list(s.pieces),
        list(s.special),
        r.kinds,
        r.fed,
        r.copies,
        highlight=r.epoch - 1,
        title=dict(STRATEGY_LABELS).get(r.strategy, r.strategy),
    )


def describe(r) -> str:
    """The key figure in words (its text alternative, plain text: the page escapes it), from the same Result:
    what the grid holds, which pieces the inspected epoch makes targets and what they are fed, the headline counts."""
    s, e = r.sentence, r.epoch - 1
    fed = [f"{s.pieces[t]} → {r.fed[e][t]}" for t in range(len(s.pieces)) if r.kinds[e][t] != KEEP]
    return (
        f"A grid of {r.epochs} epochs × {len(s.pieces)} pieces under {STRATEGY_SHORT.get(r.strategy, r.strategy)}. "
        f"Epoch {r.epoch} makes {count(len(fed), 'target')}: {'; '.join(fed) or 'none'}. "
        f"{count(r.n_distinct, 'distinct mask')} over the {r.epochs} epochs, {r.targets_per_epoch:.1f} targets per "
        "epoch."
    )


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/masking.py's SPEC), key figure first.
FIGURES = {"grid": key_figure, "coverage": coverage_figure}


def every_figure(r) -> list:
    """Every figure pages/masking.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        key_figure(r, phone=True),  # the same, drawn for a phone (app/ui/layout.py)
        coverage_figure(r),
        distinct_masks_figure(r),
        r.spans and span_length_figure(r.spans),
        r.predictions and predictions_figure(r),
        r.predictions and predictions_figure(r, phone=True),
        r.sbo and sbo_figure(r),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
