"""Figures for the ELECTRA lesson: ``electra.run``'s Result (or its ``round``, ``signal``, ``curves``) in, plotly Figure
out.

The pipeline is one heatmap trace per stage, all on one x axis (token positions), so a token can be
followed straight down from the original sentence to the discriminator's verdict. Every token that
enters hover or cell text goes through ``app.core.text.html`` (plotly renders a subset of HTML there, and
bidi overrides or zero-width characters would reorder or hide what a student reads).

Figures are written as plain dicts and built with plotly's validation off (``_validate=False``): the
page rebuilds them on every rerun and validation would be most of its time (~60 ms of ~65 ms for the
pipeline). The tests rebuild every figure *with* validation, so a wrong property still fails there.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
from plotly.colors import get_colorscale

from app.core.text import count
from app.core.text import html as esc
from app.figures import kept

GREY = [[0.0, "#f2f2f2"], [1.0, "#c9c9c9"]]  # content, special
MASKED = [[0.0, "#f2f2f2"], [1.0, "#ffb000"]]  # kept, masked
SAMPLED = [[0.0, "#9ad0a5"], [1.0, "#e4572e"]]  # same as the original, a real replacement
CORRUPTED = [[0.0, "#f2f2f2"], [1.0, "#f7b6a3"]]  # original, replaced
TRUTH = [[0.0, "#d9ecf7"], [1.0, "#c0392b"]]  # original, replaced
# P(replaced): blue = looks original, red = looks replaced. Spelled out: these figures skip validation, and plotly.js
# does not know the name "RdBu_r" (plotly.py expands it), so each renderer fell back to a scale of its own.
SCORE = get_colorscale("RdBu_r")

STAGES = (
    "1 · original",
    "2 · masked",
    "3 · generator samples",
    "4 · corrupted",
    "5 · P(replaced)",
    "6 · truth (1 = replaced)",
)
EDIT_ROWS = ("your sentence", "P(replaced)", "truth (1 = replaced)")
PHONE_EDIT_ROWS = ("yours", "P(replaced)", "truth")  # the same rows' labels on a phone
PER_LINE = 16  # tokens per line of a strip: longer sentences wrap onto further blocks, like text


def _figure(data: list[dict], layout: dict) -> go.Figure:
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def _stage(name, z, text, hover, colorscale, zmin=0.0, zmax=1.0, colorbar=None) -> dict:
    """One stage over the whole sentence: per-token values, cell text and hover text."""
    return dict(name=name, z=z, text=text, hover=hover, colorscale=colorscale, zmin=zmin, zmax=zmax, colorbar=colorbar)


def _cell_font(n_tokens: int) -> int:
    """Smaller cell text for longer lines, so a token still fits its cell."""
    return max(9, min(14, int(200 / max(n_tokens, 1)) + 6))


PHONE_STAGES = ("original", "masked", "sampled", "corrupted", "P(replaced)", "truth")  # the row labels on a phone
STAGE_PER_LINE = 12  # tokens per line on a projector's stage: ~75-px cells hold "[MASK]" in STAGE_FONT-px type
STAGE_FONT = 18  # px: the cell text on a stage, read from the back of a hall (14 px at 16 a line was not)
PHONE_PER_LINE = 4  # tokens per line on a phone: a cell of ~70 px holds "[MASK]" or a 9-letter word in 12-px type
PHONE_CELL_CHARS = 9
PHONE_FONT = 12  # app.ui.layout.MIN_TEXT_PX


def _phone_text(cell: str) -> str:
    """A cell's (escaped) text cut to ``PHONE_CELL_CHARS`` characters as read, escaped again (hover keeps it all)."""
    plain = html.unescape(cell)
    return esc(plain if len(plain) <= PHONE_CELL_CHARS else plain[: PHONE_CELL_CHARS - 1] + "…")


def _for_phone(stages: list[dict], names: tuple[str, ...] = PHONE_STAGES) -> list[dict]:
    """The stages as a phone draws them: short row labels (``names``), cell text cut to fit, the colour bar under
    the grid."""
    out = []
    for stage, name in zip(stages, names):
        bar = stage["colorbar"]
        if bar is not None:
            bar = dict(
                bar,
                orientation="h",
                x=0,
                xanchor="left",
                y=-0.02,
                yanchor="top",
                len=1.0,
                thickness=12,
                title=dict(text=bar["title"]["text"], side="top"),
            )
        out.append(dict(stage, name=name, text=[_phone_text(t) for t in stage["text"]], colorbar=bar))
    return out


