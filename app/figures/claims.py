"""Figures for "Does it work?": ``claims.run``'s Result (or a live run's ``claims.LiveCurves``) in, plotly
Figure out. Arm and metric labels are the experiments' own words, escaped anyway with app.core.text.html.

Colours: the arm the paper says is better is blue, the other arm of the comparison orange, every other
arm grey — on every figure of the page, so an arm keeps its colour from the curves to the final numbers.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import textwrap

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.experiments.results import short_label
from app.experiments import verdict as rule
from app.core.text import html as esc
from app.figures import kept

BETTER, WORSE, OTHER = "#4c78a8", "#f58518", "#9d9d9d"
X_TITLES = {"step": "training step", "flops": "training FLOPs", "params": "parameters"}


def colour(arm: str, better: str, worse: str) -> str:
    return BETTER if arm == better else WORSE if arm == worse else OTHER


def axis_title(metric_label: str, higher_is_better: bool | None) -> str:
    """A metric's axis title: its label's head ("held-out masked-LM loss") and which way is better."""
    # the hint on a line of its own: one line of both was cut off the left edge of a projector's shorter plot
    hint = (
        "" if higher_is_better is None else ("<br>(higher is better)" if higher_is_better else "<br>(lower is better)")
    )
    return esc(short_label(metric_label)) + hint


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


# The legend is laid out for a projector's font size (22 px), the largest it is drawn at: on a laptop it then has room
LEGEND_ROW_PX = 32  # one legend row, with its gap
LEGEND_WIDTH_PX = 1100  # what a row holds on the stage at 1280 px
LEGEND_CHAR_PX = 9.5  # one character of an entry's label (Source Sans at 22 px)
LEGEND_ENTRY_PX = 45  # an entry's line symbol and the gap after it
TITLE_PX = 60  # the title above the legend
TITLE_CHARS = 90  # a line of the key figure's title: at 1280 px a longer one ran off the figure's right edge
TITLE_LINE_PX = 30  # one more line of it, at a projector's title size (24 px)


def legend_rows(fig: go.Figure) -> int:
    """How many rows the horizontal legend takes on a projector: its entries (traces shown in it) packed into rows
    of LEGEND_WIDTH_PX by the width of their labels (two arms' long labels took two rows there, where a count of
    two entries a row had made room for one and the title ran into them)."""
    rows, used = 1, 0.0
    for t in fig.data:
        if t.showlegend is False:
            continue
        width = LEGEND_ENTRY_PX + LEGEND_CHAR_PX * len(t.name or "")
        if used and used + width > LEGEND_WIDTH_PX:
            rows, used = rows + 1, 0.0
        used += width
    return rows


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    """Title, then the legend above the plot (below it, it collides with the x-axis title at a projector's
    font size). The top margin grows with the legend's rows, so that every arm shown (six for distillation)
    keeps its entry clear of the title; the figure grows by as much, so the plot keeps its height."""
    extra = (legend_rows(fig) - 1) * LEGEND_ROW_PX
    fig.update_layout(
        title=dict(text=title, y=0.98, yanchor="top"),
        height=height + extra,
        margin=dict(l=10, r=10, t=TITLE_PX + LEGEND_ROW_PX + extra, b=30),
        plot_bgcolor="white",
        hovermode="closest",
        legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom"),
    )
    fig.update_xaxes(automargin=True, showgrid=True, gridcolor="#eee")
    fig.update_yaxes(automargin=True, showgrid=True, gridcolor="#eee")
    return fig


@kept
def curves_figure(
    curves, x: str, metric_label: str, higher_is_better: bool | None, better: str, worse: str
) -> go.Figure:
    """Every curve as its mean over seeds (a line) inside a band of mean ± one sd (a shaded area).

    Per curve, two traces in order: the band (a closed polygon: x forward along ``hi``, back along ``lo``,
    ``fill="toself"``) and the mean line. ``curves``: app.lessons.claims.Curve. higher_is_better: for the title's
    hint (None: not said, e.g. the training loss)."""
    fig = go.Figure()
    for c in curves:
        col = colour(c.arm, better, worse)
        label = esc(c.label)
        xs = list(c.x)
        fig.add_trace(
            go.Scatter(
                x=xs + xs[::-1],
                y=list(c.hi) + list(c.lo)[::-1],
                mode="lines",
                fill="toself",
                fillcolor=_rgba(col, 0.18 if c.compared else 0.08),
                line=dict(width=0),
                hoverinfo="skip",
                showlegend=False,
                name=f"{label} (± 1 sd)",
            )
        )
        sd = [(h - m) for h, m in zip(c.hi, c.mean)]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=list(c.mean),
                mode="lines+markers",
                name=f"{label} ({c.n} seed{'s' if c.n != 1 else ''})",
                line=dict(color=col, width=3 if c.compared else 1.5, dash=None if c.compared else "dot"),
                marker=dict(size=6 if c.compared else 4),
                customdata=[[s] for s in sd],
                hovertemplate=f"{label}<br>{X_TITLES[x]} %{{x:,.4~s}}<br>mean %{{y:.4f}} ± "
                f"%{{customdata[0]:.4f}} (sd over {c.n} seeds)<extra></extra>",
            )
        )
    fig.update_xaxes(title_text=X_TITLES[x], tickformat=".2s" if x == "flops" else None)
    fig.update_yaxes(title_text=axis_title(metric_label, higher_is_better))
    return _layout(fig, f"Mean over seeds, band = ± 1 sd{' (per FLOP)' if x == 'flops' else ''}", 460)


@kept
def finals_figure(r) -> go.Figure:
    """The final number of every seed (dots) and each arm's mean ± sd (a diamond with error bars), from
    ``claims.run``'s Result: ``r.finals`` on the chosen comparison's metric.

    Per arm with values, two traces: the seeds, then the mean. x: the arm's label, or its parameter count
    (log axis) when ``r.params_axis`` (ALBERT's sharing: what the arms buy is fewer parameters)."""
    comp, finals, params_axis = r.comparison, r.finals, r.params_axis
    metric_label, higher_is_better, better, worse = comp.metric_label, comp.higher_is_better, comp.better, comp.worse
    fig = go.Figure()
    for f in finals:
        if not f.values:
            continue
        col = colour(f.arm, better, worse)
        label = esc(f.label)
        where = f.params if params_axis and f.params else label
        fig.add_trace(
            go.Scatter(
                x=[where] * len(f.values),
                y=list(f.values),
                mode="markers",
                name=f"{label}: seeds",
                marker=dict(color=col, size=9, opacity=0.75, line=dict(width=1, color="white")),
                showlegend=False,
                customdata=[[s] for s in f.seeds],
                hovertemplate=f"{label}<br>seed %{{customdata[0]}}: %{{y:.4f}}<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[where],
                y=[f.mean],
                mode="markers",
                name=label,
                marker=dict(color=col, size=15, symbol="diamond", line=dict(width=1.5, color="#222")),
                error_y=dict(type="data", array=[f.sd or 0.0], color=col, thickness=2, width=8),
                hovertemplate=(
                    f"{label}<br>mean %{{y:.4f}} ± {f.sd or 0.0:.4f} (sd), min {f.lo:.4f}, max {f.hi:.4f}, "
                    f"{len(f.values)} seed{'s' if len(f.values) != 1 else ''}"
                    + (f"<br>{f.params:,} parameters" if f.params else "")
                    + "<extra></extra>"
                ),
            )
        )
    if params_axis:
        fig.update_xaxes(type="log", title_text="parameters (log scale)")
    else:
        fig.update_xaxes(tickangle=-20)
    fig.update_yaxes(title_text=axis_title(metric_label, higher_is_better))
    return _layout(fig, "Final numbers: every seed (dots), mean ± sd (diamonds)", 420)


VERDICT_COLOURS = {
    rule.REPRODUCES: "#2e7d32",
    rule.EQUIVALENT: "#1565c0",
    rule.TOO_SMALL: "#8a8a8a",
    rule.REVERSES: "#c62828",
}  # no verdict (an arm failed its health check): no dot
FAMILY_EDGE = 8.0  # the overview's x-axis runs over ± this many margins; longer intervals are cut at the edge
KIND_MARK = {"superiority": ">", "noninferiority": "≥", "equivalence": "≈"}


def _boundaries(rows, labels: list[str]) -> go.Scatter:
    """The trace of what each claim needs: a tick at 0 (superiority), −1 (noninferiority) or ±1 margins."""
    bx, by = [], []
    for row, label in zip(rows, labels):
        if row.kind == "superiority":
            bx.append(0.0), by.append(label)
        elif row.kind == "noninferiority":
            bx.append(-1.0), by.append(label)
        else:
            bx += [-1.0, 1.0]
            by += [label, label]
    return go.Scatter(
        x=bx,
        y=by,
        mode="markers",
        name="what the claim needs (boundary)",
        marker=dict(symbol="line-ns-open", size=16, color="#222", line=dict(width=2)),
        hoverinfo="skip",
    )


@kept
def family_figure(r) -> go.Figure:
    """Every comparison of the page (``r.family``: app.lessons.claims.FamilyRow), one row each, top to bottom in
    the page's order: A − B over its metric's margin (a dot) with its 95% interval (a bar), coloured by the
    Holm-adjusted verdict, and the claim's boundary (a black tick: 0, −1, or ±1 margins). The band [−1, +1]
    is shaded. Traces: one per verdict present (the dots and bars), then the boundaries. A row without results
    has no dot. x is cut at ±FAMILY_EDGE margins (an interval's bar ends there); a difference beyond it is drawn at
    the edge with its value written beside it."""
    rows = list(r.family)
    labels = [
        f"{'<b>' if row.chosen else ''}{esc(row.experiment)} · {esc(row.key)} {KIND_MARK.get(row.kind, '')}"
        f"{'</b>' if row.chosen else ''}"
        for row in rows
    ]
    edge = FAMILY_EDGE

    def cut(x: float) -> float:
        return max(-edge, min(edge, x))

    fig = go.Figure()
    fig.add_shape(
        type="rect",
        xref="x",
        yref="paper",
        x0=-1,
        x1=1,
        y0=0,
        y1=1,
        fillcolor="rgba(76,120,168,0.08)",
        line=dict(width=0),
        layer="below",
    )
    fig.add_vline(x=0, line=dict(color="#bbb", width=1))
    notes = []
    for verdict, col in VERDICT_COLOURS.items():
        xs, ys, lo, hi, hover, sizes = [], [], [], [], [], []
        for row, label in zip(rows, labels):
            v = row.verdict
            if not v or v["verdict"] != verdict or not v.get("enough_seeds"):
                continue
            u = row.scale_unit or 1.0
            x, a, b = v["difference"] / u, v["ci_low"] / u, v["ci_high"] / u
            xs.append(cut(x))
            ys.append(label)
            lo.append(cut(x) - cut(a))
            hi.append(cut(b) - cut(x))
            sizes.append(13 if row.chosen else 9)
            unit = f" {row.unit}" if row.unit else ""
            hover.append(
                f"{esc(row.claim)}<br>{esc(row.kind)}{f' (margin {row.margin:g}{unit})' if row.margin else ''}"
                f"<br>A − B = {v['difference']:+.4g}{unit}, 95% interval {v['ci_low']:+.4g} to "
                f"{v['ci_high']:+.4g}<br>{esc(v['design'])}, n = {v['n']}, t = {v['t']:.3g}, df = "
                f"{v['df']:.3g}, p = {v['p']:.2g}<br>Holm: rank {v['rank']} of {v['m']}, needs p ≤ "
                f"{v['holm_threshold']:.2g}<br><b>{esc(v['label'])}</b>"
            )
            if abs(x) > edge:
                notes.append((label, x))
        if not xs:
            continue
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers",
                name=esc(verdict),
                marker=dict(color=col, size=sizes),
                error_x=dict(type="data", symmetric=False, array=hi, arrayminus=lo, color=col, thickness=2.5, width=0),
                hovertext=hover,
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
    fig.add_trace(_boundaries(rows, labels))
    for label, x in notes:
        fig.add_annotation(
            x=edge if x > 0 else -edge,
            y=label,
            text=f"{x:+.3g}",
            showarrow=False,
            xanchor="right" if x > 0 else "left",
            yshift=11,
            font=dict(size=12),
        )
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=labels, autorange="reversed", showgrid=False)
    fig.update_xaxes(
        range=[-edge * 1.05, edge * 1.05],
        zeroline=False,
        title_text="A − B in margins of its metric (positive = the claimed direction)",
    )
    tested = f"{r.m} tested" + (f"; {len(rows) - r.m} without a test have no dot" if len(rows) > r.m else "")
    return _layout(
        fig,
        f"All {len(rows)} comparisons ({tested}): 95% intervals against what each claim needs, Holm-adjusted verdicts",
        130 + 30 * len(rows),
    )


