"""The key figures built for a phone (issue 52; app/ui/layout.py): the same Result's data as on a desktop, laid out
for 390 px — fewer columns, stacked panels, the colour key under the grid — with no text under the phone's minimum.
The desktop figures are unchanged (their own tests); here, what the phone variants show, on their data."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest

from app.figures import compare as compare_figs
from app.figures import deberta as deberta_figs
from app.figures import electra as electra_figs
from app.figures import masking as masking_figs
from app.figures import xlnet as xlnet_figs
from app.lessons import xlnet
from app.masking import KEEP, MASKED, RANDOM
from app.ui import layout
from tests.test_compare import LONG
from tests.test_electra import hand_round

MIN = layout.MIN_TEXT_PX


def fonts(fig) -> list[float]:
    """Every font size the figure states (layout, axes' ticks, traces' cell text, annotations, legend)."""
    sizes = [fig.layout.font.size, fig.layout.legend.font.size]
    for name in dir(fig.layout):
        if name.startswith(("xaxis", "yaxis")):
            sizes.append(fig.layout[name].tickfont.size)
    sizes += [t.textfont.size for t in fig.data if getattr(t, "textfont", None) is not None]
    sizes += [a.font.size for a in fig.layout.annotations]
    return [s for s in sizes if s is not None]


def checked(fig) -> go.Figure:
    """The figure, after rebuilding it with plotly's validation on (some builders skip it for speed) succeeded."""
    go.Figure(fig.to_dict())
    return fig


def test_masking_phone_grid_is_the_desktop_grid_turned_with_the_inspected_epoch_beside_it():
    tokens = ["<s>", "the", "cat", "</s>"]
    special = [True, False, False, True]
    kinds = [[0, MASKED, 0, 0], [0, 0, RANDOM, 0], [0, 0, 0, 0]]
    shown = [["<s>", "<mask>", "cat", "</s>"], ["<s>", "the", "<b>dog", "</s>"], ["<s>", "the", "cat", "</s>"]]
    desktop = masking_figs.epoch_grid_figure(tokens, special, kinds, shown, [0, 1, 0], highlight=1)
    fig = checked(masking_figs.phone_grid_figure(tokens, special, kinds, shown, [0, 1, 0], highlight=1))
    every, inspected = fig.data[0], fig.data[1]
    assert np.array(every.z).tolist() == np.array(desktop.data[0].z).T.tolist()  # (T, E): positions are rows
    assert list(every.y) == list(desktop.data[0].x)  # one label column: "position·token", escaped
    assert [row[0] for row in inspected.z] == [masking_figs.SPECIAL, KEEP, RANDOM, masking_figs.SPECIAL]
    assert [row[0] for row in inspected.text] == ["&lt;s&gt;", "the", "&lt;b&gt;dog", "&lt;/s&gt;"]  # escaped
    assert list(inspected.x) == ["epoch 2: fed"]
    assert every.showscale is False and {t.name for t in fig.data[2:]} == set(masking_figs.GRID_NAMES.values())
    assert fig.layout.shapes[0].x0 == 1.5  # the inspected epoch outlined among all of them
    assert min(fonts(fig)) >= MIN


def test_masking_phone_cell_text_is_cut_to_fit_and_hover_keeps_the_whole_token():
    long = "extraordinarily"
    fig = masking_figs.phone_grid_figure(["a", long], [False, False], [[0, RANDOM]], [["a", long]], [0], highlight=0)
    assert fig.data[1].text[1][0] == long[: masking_figs.PHONE_CELL_CHARS - 1] + "…"
    assert fig.data[1].customdata[1][0][1] == long