def _strips(
    stages: list[dict], n_tokens: int, title: str, per_line: int, phone: bool = False, cell_font: int | None = None
) -> go.Figure:
    """The stages as stacked one-row heatmaps, wrapped like text: ``per_line`` tokens per block, one block
    under the other, each with its own axes. Trace order is block-major: block b, stage s is
    ``fig.data[b * len(stages) + s]``; x holds the true token positions.

    Each stage is a one-row heatmap with a numeric y (a categorical y breaks plotly.js's heatmap when
    several one-row traces share an axis)."""
    per_line = max(1, per_line)
    blocks = [range(a, min(a + per_line, n_tokens)) for a in range(0, max(n_tokens, 1), per_line)]
    row_px, gap_px, top_px, bottom_px = 46, 80, 60, 30  # a gap that still holds the tick labels when a projector
    # stage draws the figure at ~70% of this height (the domains scale with it, the labels do not)
    if phone:  # rows that hold one line of 12-px text; the colour bar under the last block
        row_px, gap_px, top_px, bottom_px = 32, 46, 70, 90
    block_px = row_px * len(stages)
    height = top_px + bottom_px + len(blocks) * block_px + (len(blocks) - 1) * gap_px
    names = [stage["name"] for stage in stages]
    traces, layout = (
        [],
        dict(
            title=dict(text=title),
            height=height,
            margin=dict(l=10, r=10, t=top_px, b=bottom_px),
            plot_bgcolor="white",
            font=dict(size=14),
        ),
    )
    if phone:
        layout.update(font=dict(size=PHONE_FONT), meta="phone")
    font = PHONE_FONT if phone else cell_font or _cell_font(min(per_line, n_tokens))
    for b, block in enumerate(blocks):
        suffix = "" if b == 0 else str(b + 1)
        top = 1 - b * (block_px + gap_px) / (height - top_px - bottom_px)
        bottom = top - block_px / (height - top_px - bottom_px)
        for r, stage in enumerate(stages):
            trace = dict(
                type="heatmap",
                x=list(block),
                y=[r],
                z=[[stage["z"][i] for i in block]],
                text=[[stage["text"][i] for i in block]],
                hovertext=[[stage["hover"][i] for i in block]],
                texttemplate="%{text}",
                hovertemplate="%{hovertext}<extra></extra>",
                textfont=dict(size=font),
                colorscale=stage["colorscale"],
                zmin=stage["zmin"],
                zmax=stage["zmax"],
                xgap=2,
                ygap=3,
                name=stage["name"],
                showscale=b == 0 and stage["colorbar"] is not None,
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
            )
            if trace["showscale"]:
                trace["colorbar"] = stage["colorbar"]
            traces.append(trace)
        xaxis = dict(
            domain=[0, 1], anchor=f"y{suffix}", tickmode="array", tickvals=list(block), showgrid=False, zeroline=False
        )
        if len(blocks) > 1:  # every line as wide as a full one, so cells keep their size
            xaxis["range"] = [block.start - 0.5, block.start + per_line - 0.5]
        if b == len(blocks) - 1 and not phone:  # (on a phone the colour bar is under it: the title would collide)
            xaxis["title"] = dict(text="position")
        layout[f"xaxis{suffix}"] = xaxis
        layout[f"yaxis{suffix}"] = dict(
            domain=[max(0.0, bottom), min(1.0, top)],
            anchor=f"x{suffix}",
            tickmode="array",
            tickvals=list(range(len(stages))),
            ticktext=names,
            autorange="reversed",
            showgrid=False,
            zeroline=False,
        )
    return _figure(traces, layout)


def _score_bar(title="P(replaced)") -> dict:
    return dict(title=dict(text=title, side="right"), thickness=14, len=0.9, tickvals=[0, 0.5, 1])


def _generator_row(rnd, tok: list[str]) -> tuple[list, list, list]:
    """(z, text, hover) of the generator's row: at each masked position the sampled token, whether it is the original
    back, and the generator's top proposals."""
    n = len(rnd.tokens)
    g_z, g_text, g_hover = [], [], []
    for i in range(n):
        if not rnd.masked[i]:
            g_z.append(None)
            g_text.append("")
            g_hover.append(f"position {i}: not masked, nothing sampled")
            continue
        rep, same = esc(rnd.replacement[i]), rnd.same_as_original[i]
        alts = "<br>".join(
            f"{'▶ ' if a == rnd.replacement[i] else '   '}{esc(a)}  {p:.4f}" for a, p in rnd.alternatives[i]
        )
        verdict = (
            "<b>sampled the original token</b>: counts as original (label 0), as in the paper"
            if same
            else f"replaces <b>{tok[i]}</b>"
        )
        g_z.append(0.0 if same else 1.0)
        g_text.append(f"{rep} (=)" if same else rep)
        g_hover.append(
            f"position {i}: sampled <b>{rep}</b> with p = {rnd.replacement_prob[i]:.4f}<br>{verdict}"
            f"<br><br>top {len(rnd.alternatives[i])} proposals:<br>{alts}"
        )
    return g_z, g_text, g_hover


