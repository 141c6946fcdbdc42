"""Figures for the side-by-side lesson: ``compare.run``'s Result (or its ``electra`` rows) in, plotly Figure out.

Every token that enters cell or hover text is HTML-escaped with app.core.text.html: plotly renders a subset of
HTML there.
"""

from __future__ import annotations

import re
import textwrap

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core.text import html as esc
from app.figures import electra as electra_figures
from app.figures import kept

PIECES = [[0.0, "#eef5ee"], [0.34, "#cfe8cf"], [0.67, "#f6d28b"], [1.0, "#e4572e"]]  # 1 piece ... 4+ pieces
PROB = "Blues"
SCORE = electra_figures.SCORE  # P(replaced), ELECTRA's one scale: blue = looks original, red = looks replaced


# The token grid wraps like text: a band of as many words as fit across, then the next band below. A cell is as
# wide as the widest cell text of the sentence (pieces joined by " · ", or the word itself in the band's header row),
# estimated at CHAR_PX per character of GRID_FONT-px type; GRID_WIDTH is the plot area a student's 1280-px window
# leaves beside the row labels and the colour bar (a wider screen only makes the cells roomier).
GRID_FONT, CHAR_PX, CELL_PAD, GRID_WIDTH = 13, 6.8, 10, 560
GRID_ROW_PX = 27  # one row of cells, header rows included
# On a phone (app/ui/layout.py) the plot area beside the row labels is about PHONE_GRID_WIDTH px (a 390-px screen less
# the page's padding and the labels; the colour bar goes under the grid), in PHONE_GRID_FONT-px type (its minimum).
PHONE_GRID_FONT, PHONE_CHAR_PX, PHONE_GRID_WIDTH = 12, 6.6, 225


def cell_width(texts, char_px: float = CHAR_PX) -> float:
    """Pixels the widest of ``texts`` needs in a grid cell (plain text: escapes count as one character)."""
    return max((len(t) for t in texts), default=1) * char_px + CELL_PAD


