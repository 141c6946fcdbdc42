"""Figures for the distillation lesson: ``distillation.run``'s Result (or its ``claims``) in, plotly Figure out.

Tokens are HTML-escaped with app.core.text.html before they enter cell, tick or hover text (plotly renders a
subset of HTML).
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core.text import html as esc
from app.figures import kept

TEACHER, STUDENT = "#4c78a8", "#f58518"
LIGHT_TEACHER, LIGHT_STUDENT = "#b7cde3", "#fbcf9f"


def shares(values) -> list[float]:
    """Probabilities renormalised over the tokens shown: each one's share of what they hold together (sums to 1)."""
    total = float(sum(values))
    return [float(v) / total if total > 0 else 0.0 for v in values]


@kept
def soft_targets_figure(
    tokens: list[str],
    teacher_1: list[float],
    teacher_t: list[float],
    student_1: list[float],
    student_t: list[float],
    temperature: float,
    gold: str | None = None,
) -> go.Figure:
    """Two panels (teacher, student): the shape of the soft targets at T = 1 (pale) and at T (solid) — each shown
    token's share of the probability the shown tokens hold together (``shares``: renormalised over them).

    Over the whole vocabulary a high T spreads almost all the mass over tens of thousands of tokens, so every shown
    token's probability becomes tiny and the bars of T = 1 and T cannot be compared; their *ratios* are what T
    changes (p_i / p_j = (q_i / q_j)^(1/T)), and renormalising keeps exactly those. The panel titles say how much
    probability the shown tokens hold at each T; hover gives each token's probability over the whole vocabulary.

    Traces in order: teacher T=1, teacher T, student T=1, student T; y = shares aligned with ``tokens`` (each trace
    sums to 1), customdata = the probabilities as given (over the whole vocabulary).
    """
    names = [f"<b>{esc(t)}</b> ✓" if gold is not None and t == gold else esc(t) for t in tokens]
    n, T = len(tokens), f"{temperature:g}"

    def held(one, hot) -> str:
        return f"these {n} hold {sum(one):.0%} of P at T = 1, {sum(hot):.1%} at T = {T}"

    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        subplot_titles=(
            f"<b>teacher (BERT)</b><br>{held(teacher_1, teacher_t)}",
            f"<b>student (DistilBERT)</b><br>{held(student_1, student_t)}",
        ),
    )
    series = [
        (teacher_1, "teacher, T = 1", LIGHT_TEACHER, 1),
        (teacher_t, f"teacher, T = {T}", TEACHER, 1),
        (student_1, "student, T = 1", LIGHT_STUDENT, 2),
        (student_t, f"student, T = {T}", STUDENT, 2),
    ]
    for values, name, colour, col in series:
        fig.add_trace(
            go.Bar(
                x=names,
                y=shares(values),
                customdata=list(values),
                name=name,
                marker_color=colour,
                hovertemplate=f"{esc(name)}<br>%{{x}}: %{{y:.1%}} of the {n} tokens shown"
                "<br>P = %{customdata:.4g} over the whole vocabulary<extra></extra>",
            ),
            1,
            col,
        )
    fig.update_layout(
        barmode="group",
        title=f"Soft targets, T = 1 vs T = {T}: each token's share of the {n} shown",
        height=440,
        margin=dict(l=10, r=10, t=100, b=30),
        plot_bgcolor="white",
        legend=dict(orientation="v", x=1.01, xanchor="left", y=1, yanchor="top"),
    )
    fig.update_yaxes(title_text="share of the tokens shown", tickformat=".0%", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    fig.update_xaxes(tickangle=-35)
    return _room(fig)


@kept
def temperature_figure(r, recipe_temperature: float | None = None) -> go.Figure:
    """From ``distillation.run``'s Result: left, entropy of teacher and student vs T (flatter = higher); right, the
    recipe's T²·KL vs T (``r.sweep``). Dotted lines mark the chosen T (``r.temperature``) and the recipe's T
    (``r.recipe_temperature``, unless one is given)."""
    sweep, temperature = r.sweep, r.temperature
    recipe_temperature = r.recipe_temperature if recipe_temperature is None else recipe_temperature
    temps = sweep["temperature"]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("entropy of the softened distribution (nats)", "soft-target term T² · KL(teacher ‖ student)"),
    )
    fig.add_trace(
        go.Scatter(
            x=temps,
            y=sweep["teacher_entropy"],
            name="teacher",
            line_color=TEACHER,
            hovertemplate="teacher · T = %{x:g}<br>entropy %{y:.3f} nats<extra></extra>",
        ),
        1,
        1,
    )
    fig.add_trace(
        go.Scatter(
            x=temps,
            y=sweep["student_entropy"],
            name="student",
            line_color=STUDENT,
            hovertemplate="student · T = %{x:g}<br>entropy %{y:.3f} nats<extra></extra>",
        ),
        1,
        1,
    )
    fig.add_trace(
        go.Scatter(
            x=temps,
            y=sweep["kl_term"],
            name="T² · KL",
            line_color="#54a24b",
            hovertemplate="T = %{x:g}<br>T² · KL = %{y:.5f}<extra></extra>",
        ),
        1,
        2,
    )
    for col in (1, 2):
        fig.add_vline(x=temperature, line_dash="dot", line_color="#333", row=1, col=col)
        if recipe_temperature != temperature:
            fig.add_vline(x=recipe_temperature, line_dash="dash", line_color="#999", row=1, col=col)
    fig.update_xaxes(title_text="temperature T")
    marks = (
        f"dotted: your T = {temperature:g}; dashed: the recipe's T = {recipe_temperature:g}"
        if recipe_temperature != temperature
        else f"dotted: T = {temperature:g}, the recipe's"
    )
    fig.update_layout(
        title=f"How T softens the distributions ({marks})",
        height=400,
        margin=dict(l=10, r=10, t=80, b=30),
        plot_bgcolor="white",
        legend=dict(orientation="h", y=-0.25),
    )
    return _room(fig)