@kept
def pipeline_figure(
    rnd, threshold: float = 0.5, per_line: int = PER_LINE, phone: bool = False, stage: bool = False
) -> go.Figure:
    """Six stages, one row each: original -> masked -> generator samples -> corrupted -> P(replaced)
    -> ground truth. ``rnd`` is an app.lessons.electra.Round.

    z per row: original 1 = special; masked 1 = masked; generator 1 = a real replacement, 0 = the
    sample equals the original (counts as original), None where nothing was masked; corrupted and
    ground truth 1 = replaced; P(replaced) the discriminator's probability. ``stage``: drawn for a projector's
    stage — ``STAGE_PER_LINE`` tokens a line in ``STAGE_FONT``-px type.
    """
    n = len(rnd.tokens)
    tok = [esc(t) for t in rnd.tokens]
    cor = [esc(t) for t in rnd.corrupted]
    kind = ["special token, never masked" if s else "content token" for s in rnd.special]

    original = _stage(
        STAGES[0],
        [1.0 if s else 0.0 for s in rnd.special],
        tok,
        [f"<b>{t}</b> · position {i}<br>{k}" for i, (t, k) in enumerate(zip(tok, kind))],
        GREY,
    )

    masked = _stage(
        STAGES[1],
        [1.0 if m else 0.0 for m in rnd.masked],
        ["[MASK]" if m else t for m, t in zip(rnd.masked, tok)],
        [
            f"position {i}: masked (was <b>{t}</b>)" if m else f"position {i}: <b>{t}</b>, kept"
            for i, (m, t) in enumerate(zip(rnd.masked, tok))
        ],
        MASKED,
    )

    generator = _stage(STAGES[2], *_generator_row(rnd, tok), SAMPLED)

    corrupted = _stage(
        STAGES[3],
        [1.0 if y else 0.0 for y in rnd.labels],
        cor,
        [
            f"position {i}: <b>{c}</b>" + (f" (was {t})" if y else "")
            for i, (c, t, y) in enumerate(zip(cor, tok, rnd.labels))
        ],
        CORRUPTED,
    )

    scores = _stage(
        STAGES[4],
        list(rnd.scores),
        [f"{s:.2f}" for s in rnd.scores],
        [
            f"position {i}: <b>{c}</b><br>P(replaced) = {s:.4f}<br>"
            + ("flagged as replaced" if s > threshold else "looks original")
            + f" (threshold {threshold:g})"
            + ("<br>special token: never replaced, not scored in the metrics" if sp else "")
            for i, (c, s, sp) in enumerate(zip(cor, rnd.scores, rnd.special))
        ],
        SCORE,
        colorbar=_score_bar(),
    )

    truth_text, truth_hover = [], []
    for i, (y, same) in enumerate(zip(rnd.labels, rnd.same_as_original)):
        truth_text.append("1" if y else ("0 (=)" if same else "0"))
        truth_hover.append(
            f"position {i}: "
            + ("<b>replaced</b> (label 1)" if y else "<b>original</b> (label 0)")
            + ("<br>masked, but the generator sampled the original back" if same else "")
        )
    truth = _stage(STAGES[5], [1.0 if y else 0.0 for y in rnd.labels], truth_text, truth_hover, TRUTH)

    stages = [original, masked, generator, corrupted, scores, truth]
    if phone:  # app/ui/layout.py: four tokens a line, short row names (the caption gives the stages in full)
        return _strips(_for_phone(stages), n, "Replaced-token detection, stage by stage", PHONE_PER_LINE, phone=True)
    if stage:
        return _strips(stages, n, "Replaced-token detection, stage by stage", STAGE_PER_LINE, cell_font=STAGE_FONT)
    return _strips(stages, n, "Replaced-token detection, stage by stage", per_line)


