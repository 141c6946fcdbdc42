"""Crafted links and pasted text on every page (issue: link notes were a markdown injection hole).

Whatever a visitor puts in the URL or a box, the page shows it literally inside a code span: no link,
image, colour, LaTeX or request can come out of it, invisible bidi/format characters are shown as
⟨U+XXXX⟩, a repeated key is noted, integers parse strictly, and notes about the global settings
(source, dtype, device, presenter, export) appear on whichever page the link opens."""

from __future__ import annotations

import re

import pytest

from app.lessons import LESSONS
from app.core.text import md

PAGES = ["pages/home.py"] + [lesson.path for lesson in LESSONS]
PAYLOADS = {
    "image": "`![](http://evil.invalid/s.png)`",
    "link": "`[Log in again](http://evil.invalid/x)`",
    "colour": ":red[**HACKED**]",
    "latex": "$\\href{http://evil.invalid}{x}$",
    "bidi": "\u202e5 txet",
}
CODE_SPAN = re.compile(r"`[^`]*`|<code>[^<]*</code>")  # markdown's, or escaped text in HTML <code>


def rendered(at) -> list[str]:
    """Every markdown string the page rendered (main area and sidebar)."""
    out = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "header", "subheader"):
        out += [str(e.value) for e in getattr(at, kind)]
        out += [str(e.value) for e in getattr(at.sidebar, kind)]
    return out


def assert_inert(at) -> None:
    """The payloads' active parts occur only inside code spans, and no invisible override is rendered."""
    for text in rendered(at):
        outside = CODE_SPAN.sub("", text)
        assert "evil.invalid" not in outside, text
        assert "HACKED" not in outside, text
        assert "\u202e" not in text, text


#: the global settings, which every page reads from a link and notes when a value is refused (the test below)
GLOBAL_KEYS = ("dtype", "device", "source", "export", "presenter")


@pytest.mark.parametrize("page", PAGES)
def test_hostile_link_values_are_shown_literally_and_inert(open_page, page):
    """One link carries every payload: each in its own global setting, and all of them at once in the lesson's seed.
    One page run checks them all (a page run is the cost here), and a failure names the payload and the setting."""
    assert len(GLOBAL_KEYS) >= len(PAYLOADS)
    query = {key: payload for key, payload in zip(GLOBAL_KEYS, PAYLOADS.values())}
    at = open_page(page, seed=" ".join(PAYLOADS.values()), **query)
    assert not at.exception, page
    assert_inert(at)
    notes = " ".join(i.value for i in at.info)
    for (name, payload), key in zip(PAYLOADS.items(), GLOBAL_KEYS):
        assert md(f"{key}={payload}") in notes, (page, name, key)  # the global setting is noted on this page too


@pytest.mark.parametrize("page", PAGES)
def test_global_settings_and_strict_integers_are_noted_on_every_page(open_page, page):
    at = open_page(page, source="", export="jpeg", presenter="maybe", device="tpu", seed="٥")
    assert not at.exception
    notes = " ".join(i.value for i in at.info)
    for shown in ("source=", "export=jpeg", "presenter=maybe", "device=tpu"):
        assert f"`{shown}" in notes, (page, shown)
    if page != "pages/home.py" and "seed" in at.query_params or "`seed=٥`" in notes:
        assert "`seed=٥`" in notes


@pytest.mark.parametrize("page", [lesson.path for lesson in LESSONS])
def test_a_repeated_key_is_noted_and_rewritten_to_the_value_used(open_page, page):
    at = open_page(page, presenter=["1", "0"])
    assert not at.exception
    assert any("`presenter` appears 2 times" in i.value for i in at.info)
    assert at.query_params.get("presenter") in (None, [], "0", ["0"])  # the last value (0, the default) counts


def _with_a_text_box() -> list[str]:
    """The lesson pages whose SPEC declares the shared text box (``text``): the others (the parameter counter, the
    claims page) have none, and a case that could only skip is no test."""
    import importlib

    spec = {lesson.slug: importlib.import_module(f"app.lessons.{lesson.slug}").SPEC for lesson in LESSONS}
    return [lesson.path for lesson in LESSONS if "text" in [p.name for p in spec[lesson.slug]]]


@pytest.mark.parametrize("page", _with_a_text_box())
def test_hostile_text_in_the_box_is_inert(open_page, page):
    at = open_page(page)
    box = next((t for t in at.text_area if t.key == "text"), None)
    assert box is not None, f"{page} declares a text box in its SPEC but shows none"
    box.set_value(" ".join(PAYLOADS.values()) + " [MASK] [CLS] <s> 😀").run()
    assert not at.exception
    assert_inert(at)
    box = next(t for t in at.text_area if t.key == "text")
    box.set_value("x" * 5000).run()
    assert not at.exception and len(next(t for t in at.text_area if t.key == "text").value) == 1000
    assert any("5,000" in i.value for i in at.info)
