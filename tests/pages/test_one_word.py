"""The smallest input a student can type, one word (short, or too long for some models), on every lesson: the
page runs and its prose still agrees with its numbers — no "1 words", "1 tokens", no "nan" where a maximum over
nothing was printed (each of these was on a page once; a sweep of every lesson over odd inputs and its settings at
their bounds found them)."""

from __future__ import annotations

import re

import pytest

from app.lessons import LESSONS
from tests.conftest import shown_text

DISAGREES = re.compile(
    r"\b1 (?:\w+ )?(pieces|tokens|words|positions|pairs|sentences|targets)\b|\bnan\b|\bNone\b|\binf\b"
)
# (one word may stand between: "1 masked positions" was said on the ELECTRA page)
# one long word is cut inside itself where a lesson reads fewer tokens: "1 of 1 words" was said of it


@pytest.mark.parametrize("text", ["Hi", "supercalifragilisticexpialidocious" * 20], ids=["short", "one-long-word"])
@pytest.mark.parametrize("page", [lesson.path for lesson in LESSONS])
def test_a_one_word_text_gets_prose_that_agrees_with_its_numbers(app_page, page, text):
    at = app_page(page, text=text)
    assert not at.exception, at.exception[0].value
    said = shown_text(at)
    assert not DISAGREES.search(said), (
        DISAGREES.search(said) and said[max(0, DISAGREES.search(said).start() - 150) :][:300]
    )