@kept
def live_figure(c) -> go.Figure:
    """A live run's curves so far (``claims.LiveCurves``), one colour per arm: left, each arm's own training loss at
    every step (traces 0..n-1); right, the held-out metric at every evaluation (traces n..2n-1).
    training[arm] / points[arm] = (x values, y values)."""
    training, points, labels, x, metric_label = c.training, c.points, c.labels, c.x, c.metric_label
    (better, worse), higher_is_better = c.pair, c.higher_is_better
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.1,
        subplot_titles=(
            "training loss, every step (each arm's own objective)",
            f"{esc(short_label(metric_label))}, held out, at every evaluation",
        ),
    )
    for col, series, mode, width in ((1, training, "lines", 1.5), (2, points, "lines+markers", 3)):
        for arm, (xs, ys) in series.items():
            label = esc(labels.get(arm, arm))
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode=mode,
                    name=label,
                    legendgroup=arm,
                    showlegend=col == 2,
                    line=dict(color=colour(arm, better, worse), width=width),
                    hovertemplate=f"{label}<br>{X_TITLES[x]} %{{x:,.4~s}}<br>%{{y:.4f}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_xaxes(title_text=X_TITLES[x], tickformat=".2s" if x == "flops" else None, rangemode="tozero")
    fig.update_yaxes(title_text=axis_title(metric_label, higher_is_better), row=1, col=2)
    _layout(fig, "Live: one seed of each arm, as it trains", 440)
    fig.update_layout(legend=dict(y=1.13), margin=dict(t=125))  # above the subplots' titles
    return fig