@kept
def edit_figure(r, threshold: float | None = None, per_line: int = PER_LINE, phone: bool = False) -> go.Figure:
    """The hand-edited sentence, the discriminator's P(replaced) for every token, and the truth, from
    ``electra.run``'s Result (``edited_tokens``, ``edit_scores``, ``edit_labels``, the sentence as encoded, and
    ``edit_pos`` when the edit applied, its ``threshold`` unless one is given). z: row 0 1 = the edited position;
    row 1 P(replaced); row 2 1 = replaced. ``phone``: four tokens a line, as the key figure on a phone."""
    tokens, scores, labels, special = r.edited_tokens, r.edit_scores, r.edit_labels, r.encoded.special
    edited = r.edit_pos if r.edit.ok else None
    threshold = r.threshold if threshold is None else threshold
    n = len(tokens)
    tok = [esc(t) for t in tokens]
    was = [esc(t) for t in (r.encoded.tokens or tokens)]
    sentence = _stage(
        EDIT_ROWS[0],
        [1.0 if i == edited else 0.0 for i in range(n)],
        tok,
        [
            f"position {i}: <b>{t}</b>" + (f" (your edit; was {w})" if i == edited else "")
            for i, (t, w) in enumerate(zip(tok, was))
        ],
        MASKED,
    )
    score = _stage(
        EDIT_ROWS[1],
        list(scores),
        [f"{s:.2f}" for s in scores],
        [
            f"position {i}: <b>{t}</b><br>P(replaced) = {s:.4f}<br>"
            + ("flagged as replaced" if s > threshold else "looks original")
            + f" (threshold {threshold:g})"
            + ("<br>special token" if sp else "")
            for i, (t, s, sp) in enumerate(zip(tok, scores, special))
        ],
        SCORE,
        colorbar=_score_bar(),
    )
    truth = _stage(
        EDIT_ROWS[2],
        [1.0 if y else 0.0 for y in labels],
        ["1" if y else "0" for y in labels],
        [
            f"position {i}: " + ("<b>replaced</b> (label 1)" if y else "<b>original</b> (label 0)")
            for i, y in enumerate(labels)
        ],
        TRUTH,
    )
    if phone:
        return _strips(
            _for_phone([sentence, score, truth], PHONE_EDIT_ROWS),
            n,
            "Your edit through the discriminator",
            PHONE_PER_LINE,
            phone=True,
        )
    return _strips([sentence, score, truth], n, "Your edit through the discriminator", per_line)


@kept
def signal_figure(counts: dict[str, int]) -> go.Figure:
    """Positions that send a training signal for the same sentence (``Result.signal``): MLM (masked only) vs
    replaced-token detection (every token). x = [MLM count, RTD count]."""
    total = max(1, counts["tokens"])
    names = ["Masked LM (BERT, ELECTRA's generator)", "Replaced-token detection (ELECTRA's discriminator)"]
    values = [counts["mlm"], counts["rtd"]]
    bar = dict(
        type="bar",
        y=names,
        x=values,
        orientation="h",
        marker=dict(color=["#ffb000", "#c0392b"]),
        text=[f"{v} of {counts['tokens']} positions ({v / total:.0%})" for v in values],
        textposition="auto",
        hovertemplate="%{y}<br>%{x} positions get a loss term<extra></extra>",
    )
    return _figure(
        [bar],
        dict(
            title=dict(text="Positions that contribute to the loss, same sentence"),
            height=260,
            margin=dict(l=10, r=10, t=60, b=40),
            plot_bgcolor="white",
            font=dict(size=14),
            xaxis=dict(
                title=dict(text="positions with a loss term"), range=[0, total * 1.02], showgrid=True, gridcolor="#eee"
            ),
            yaxis=dict(autorange="reversed"),
        ),
    )