def words_per_band(texts, n_words: int, width: float = GRID_WIDTH, char_px: float = CHAR_PX) -> int:
    """How many words one band of the grid holds so that ``cell_width(texts)`` fits ``width``; bands are balanced
    (22 words at 9 a band: 8 + 7 + 7, not 9 + 9 + 4)."""
    most = max(1, int(width // cell_width(texts, char_px)))
    bands = -(-n_words // most) if n_words else 1
    return max(1, -(-n_words // bands)) if n_words else 1


@kept
def token_grid_figure(r, phone: bool = False) -> go.Figure:
    """One row per variant (``r.labels``), one column per word of ``r.window`` (a window of the text around the
    masked word ``r.word``, marked [like this]); a cell lists the pieces that word became. The words wrap into
    bands (``words_per_band``), each under a header row of its words, so a long sentence stays legible.

    r.cells[v][w]: the raw pieces of word window[0] + w in variant v's tokenizer. z = the number of pieces
    (capped at 4 for the colour; the hover says the exact number; header rows have none). r.n_tokens[v]: the
    variant's total token count, special tokens included (shown in the row label).

    ``phone``: the bands as narrow as a phone's width (``PHONE_GRID_WIDTH``), the colour bar under the grid.
    """
    first, stop = r.window
    labels, words, cells, n_tokens, chosen = r.labels, r.words[first:stop], r.cells, r.n_tokens, r.word - first
    plain = [[" · ".join(p) for p in row] for row in cells]  # what each cell shows, before escaping
    heads = [f"[{w}]" if j == chosen else w for j, w in enumerate(words)]
    per_band = words_per_band(
        [t for row in plain for t in row] + heads, len(words), *((PHONE_GRID_WIDTH, PHONE_CHAR_PX) if phone else ())
    )
    rows = [f"{esc(lab)} ({n})" for lab, n in zip(labels, n_tokens)]
    z, text, hover, ticks = [], [], [], []
    for start in range(0, len(words), per_band):
        span = range(start, min(start + per_band, len(words)))
        pad = [None] * (per_band - len(span))
        z.append([None] * per_band)  # the band's header row: its words, no colour
        text.append([f"<b>{esc(heads[j])}</b>" for j in span] + [""] * len(pad))
        hover.append([f"word {first + j}: <b>{esc(words[j])}</b>" for j in span] + [""] * len(pad))
        ticks.append(f"words {first + span[0]}–{first + span[-1]}")
        for label, row, shown, ys in zip(labels, cells, plain, rows):
            z.append([min(len(row[j]), 4) if row[j] else None for j in span] + pad)
            text.append([esc(shown[j]) for j in span] + [""] * len(pad))
            hover.append(
                [
                    f"<b>{esc(label)}</b> · word {first + j} <b>{esc(words[j])}</b><br>{len(row[j])} piece(s): "
                    f"{' · '.join(esc(x) for x in row[j]) or '(none)'}"
                    for j in span
                ]
                + [""] * len(pad)
            )
            ticks.append(ys)
    fig = go.Figure(
        go.Heatmap(
            x=list(range(per_band)),
            y=list(range(len(z))),
            z=z,
            text=text,
            texttemplate="%{text}",
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            colorscale=PIECES,
            zmin=1,
            zmax=4,
            xgap=2,
            ygap=2,
            textfont=dict(size=PHONE_GRID_FONT if phone else GRID_FONT),
            colorbar=dict(
                title=dict(text="pieces", side="top" if phone else "right"),
                tickvals=[1, 2, 3, 4],
                ticktext=["1", "2", "3", "4+"],
                thickness=14,
                **(dict(orientation="h", x=0, xanchor="left", y=-0.01, yanchor="top", len=0.6) if phone else {}),
            ),
        )
    )
    title = "How each tokenizer cuts your sentence (row label: tokens incl. special ones)"
    fig.update_layout(
        title=dict(
            text=title.replace(" (", "<br>(") if phone else title,
            x=0,
            xanchor="left",
            y=1,
            yref="container",
            yanchor="top",
            pad=dict(t=20 if phone else 8),
        ),  # plotly places a title of several lines from the top only with pad.t: with less, its first line is cut
        height=(150 if phone else 60) + GRID_ROW_PX * len(z),
        plot_bgcolor="white",
        margin=dict(l=6, r=6, t=74, b=80) if phone else dict(l=10, r=10, t=40, b=10),
    )
    if phone:
        fig.update_layout(meta="phone")  # app.ui.layout.phone_style leaves a phone figure's own layout as it is
    fig.update_xaxes(visible=False)
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(len(z))),
        ticktext=ticks,
        autorange="reversed",
        showgrid=False,
        zeroline=False,
    )
    return _room(fig)


def describe_tokens(r) -> str:
    """The token grid in words (plain text; the page escapes it): each tokenizer's token count and how it cuts
    the chosen word."""
    w = r.word - r.window[0]
    parts = [
        f"{label}: {n} tokens, «{r.words[r.word]}» as {' · '.join(cells[w]) or 'nothing'}"
        for label, n, cells in zip(r.labels, r.n_tokens, r.cells)
    ]
    return "How each tokenizer cuts the sentence. " + "; ".join(parts) + "."


@kept
def fill_mask_figure(r, phone: bool = False) -> go.Figure:
    """Rows = models (``r.guesses``), columns = rank 1..k: the token each model ranks there for the hidden word's
    first piece, coloured by probability; the masked word as that model saw it is marked in the hover.
    ``phone``: the first ``PHONE_RANKS`` ranks only, so each word has a cell wide enough to read at 390 px.
    """
    labels = [g.label + (" (permutation)" if g.permutation else "") for g in r.guesses]
    tops = [g.prediction.first.read[:PHONE_RANKS] if phone else g.prediction.first.read for g in r.guesses]
    originals = [g.prediction.original for g in r.guesses]
    k = max((len(t) for t in tops), default=0)
    z, text, hover = [], [], []
    for label, top, orig in zip(labels, tops, originals):
        z.append([p for _, p in top] + [None] * (k - len(top)))
        text.append([esc(t) for t, _ in top] + [""] * (k - len(top)))
        hover.append(
            [
                f"<b>{esc(label)}</b> · rank {r + 1}: <b>{esc(t)}</b><br>P = {p:.4f}"
                f"{' (the original word)' if t == orig else ''}"
                for r, (t, p) in enumerate(top)
            ]
            + [""] * (k - len(top))
        )
    fig = go.Figure(
        go.Heatmap(
            x=[f"rank {r + 1}" for r in range(k)],
            y=[esc(lab) for lab in labels],
            z=z,
            text=text,
            texttemplate="%{text}",
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            colorscale=PROB,
            zmin=0,
            textfont=dict(size=14),
            xgap=2,
            ygap=2,
            colorbar=dict(title=dict(text="P", side="right"), thickness=14),
        )
    )
    fig.update_layout(
        title="Top guesses for the masked word (first piece), best first"
        + (f" (the first {k} on a phone)" if phone else ""),
        height=120 + 46 * len(labels),
        margin=dict(l=10, r=10, t=60, b=30),
        plot_bgcolor="white",
    )
    fig.update_xaxes(side="top", showgrid=False)
    fig.update_yaxes(autorange="reversed", showgrid=False)
    return _room(fig)


TITLE_CHARS = 80  # a line of the cost figure's title (at 1280 px beside the sidebar a longer one ran off the right)
PHONE_RANKS = 3  # guesses per model a phone's fill-mask grid shows: 3 cells of ~75 px beside the names


@kept
def discriminator_figure(rows: list[tuple[str, list[str], list[float]]], phone: bool = False) -> go.Figure:
    """ELECTRA's discriminator (``Result.electra``), one row per input: (name, tokens, P(replaced) per token).

    Rows may differ in length (a swapped word may have fewer pieces); missing cells are empty. ``phone``: turned a
    quarter, one row per position and a column per input, so each token has a whole cell's width at 390 px.
    """
    if phone:
        return _discriminator_down(rows)
    n = max((len(t) for _, t, _ in rows), default=0)
    z, text, hover = [], [], []
    for name, toks, probs in rows:
        pad = n - len(toks)
        z.append(list(probs) + [None] * pad)
        text.append([esc(t) for t in toks] + [""] * pad)
        hover.append(
            [
                f"{esc(name)} · position {i}: <b>{esc(t)}</b><br>P(replaced) = {p:.3f}"
                for i, (t, p) in enumerate(zip(toks, probs))
            ]
            + [""] * pad
        )
    fig = go.Figure(
        go.Heatmap(
            x=list(range(n)),
            y=[esc(name) for name, _, _ in rows],
            z=z,
            text=text,
            texttemplate="%{text}",
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            colorscale=SCORE,
            zmin=0,
            zmax=1,
            xgap=2,
            ygap=3,
            textfont=dict(size=13),
            colorbar=dict(title=dict(text="P(replaced)", side="right"), thickness=14, tickvals=[0, 0.5, 1]),
        )
    )
    fig.update_layout(
        title="ELECTRA discriminator: how likely each token is to be a replacement",
        height=110 + 60 * len(rows),
        margin=dict(l=10, r=10, t=60, b=30),
        plot_bgcolor="white",
    )
    fig.update_xaxes(title_text="position", showgrid=False, zeroline=False)
    fig.update_yaxes(autorange="reversed", showgrid=False)
    return _room(fig)


@kept
def cost_figure(
    labels: list[str],
    params: list[int],
    memory_bytes: list[int],
    latency_ms: list[float],
    device: str,
    latency_low: list[float] | None = None,
    latency_high: list[float] | None = None,
    ties: tuple = (),
    coverage: float | None = None,
) -> go.Figure:
    """Three panels of horizontal bars sharing one column of names (read level, from the back of a hall): parameters
    (millions), memory (MiB: parameters + buffers), median latency (ms) with the median's interval as a whisker
    (``latency_low``/``latency_high``, ``coverage`` its confidence). ``ties``: groups of labels whose intervals
    overlap — the title says they are not ranked, rather than letting the bars rank them."""
    latency_title = f"forward on {device}, ms" + (f"<br>(median, {coverage:.0%} interval)" if coverage else " (median)")
    fig = make_subplots(
        rows=1,
        cols=3,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        subplot_titles=("parameters (M)", "memory (MiB)", latency_title),
    )
    names = [esc(x) for x in labels]
    panels = [
        ([p / 1e6 for p in params], "%{y}<br>%{x:.3f} M parameters<extra></extra>", None),
        ([b / 2**20 for b in memory_bytes], "%{y}<br>%{x:.2f} MiB (parameters + buffers)<extra></extra>", None),
        (
            list(latency_ms),
            "%{y}<br>median %{x:.2f} ms<br>interval %{customdata[0]:.2f}–%{customdata[1]:.2f} ms<extra></extra>"
            if latency_low
            else "%{y}<br>median %{x:.2f} ms<extra></extra>",
            "latency",
        ),
    ]
    for col, (values, hover, kind) in enumerate(panels, start=1):
        extra = {}
        if kind and latency_low and latency_high:
            extra = dict(
                customdata=list(zip(latency_low, latency_high)),
                error_x=dict(
                    type="data",
                    symmetric=False,
                    color="#222",
                    thickness=2,
                    width=5,
                    array=[h - m for h, m in zip(latency_high, values)],
                    arrayminus=[m - lo for lo, m in zip(latency_low, values)],
                ),
            )
        fig.add_trace(
            go.Bar(
                y=names,
                x=values,
                orientation="h",
                hovertemplate=hover,
                marker_color="#4c78a8",
                showlegend=False,
                **extra,
            ),
            1,
            col,
        )
    lines = ["What each variant costs here (measured)"]
    if ties and len(ties) == 1 and len(ties[0]) == len(labels):
        lines.append("Forward times: every interval overlaps another — not ranked")
    elif ties:  # wrapped: one line of six names ran off a 1280-px page's right edge
        said = "Not ranked, intervals overlap: " + "; ".join(", ".join(group) for group in ties)
        lines += [esc(line) for line in textwrap.wrap(said, TITLE_CHARS)]
    extra_lines = len(lines) - 1 + (1 if coverage else 0)  # the title's lines below its first, the panel's second
    fig.update_layout(
        title="<br>".join(lines),
        height=160 + 34 * len(labels) + 30 * extra_lines,
        margin=dict(l=10, r=10, t=80 + 30 * extra_lines, b=30),
        plot_bgcolor="white",
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_annotations(font_size=18)  # the panels' titles, read from the back of a hall
    return _room(fig)


def _discriminator_down(rows: list[tuple[str, list[str], list[float]]]) -> go.Figure:
    """discriminator_figure for a phone: positions down, the inputs across (their names wrapped over the columns)."""
    n = max((len(t) for _, t, _ in rows), default=0)
    z = [[probs[i] if i < len(probs) else None for _, _, probs in rows] for i in range(n)]
    text = [[esc(toks[i]) if i < len(toks) else "" for _, toks, _ in rows] for i in range(n)]
    hover = [
        [
            f"{esc(name)} · position {i}: <b>{esc(toks[i])}</b><br>P(replaced) = {probs[i]:.3f}"
            if i < len(toks)
            else ""
            for name, toks, probs in rows
        ]
        for i in range(n)
    ]
    fig = go.Figure(
        go.Heatmap(
            x=["<br>".join(esc(line) for line in textwrap.wrap(name, 18)) or " " for name, _, _ in rows],
            y=list(range(n)),
            z=z,
            text=text,
            texttemplate="%{text}",
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            colorscale=SCORE,
            zmin=0,
            zmax=1,
            xgap=3,
            ygap=2,
            textfont=dict(size=14),
            colorbar=dict(
                title=dict(text="P(replaced)", side="top"),
                orientation="h",
                thickness=12,
                tickvals=[0, 0.5, 1],
                y=-0.08,
                yanchor="top",
            ),
        )
    )
    fig.update_layout(
        title="ELECTRA discriminator: how likely each token is to be a replacement",
        height=170 + 30 * n,
        margin=dict(l=10, r=10, t=110, b=70),
        plot_bgcolor="white",
    )
    fig.update_xaxes(side="top", showgrid=False)
    fig.update_yaxes(title_text="position", autorange="reversed", showgrid=False, zeroline=False, dtick=1)
    return _room(fig)


def _room(fig: go.Figure) -> go.Figure:
    """Let the axes take the margin their labels need (the layout's margins are the minimum)."""
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


@kept
def key_figure(r) -> go.Figure:
    """The lesson's key figure, from ``compare.run``'s Result: what each variant costs on this machine —
    parameters, memory and forward latency, measured."""
    c = r.costs
    low = [x.get("latency_low_ms") for x in c]
    high = [x.get("latency_high_ms") for x in c]
    known = all(v is not None for v in (*low, *high))
    return cost_figure(
        [x["label"] for x in c],
        [x["params"] for x in c],
        [x["memory_bytes"] for x in c],
        [x["latency_ms"] for x in c],
        r.device.upper(),
        low if known else None,
        high if known else None,
        tuple(getattr(r, "ties", ()) or ()),
        min((x.get("latency_coverage") or 1.0) for x in c) if known else None,
    )


GUIDE_TITLE = "Which one should I use? What this machine measured"
GUIDE_FONT = 18  # px: a table a hall reads, six rows of it inside a 1280×720 stage


GUIDE_QUESTION_FILL = "#fbe3c0"  # light amber (chroma ~60)


@kept
def guide_figure(r) -> go.Figure | None:
    """The selection guide (``r.guide``: one computed sentence per question) as a table a hall can read: the
    question on the left, what the measurements on this input answer on the right. Bold stays bold; every word is
    escaped (the guide quotes catalogue labels). None without a guide."""
    if not r.guide:
        return None
    questions, answers = [], []
    for line in r.guide:
        m = re.match(r"\*\*(.+?)\*\*\s*(.*)", line, flags=re.S)
        q, a = (m.group(1), m.group(2)) if m else ("", line)
        questions.append(f"<b>{esc(q)}</b>")
        answers.append(re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", esc(a)))
    fig = go.Figure(
        go.Table(
            columnwidth=[0.24, 0.76],
            header=dict(
                values=["<b>Question</b>", "<b>What this machine measured on this input</b>"],
                align="left",
                font=dict(size=GUIDE_FONT),
                fill_color="#e8eef7",
                height=36,
            ),
            cells=dict(
                values=[questions, answers],
                align="left",
                font=dict(size=GUIDE_FONT),
                height=30,
                # the questions on a light amber column: the table reads as a figure from the back (and prints
                # with colour, as every handout page's figure does)
                fill_color=[[GUIDE_QUESTION_FILL] * len(questions), ["#ffffff", "#f5f5f5"] * len(questions)],
            ),
        )
    )
    fig.update_layout(title=GUIDE_TITLE, height=90 + 96 * len(questions), margin=dict(l=10, r=10, t=60, b=10))
    return fig


def tokens_figure(r) -> go.Figure:
    """``token_grid_figure`` of a Result (the stage's "tokens" figure), drawn for a desktop."""
    return token_grid_figure(r)


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/compare.py's SPEC), key first.
FIGURES = {"cost": key_figure, "guide": guide_figure, "tokens": tokens_figure}


def every_figure(r) -> list:
    """Every figure pages/compare.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        token_grid_figure(r, phone=True),  # the same, drawn for a phone (app/ui/layout.py)
        token_grid_figure(r),
        r.guesses and fill_mask_figure(r),
        r.guesses and fill_mask_figure(r, phone=True),
        r.electra and discriminator_figure(r.electra),
        r.electra and discriminator_figure(r.electra, phone=True),
        guide_figure(r),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
