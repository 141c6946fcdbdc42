"""The words about the NSP vs SOP grid are computed from the grid (app/lessons/sentence_order.py
``summarize_grid``): a head at chance is said to be at chance, and "Why NSP is easy and SOP is not" is claimed
only when the heads show the paper's pattern. Synthetic cells: no model needed."""

from __future__ import annotations

import pytest

from app.lessons import sentence_order as so


def heads():
    return (
        so.Head("albert", "sop", so.HEAD_NAMES["sop"], "swapped", "x"),
        so.Head("bert-nsp", "nsp", so.HEAD_NAMES["nsp"], "not next", "y"),
    )


def cells(acc: dict[str, dict[str, int]], n: int = 120) -> tuple[so.Cell, ...]:
    """acc[key][task] = pairs right of n."""
    objective = {"albert": "sop", "bert-nsp": "nsp"}
    return tuple(
        so.Cell(k, objective[k], t, c, n, *so.wilson_interval(c, n)) for k, row in acc.items() for t, c in row.items()
    )


def test_wilson_interval_is_the_textbook_one():
    low, high = so.wilson_interval(81, 120)  # 67.5%
    assert low == pytest.approx(0.5869, abs=1e-4) and high == pytest.approx(0.7522, abs=1e-4)
    assert so.wilson_interval(60, 120)[0] < 0.5 < so.wilson_interval(60, 120)[1]


def test_an_nsp_head_at_chance_is_not_said_to_solve_nsp():
    """The bundled NSP head's grid at the time of issue 26: 52.5% NSP, 51.7% SOP; the SOP head 54.2% / 67.5%."""
    grid = so.summarize_grid(heads(), cells({"albert": {"nsp": 65, "sop": 81}, "bert-nsp": {"nsp": 63, "sop": 62}}))
    assert grid.matches == {"albert": False, "bert-nsp": False}
    said = " ".join((grid.heading, grid.title, *grid.lines))
    assert "Why NSP is easy" not in said and "in miniature" not in said
    nsp = next(line for line in grid.lines if "NSP head" in line)
    assert "52.5% on NSP" in nsp and "at chance" in nsp and "beats chance on neither task" in nsp
    assert "**not** the paper's pattern" in nsp and "90.5%" in nsp and "52.0%" in nsp  # what the paper found, beside it
    sop = next(line for line in grid.lines if "SOP head" in line)
    assert "67.5% on SOP" in sop and "17.5 points above chance" in sop and "SOP only" in sop and "**not**" in sop
    assert grid.cell("bert-nsp", "nsp").verdict == "at chance" and grid.cell("albert", "sop").beats_chance


def test_the_papers_pattern_is_claimed_only_when_the_grid_shows_it():
    grid = so.summarize_grid(heads(), cells({"albert": {"nsp": 95, "sop": 100}, "bert-nsp": {"nsp": 108, "sop": 61}}))
    assert grid.matches == {"albert": True, "bert-nsp": True}
    assert grid.heading == "Why NSP is easy and SOP is not" and "in miniature" in grid.title
    assert all("That is the paper's pattern" in line for line in grid.lines)
    # the NSP head also beats chance on SOP: not the paper's pattern (it was at chance there), so no claim
    half = so.summarize_grid(heads(), cells({"albert": {"nsp": 95, "sop": 100}, "bert-nsp": {"nsp": 108, "sop": 90}}))
    assert half.matches["bert-nsp"] is False and "Why NSP is easy" not in half.heading
    # a head below chance is said to be below it
    below = so.summarize_grid(heads()[1:], cells({"bert-nsp": {"nsp": 30, "sop": 60}}))
    assert "below chance" in below.lines[0] and "Why NSP is easy" not in below.heading