@kept
def auc_curve_figure(curves: dict) -> go.Figure:
    """The discriminator's held-out ROC-AUC by training step (``Result.curves``, ``electra.read_curves``), with chance
    (0.5) as a dashed line. With a joint stage before it, that stage comes first (grey: the generator learning beside
    the discriminator) and the later stage after it (red: a fresh generator, frozen), with the switch marked."""
    joint = curves.get("joint")
    offset = joint["steps_done"] if joint else 0
    traces, seen = [], []
    if joint:
        traces.append(
            dict(
                type="scatter",
                x=list(joint["eval_step"]),
                y=list(joint["disc_auc"]),
                mode="lines+markers",
                name="joint: the generator learns beside it",
                line=dict(color="#7f8c8d", width=3),
                hovertemplate="step %{x}<br>ROC-AUC %{y:.4f}<extra>joint</extra>",
            )
        )
        seen += [a for a in joint["disc_auc"] if a is not None]
    traces.append(
        dict(
            type="scatter",
            x=[offset + s for s in curves["eval_step"]],
            y=list(curves["disc_auc"]),
            mode="lines+markers",
            name="fresh generator, frozen (the bundled pair)" if joint else "held-out ROC-AUC",
            line=dict(color="#c0392b", width=3),
            hovertemplate="step %{x}<br>ROC-AUC %{y:.4f}<extra></extra>",
        )
    )
    seen += [a for a in curves["disc_auc"] if a is not None]
    low = min([0.4] + [a - 0.05 for a in seen])  # chance and every point stay in view
    shapes = [
        dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=0.5, y1=0.5, line=dict(color="#888", dash="dash"))
    ]
    notes = [
        dict(xref="paper", x=1, yref="y", y=0.5, text="chance (0.5)", showarrow=False, xanchor="right", yanchor="top")
    ]
    if joint:
        shapes.append(
            dict(
                type="line",
                xref="x",
                x0=offset,
                x1=offset,
                yref="paper",
                y0=0,
                y1=1,
                line=dict(color="#555", dash="dot"),
            )
        )
        notes.append(
            dict(
                xref="x",
                x=offset,
                yref="paper",
                y=0.02,
                text="generator swapped ",
                showarrow=False,
                xanchor="right",
                yanchor="bottom",
                font=dict(color="#555"),
            )
        )
    return _figure(
        traces,
        dict(
            title=dict(text="Discriminator: held-out ROC-AUC while training"),
            height=340,
            margin=dict(l=10, r=10, t=60 if not joint else 90, b=40),
            plot_bgcolor="white",
            font=dict(size=14),
            shapes=shapes,
            annotations=notes,
            showlegend=bool(joint),
            legend=dict(orientation="h", x=0, y=1.02, xanchor="left", yanchor="bottom"),
            xaxis=dict(title=dict(text="training step"), showgrid=True, gridcolor="#eee"),
            yaxis=dict(title=dict(text="ROC-AUC"), range=[low, 1.0], showgrid=True, gridcolor="#eee"),
        ),
    )


def describe(r) -> str:
    """The key figure in words (plain text; the page escapes it): the round's masked positions, what the generator
    put there, and how the discriminator scored the sentence (at the Result's threshold)."""
    rnd, threshold = r.round, r.threshold
    masked = [i for i, m in enumerate(rnd.masked) if m]
    swaps = [
        f"{rnd.tokens[i]} → {rnd.replacement[i]}" + (" (the original again)" if rnd.same_as_original[i] else "")
        for i in masked
    ]
    flagged = [i for i, s in enumerate(rnd.scores) if s > threshold and not rnd.special[i]]
    right = sum(
        (rnd.scores[i] > threshold) == bool(rnd.labels[i]) for i in range(len(rnd.tokens)) if not rnd.special[i]
    )
    content = sum(not s for s in rnd.special)
    really = sum(rnd.labels)
    return (
        f"{count(len(rnd.tokens), 'token')}, {len(masked)} masked; the generator sampled "
        f"{'; '.join(swaps) or 'nothing'}. {count(really, 'token')} {'is' if really == 1 else 'are'} really "
        f"replaced. The discriminator flags {count(len(flagged), 'token')} above P(replaced) = {threshold:g}: "
        f"{', '.join(rnd.corrupted[i] for i in flagged) or 'none'}; it is right on {right} of "
        f"{count(content, 'token')}."
    )


@kept
def key_figure(r, phone: bool = False, stage: bool = False) -> go.Figure:
    """The lesson's key figure, from ``electra.run``'s Result: one round of the game, stage by stage (``phone``:
    four tokens a line, for a phone's width; ``stage``: fewer tokens a line in larger type, for a projector)."""
    return pipeline_figure(r.round, r.threshold, phone=phone, stage=stage)


def signal_of(r) -> go.Figure:
    """``signal_figure`` of a Result (the stage's "signal" figure)."""
    return signal_figure(r.signal)


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/electra.py's SPEC), key first.
FIGURES = {"pipeline": key_figure, "signal": signal_of}


def every_figure(r) -> list:
    """Every figure pages/electra.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        key_figure(r, phone=True),  # the same, drawn for a phone (app/ui/layout.py)
        edit_figure(r),
        edit_figure(r, phone=True),
        signal_figure(r.signal),
        r.curves and auc_curve_figure(r.curves),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