def test_electra_phone_pipeline_wraps_four_tokens_a_line_with_short_stage_names():
    rnd = hand_round()
    desktop = electra_figs.pipeline_figure(rnd)
    fig = checked(electra_figs.pipeline_figure(rnd, phone=True))
    n, stages = len(rnd.tokens), len(electra_figs.STAGES)
    blocks = -(-n // electra_figs.PHONE_PER_LINE)
    assert len(fig.data) == blocks * stages
    assert list(fig.layout.yaxis.ticktext) == list(electra_figs.PHONE_STAGES)
    # block 0 holds positions 0..3, the same values as the desktop row for them
    for s in range(stages):
        assert list(fig.data[s].x) == list(range(electra_figs.PHONE_PER_LINE))
        assert list(fig.data[s].z[0]) == list(desktop.data[s].z[0][: electra_figs.PHONE_PER_LINE])
    assert "&lt;script&gt;" in fig.data[0].text[0]  # still escaped
    bar = next(t.colorbar for t in fig.data if t.showscale)
    assert bar.orientation == "h"
    assert min(fonts(fig)) >= MIN


def test_xlnet_phone_order_keeps_the_cells_and_moves_the_key_under_the_grid():
    pieces = ("▁The", "▁cat", "</script><b>x", "▁sat", "<sep>", "<cls>")
    view = xlnet.mask_view(pieces, xlnet.masks_from_order([3, 0, 2, 1], 2, 6))
    desktop = xlnet_figs.order_figure(view)
    fig = checked(xlnet_figs.order_figure(view, phone=True))
    assert np.array(fig.data[0].z).tolist() == np.array(desktop.data[0].z).tolist()
    assert list(fig.layout.yaxis.ticktext) == list(desktop.layout.yaxis.ticktext)
    assert "&lt;/script&gt;" in fig.layout.xaxis.ticktext[2]
    assert fig.data[0].showscale is False and [t.name for t in fig.data[1:]] == list(xlnet_figs.ORDER_CELLS.values())
    assert fig.layout.legend.orientation == "h" and fig.layout.xaxis.tickangle == -90
    assert min(fonts(fig)) >= MIN


def deberta_terms(n: int = 5):
    rng = np.random.default_rng(0)
    m = [rng.normal(size=(n, n)) for _ in range(3)]
    return SimpleNamespace(
        c2c=m[0],
        c2p=m[1],
        p2c=m[2],
        total=m[0] + m[1] + m[2],
        probs=np.full((n, n), 1 / n),
        model_probs=np.full((n, n), 1 / n),
    )


def test_deberta_phone_stacks_the_four_panels_with_the_colour_bar_under_them():
    tokens = ["[CLS]", "the", "<b>", "cat", "[SEP]"]
    terms = deberta_terms()
    desktop = deberta_figs.terms_figure(tokens, terms, 1, 2)
    fig = checked(deberta_figs.terms_figure(tokens, terms, 1, 2, phone=True))
    for panel in range(4):  # same matrices, one panel per row
        assert np.array(fig.data[panel].z).tolist() == np.array(desktop.data[panel].z).tolist()
    domains = [fig.layout[f"yaxis{'' if k == 0 else k + 1}"].domain for k in range(4)]
    assert all(domains[k][0] > domains[k + 1][1] for k in range(3))  # stacked top to bottom, apart
    assert {fig.layout[f"xaxis{'' if k == 0 else k + 1}"].domain for k in range(4)} == {(0.0, 1.0)}
    assert fig.data[3].colorbar.orientation == "h"
    assert "&lt;b&gt;" in fig.layout.yaxis.ticktext
    assert min(fonts(fig)) >= MIN


@pytest.mark.parametrize("phone", [False, True])
def test_compare_token_grid_cells_fit_the_width_they_are_drawn_at(phone):
    words = LONG.split()
    cells = [
        [[w.lower()] if len(w) < 6 else [w.lower()[:3], "##" + w.lower()[3:]] for w in words],
        [["Ġ" + w] for w in words],
        [["▁" + w.lower()] for w in words],
    ]
    r = SimpleNamespace(
        labels=["BERT", "RoBERTa", "ELECTRA discriminator"],
        words=tuple(words),
        window=(0, len(words)),
        word=9,
        cells=cells,
        n_tokens=[26, 25, 25],
    )
    fig = checked(compare_figs.token_grid_figure(r, phone=phone))
    per_band = len(fig.data[0].x)
    texts = [" · ".join(p) for row in cells for p in row] + words
    if phone:
        width, char_px = compare_figs.PHONE_GRID_WIDTH, compare_figs.PHONE_CHAR_PX
        assert fig.data[0].colorbar.orientation == "h" and fig.data[0].textfont.size >= MIN
    else:
        width, char_px = compare_figs.GRID_WIDTH, compare_figs.CHAR_PX
    assert per_band * compare_figs.cell_width(texts, char_px) <= width
    shown = [t for row in fig.data[0].text for t in row if t and not t.startswith("<b>")]
    assert sorted(shown) == sorted(" · ".join(p) for row in cells for p in row)  # every word, in some band


def test_phone_style_lifts_small_text_and_wraps_the_title():
    fig = go.Figure(
        go.Heatmap(z=[[1]], text=[["a"]], texttemplate="%{text}", textfont=dict(size=9)),
        dict(
            title=dict(text="A very long figure title that would run off a phone's screen at the right"),
            annotations=[dict(text="note", font=dict(size=10), x=0, y=0)],
        ),
    )
    layout.phone_style(fig)
    assert fig.data[0].textfont.size == MIN and fig.layout.annotations[0].font.size == MIN
    assert all(len(line) <= layout.TITLE_CHARS for line in fig.layout.title.text.split("<br>"))
    assert fig.layout.title.text.replace("<br>", " ") == (
        "A very long figure title that would run off a phone's screen at the right"
    )


def test_a_figure_built_for_a_phone_keeps_its_own_layout():
    fig = deberta_figs.terms_figure(["a", "b"], deberta_terms(2), phone=True)
    before = fig.layout.to_plotly_json()
    layout.phone_style(fig)
    assert fig.layout.to_plotly_json() == before


# ----------------------------------------------------------------------------- text alternatives (from the Result)


def test_masking_in_words_names_the_inspected_epochs_targets_and_the_counts():
    r = SimpleNamespace(
        sentence=SimpleNamespace(pieces=["[CLS]", "the", "cat", "[SEP]"]),
        epoch=2,
        epochs=2,
        kinds=[[0, MASKED, 0, 0], [0, 0, RANDOM, 0]],
        fed=[["[CLS]", "[MASK]", "cat", "[SEP]"], ["[CLS]", "the", "dog", "[SEP]"]],
        strategy="dynamic",
        n_distinct=2,
        targets_per_epoch=1.0,
    )
    words = masking_figs.describe(r)
    assert "2 epochs × 4 pieces" in words and "Epoch 2 makes 1 target: cat → dog." in words  # a count agrees
    assert "2 distinct masks" in words and "1.0 targets per epoch" in words


def test_electra_in_words_counts_what_the_discriminator_got_right():
    rnd = hand_round()
    words = electra_figs.describe(SimpleNamespace(round=rnd, threshold=0.5))
    content = sum(not s for s in rnd.special)
    right = sum((s > 0.5) == bool(y) for s, y, sp in zip(rnd.scores, rnd.labels, rnd.special) if not sp)
    assert f"{len(rnd.tokens)} tokens, {sum(rnd.masked)} masked" in words
    assert f"right on {right} of {content} tokens" in words


def test_xlnet_in_words_lists_what_each_target_sees_in_order():
    pieces = ("▁The", "▁cat", "▁sat", "▁down", "<sep>", "<cls>")
    view = xlnet.mask_view(pieces, xlnet.masks_from_order([3, 0, 2, 1], 2, 6))
    words = xlnet_figs.describe(SimpleNamespace(view=view))
    assert "3 → 0 → 2 → 1" in words and "Context, never predicted: ▁down, ▁The." in words
    assert words.index("▁sat (step 2)") < words.index("▁cat (step 3)")


def test_deberta_in_words_adds_up_the_chosen_cell():
    terms = deberta_terms(3)
    r = SimpleNamespace(terms=terms, tokens=("a", "b", "c"), query_pos=1, key_pos=2, layer=0, head=1)
    words = deberta_figs.describe(r)
    assert f"score {terms.total[1, 2]:.3f}" in words and "b (i = 1) → c (j = 2)" in words


def test_compare_in_words_says_how_each_tokenizer_cuts_the_chosen_word():
    r = SimpleNamespace(
        labels=("BERT", "RoBERTa"),
        words=("the", "playground"),
        word=1,
        window=(0, 2),
        cells=((("the",), ("play", "##ground")), (("Ġthe",), ("Ġplayground",))),
        n_tokens=(4, 4),
    )
    assert compare_figs.describe_tokens(r) == (
        "How each tokenizer cuts the sentence. BERT: 4 tokens, «playground» as "
        "play · ##ground; RoBERTa: 4 tokens, «playground» as Ġplayground."
    )


# ----------------------------------------------------------------------------- any figure on a phone


def test_side_by_side_panels_are_stacked_in_reading_order_with_their_titles():
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=2, subplot_titles=("a", "b", "c", "d"), shared_yaxes=True)
    for k in range(4):
        fig.add_scatter(x=[0, 1], y=[k, k + 1], name=f"line {k}", row=k // 2 + 1, col=k % 2 + 1)
    layout.phone_style(fig)
    ys = [fig.layout[f"yaxis{'' if k == 0 else k + 1}"].domain for k in range(4)]
    assert all(fig.layout[f"xaxis{'' if k == 0 else k + 1}"].domain == (0, 1) for k in range(4))
    assert all(ys[k][0] > ys[k + 1][1] for k in range(3))  # a, b, c, d from the top, apart
    titles = {a.text: a.y for a in fig.layout.annotations}
    assert [titles[t] for t in "abcd"] == [y[1] for y in ys]  # each title on its own panel's top
    assert all(fig.layout[f"yaxis{'' if k == 0 else k + 1}"].showticklabels for k in range(4))
    assert fig.layout.height >= 4 * layout.PANEL_PX and fig.layout.legend.yref == "container"


def test_a_single_plot_is_not_restacked():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[1, 2]))
    assert layout.stack_panels(fig) is False and fig.layout.height is None