@kept
def position_kl_figure(r) -> go.Figure:
    """T² · KL at every position of the sentence (``r.kl_per_token`` at ``r.temperature``): where the student
    disagrees with its teacher; the masked word's positions (``r.masked``) in red."""
    tokens, kl, masked, temperature = r.tokens, r.kl_per_token, r.masked, r.temperature
    colours = ["#e45756" if i in masked else "#4c78a8" for i in range(len(tokens))]
    labels = [f"{i}·{esc(t)}" for i, t in enumerate(tokens)]
    hover = [
        f"position {i}: <b>{esc(t)}</b>{' (masked)' if i in masked else ''}<br>T² · KL = {v:.5f}"
        for i, (t, v) in enumerate(zip(tokens, kl))
    ]
    fig = go.Figure(
        go.Bar(x=labels, y=kl, marker_color=colours, hovertext=hover, hovertemplate="%{hovertext}<extra></extra>")
    )
    fig.update_layout(
        title=f"Soft-target term at every token (T = {temperature:g}; red = the masked word)",
        height=360,
        margin=dict(l=10, r=10, t=60, b=30),
        plot_bgcolor="white",
        yaxis_title="T² · KL",
    )
    fig.update_xaxes(tickangle=-35)
    return _room(fig)


@kept
def claims_figure(rows: dict[str, dict[str, float | None]]) -> go.Figure:
    """``Result.claims`` as grouped bars: for each claim ("smaller", "faster", "retained"), one bar per source
    ("paper", "measured here", "model card"); None = not available from that source."""
    claims = ["smaller", "faster", "retained"]
    nice = {"smaller": "smaller (1 − params ratio)", "faster": "faster (speed-up − 1)", "retained": "accuracy retained"}
    colours = {"paper": "#9d9d9d", "measured here": "#4c78a8", "model card": "#f58518"}
    fig = go.Figure()
    top = 0.0
    for source, values in rows.items():
        y = [values.get(c) * 100 if values.get(c) is not None else None for c in claims]
        top = max([top] + [v for v in y if v is not None])
        fig.add_trace(
            go.Bar(
                x=[nice[c] for c in claims],
                y=y,
                name=source,
                marker_color=colours.get(source),
                text=[f"{v:.0f}%" if v is not None else "" for v in y],
                textposition="outside",
                hovertemplate=f"{esc(source)}<br>%{{x}}: %{{y:.1f}}%<extra></extra>",
            )
        )
    # a wild value (a speed-up timed on a busy machine) must not squash the others: cap the axis and
    # write the clipped value at the top of its bar
    low = min([0.0] + [v * 100 for vals in rows.values() for v in vals.values() if v is not None])
    cap = min(max(top * 1.15, 110), 250)
    fig.update_yaxes(range=[min(low * 1.15, 0), cap])
    for i, (source, values) in enumerate(rows.items()):
        for j, c in enumerate(claims):
            v = values.get(c)
            if v is not None and v * 100 > cap:
                fig.add_annotation(
                    x=nice[c],
                    y=cap,
                    text=f"{esc(source)}: {v * 100:.0f}% ↑",
                    showarrow=False,
                    yanchor="top",
                    xshift=(i - (len(rows) - 1) / 2) * 60,
                    bgcolor="white",
                )
    fig.update_layout(
        barmode="group",
        title="DistilBERT's claims: the paper, this machine, the bundled model card",
        height=380,
        margin=dict(l=10, r=10, t=60, b=30),
        plot_bgcolor="white",
        yaxis_title="%",
    )
    return _room(fig)


def _room(fig: go.Figure) -> go.Figure:
    """Let the axes take the margin their labels need (the layout's margins are the minimum)."""
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


@kept
def key_figure(r) -> go.Figure:
    """The lesson's key figure, from ``distillation.run``'s Result: the teacher's and the student's soft
    targets for the masked word, at T = 1 and at the chosen temperature."""
    s = r.soft
    return soft_targets_figure(s.tokens, s.teacher_1, s.teacher_t, s.student_1, s.student_t, r.temperature, s.gold)


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/distillation.py's SPEC), key figure
#: first.
FIGURES = {"soft": key_figure, "temperature": temperature_figure}


def every_figure(r) -> list:
    """Every figure pages/distillation.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        temperature_figure(r),
        position_kl_figure(r),
        claims_figure(r.claims),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
