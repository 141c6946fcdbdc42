"""Figures for the side-by-side lesson: ``compare.run``'s Result (or its ``electra`` rows) in, plotly Figure out.

Every token that enters cell or hover text is HTML-escaped with app.core.text.html: plotly renders a subset of
HTML there.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core.text import html as esc

PIECES = [[0.0, "#eef5ee"], [0.34, "#cfe8cf"], [0.67, "#f6d28b"], [1.0, "#e4572e"]]  # 1 piece ... 4+ pieces
PROB = "Blues"
SCORE = "RdBu_r"  # P(replaced): blue = looks original, red = looks replaced


def token_grid_figure(r) -> go.Figure:
    """One row per variant (``r.labels``), one column per word of ``r.window`` (a window of the text around the
    masked word ``r.word``, marked); a cell lists the pieces that word became.

    r.cells[v][w]: the raw pieces of word window[0] + w in variant v's tokenizer. z = the number of pieces
    (capped at 4 for the colour; the hover says the exact number). r.n_tokens[v]: the variant's total
    token count, special tokens included (shown in the row label).
    """
    first, stop = r.window
    labels, words, cells, n_tokens, chosen = r.labels, r.words[first:stop], r.cells, r.n_tokens, r.word - first
    z, text, hover = [], [], []
    for label, row in zip(labels, cells):
        z.append([min(len(p), 4) if p else None for p in row])
        text.append([" · ".join(esc(x) for x in p) for p in row])
        hover.append([f"<b>{esc(label)}</b> · word {first + j} <b>{esc(words[j])}</b><br>{len(p)} piece(s): "
                      f"{' · '.join(esc(x) for x in p) or '(none)'}" for j, p in enumerate(row)])
    rows = [f"{esc(lab)} ({n})" for lab, n in zip(labels, n_tokens)]
    fig = go.Figure(go.Heatmap(
        x=list(range(len(words))), y=rows, z=z, text=text, texttemplate="%{text}", hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>", colorscale=PIECES, zmin=1, zmax=4, xgap=2, ygap=2,
        textfont=dict(size=13),
        colorbar=dict(title=dict(text="pieces", side="right"), tickvals=[1, 2, 3, 4], ticktext=["1", "2", "3", "4+"],
                      thickness=14),
    ))
    tick = [f"<b>[{esc(w)}]</b>" if j == chosen else esc(w) for j, w in enumerate(words)]
    fig.update_layout(title="How each tokenizer cuts your sentence (row label: tokens incl. special ones)",
                      height=120 + 44 * len(labels), margin=dict(l=10, r=10, t=60, b=30), plot_bgcolor="white")
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(words))), ticktext=tick, side="top", showgrid=False)
    fig.update_yaxes(autorange="reversed", showgrid=False)
    return _room(fig)


def fill_mask_figure(r) -> go.Figure:
    """Rows = models (``r.guesses``), columns = rank 1..k: the token each model ranks there for the hidden word's
    first piece, coloured by probability; the masked word as that model saw it is marked in the hover.
    """
    labels = [g.label + (" (permutation)" if g.permutation else "") for g in r.guesses]
    tops = [g.prediction.first.read for g in r.guesses]  # [(token, probability), ...] best first
    originals = [g.prediction.original for g in r.guesses]
    k = max((len(t) for t in tops), default=0)
    z, text, hover = [], [], []
    for label, top, orig in zip(labels, tops, originals):
        z.append([p for _, p in top] + [None] * (k - len(top)))
        text.append([esc(t) for t, _ in top] + [""] * (k - len(top)))
        hover.append([f"<b>{esc(label)}</b> · rank {r + 1}: <b>{esc(t)}</b><br>P = {p:.4f}"
                      f"{' (the original word)' if t == orig else ''}" for r, (t, p) in enumerate(top)]
                     + [""] * (k - len(top)))
    fig = go.Figure(go.Heatmap(
        x=[f"rank {r + 1}" for r in range(k)], y=[esc(lab) for lab in labels], z=z, text=text, texttemplate="%{text}",
        hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", colorscale=PROB, zmin=0, textfont=dict(size=14),
        xgap=2, ygap=2, colorbar=dict(title=dict(text="P", side="right"), thickness=14),
    ))
    fig.update_layout(title="Top guesses for the masked word (first piece), best first",
                      height=120 + 46 * len(labels), margin=dict(l=10, r=10, t=60, b=30), plot_bgcolor="white")
    fig.update_xaxes(side="top", showgrid=False)
    fig.update_yaxes(autorange="reversed", showgrid=False)
    return _room(fig)


def discriminator_figure(rows: list[tuple[str, list[str], list[float]]]) -> go.Figure:
    """ELECTRA's discriminator (``Result.electra``), one row per input: (name, tokens, P(replaced) per token).

    Rows may differ in length (a swapped word may have fewer pieces); missing cells are empty.
    """
    n = max((len(t) for _, t, _ in rows), default=0)
    z, text, hover = [], [], []
    for name, toks, probs in rows:
        pad = n - len(toks)
        z.append(list(probs) + [None] * pad)
        text.append([esc(t) for t in toks] + [""] * pad)
        hover.append([f"{esc(name)} · position {i}: <b>{esc(t)}</b><br>P(replaced) = {p:.3f}"
                      for i, (t, p) in enumerate(zip(toks, probs))] + [""] * pad)
    fig = go.Figure(go.Heatmap(
        x=list(range(n)), y=[esc(name) for name, _, _ in rows], z=z, text=text, texttemplate="%{text}",
        hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", colorscale=SCORE, zmin=0, zmax=1,
        xgap=2, ygap=3, textfont=dict(size=13), colorbar=dict(title=dict(text="P(replaced)", side="right"), thickness=14, tickvals=[0, 0.5, 1]),
    ))
    fig.update_layout(title="ELECTRA discriminator: how likely each token is to be a replacement",
                      height=110 + 60 * len(rows), margin=dict(l=10, r=10, t=60, b=30), plot_bgcolor="white")
    fig.update_xaxes(title_text="position", showgrid=False, zeroline=False)
    fig.update_yaxes(autorange="reversed", showgrid=False)
    return _room(fig)


def cost_figure(labels: list[str], params: list[int], memory_bytes: list[int], latency_ms: list[float],
                device: str) -> go.Figure:
    """Three bar panels: parameters (millions), memory (MiB: parameters + buffers), median latency (ms)."""
    fig = make_subplots(rows=1, cols=3, subplot_titles=("parameters (M)", "memory (MiB)", f"forward latency on {device} (ms)"))
    names = [esc(x) for x in labels]
    panels = [
        ([p / 1e6 for p in params], "%{x}<br>%{y:.3f} M parameters<extra></extra>"),
        ([b / 2**20 for b in memory_bytes], "%{x}<br>%{y:.2f} MiB (parameters + buffers)<extra></extra>"),
        (list(latency_ms), "%{x}<br>median %{y:.2f} ms<extra></extra>"),
    ]
    for col, (values, hover) in enumerate(panels, start=1):
        fig.add_trace(go.Bar(x=names, y=values, hovertemplate=hover, marker_color="#4c78a8", showlegend=False), 1, col)
    fig.update_layout(title="What each variant costs here (measured)", height=420,
                      margin=dict(l=10, r=10, t=80, b=30), plot_bgcolor="white")
    fig.update_xaxes(tickangle=-35)
    return _room(fig)


def _room(fig: go.Figure) -> go.Figure:
    """Let the axes take the margin their labels need (the layout's margins are the minimum)."""
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def key_figure(r) -> go.Figure:
    """The lesson's key figure, from ``compare.run``'s Result: what each variant costs on this machine —
    parameters, memory and forward latency, measured."""
    c = r.costs
    return cost_figure([x["label"] for x in c], [x["params"] for x in c], [x["memory_bytes"] for x in c],
                       [x["latency_ms"] for x in c], r.device.upper())