@kept
def key_figure(r) -> go.Figure:
    """The lesson's key figure (stage and handout): the chosen comparison's curves, mean ± sd over seeds."""
    comp = r.comparison
    higher = (
        None
        if r.metric == "train_loss"
        else next((c.higher_is_better for c in r.comparisons if c.metric == r.metric), None)
    )
    fig = curves_figure(r.curves, r.x, r.metric_label, higher, comp.better, comp.worse)
    verdict = (comp.verdict or {}).get("label")  # on a projector the verdict stands with its curves (and its scale)
    lines = [esc(line) for line in textwrap.wrap(comp.claim, TITLE_CHARS)]
    if verdict:  # a long one (no verdict: which arm did not learn, with its numbers) wraps like the claim
        lines += [
            f"{'verdict: ' if i == 0 else ''}<b>{esc(part)}</b>"
            for i, part in enumerate(textwrap.wrap(verdict, TITLE_CHARS - len("verdict: ")))
        ]
    more = (len(lines) - 1) * TITLE_LINE_PX  # a title of several lines pushes the legend and the plot down
    fig.update_layout(
        title=dict(text="<br>".join(lines), y=1, yref="container", yanchor="top", pad=dict(t=30)),
        margin=dict(t=fig.layout.margin.t + more),
        height=fig.layout.height + more,
    )
    return fig


def finals_of(r) -> go.Figure | None:
    """``finals_figure`` of a Result when it has results (the stage's "finals" figure), else None."""
    return finals_figure(r) if r.has_results else None


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/claims.py's SPEC), key first.
FIGURES = {"curves": key_figure, "finals": finals_of}


def every_figure(r) -> list:
    """Every figure pages/claims.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (r.has_results and finals_figure(r),)
    return [key_figure(r), *(fig for fig in more if fig)]
