"""A hostile deck on the Lecture mode page: titles and speaker notes from a ``deck=`` link or an uploaded
file are user text. They are shown as prose — no image fetched, no link, no colour, no LaTeX, no bidi
reordering — the same strings the deck bar and the handout already escape."""

from __future__ import annotations

import json
import re

from app.core.text import html, plain
from app.lecture import deck

TITLE = "![x](http://evil.example/t.png) `x` [go](http://evil.example) :red[loud] $\\href{http://e}{x}$ a\u202eb"
NOTE = "<img src=x onerror=alert(1)> ![n](http://evil.example/n.png) **bold** \u200bzw"
RAW = ("](http://", "<img", "\u202e", "\u200b", ":red[", "$\\href")


def shown_markdown(at) -> list[str]:
    """Every markdown string the page handed to streamlit (page links' labels, captions, notes, text), but the
    HTML blocks (:func:`shown_html_blocks`), where markdown is not parsed."""
    out = [link.proto.label for link in at.get("page_link")]
    out += [c.value for c in at.caption] + [i.value for i in at.info]
    return out + [m.value for m in at.markdown if not m.value.startswith("<div")]


def shown_html_blocks(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("<div")]


def assert_no_raw_html(blocks: list[str]) -> None:
    """An HTML block shows its text exactly (no markdown is parsed in it): none of the user's markup is raw."""
    for block in blocks:
        assert not any(raw in block for raw in ("<img", "<a ", "\u202e", "\u200b")), block


def assert_inert(strings: list[str]) -> None:
    """No markup of the hostile strings reaches markdown unescaped: a backslash before it makes it text, and
    so does a code span (``app.core.text.md``, the form notes quote a value in)."""
    for s in strings:
        s = re.sub(r"`[^`]*`", "", s)
        for raw in RAW:
            at = s.find(raw)
            while at != -1:
                assert at > 0 and s[at - 1] == "\\", (raw, s)
                at = s.find(raw, at + 1)


def test_a_deck_links_titles_and_notes_are_prose(open_page):
    hostile = deck.encode([deck.View("electra", (("seed", "5"),), TITLE, NOTE), deck.View("masking")])
    at = open_page("pages/lecture.py", deck=hostile)
    assert not at.exception
    labels = [link.proto.label for link in at.get("page_link")]
    kept = deck.decode(hostile)[0][0]
    assert plain(kept.title) in labels  # the title is there, escaped, not dropped
    assert any(html(kept.note) in block for block in shown_html_blocks(at))  # the note, as typed
    assert_inert(shown_markdown(at))
    assert_no_raw_html(shown_html_blocks(at))


def test_an_uploaded_decks_titles_and_notes_are_prose(app_page):
    at = app_page("pages/lecture.py")
    text = json.dumps(
        {
            "format": deck.FORMAT,
            "version": deck.VERSION,
            "views": [
                {"page": "electra", "query": {"seed": "5"}, "title": TITLE, "note": NOTE},
                {"page": "![gone](http://evil.example/g.png)", "query": {}, "title": TITLE},
            ],
        }
    )
    at.file_uploader(key="lecture.upload").upload("deck.json", text.encode(), "application/json").run()
    assert not at.exception and len(at.get("page_link")) >= 1
    assert_inert(shown_markdown(at))
    assert_no_raw_html(shown_html_blocks(at))


def test_plain_leaves_nothing_that_markdown_would_read_as_markup():
    s = plain(TITLE + " " + NOTE)
    assert "\\!\\[x\\]\\(http\\:" in s and "\\:red\\[" in s and "\\$" in s and "\\<img" in s
    assert "\u202e" not in s and "⟨U\\+202E⟩" in s and "⟨U\\+200B⟩" in s
    assert plain("ALBERT: parameters") == "ALBERT\\: parameters"
    bare = plain("see http://evil.invalid/x, www.evil.invalid or me@evil.invalid")
    assert "\\:\\/\\/\u2060evil" in bare and "w\u2060ww\\.evil" in bare and "\\@\u2060evil" in bare  # no autolink


LONG = "好" * 400  # 400 CJK characters: 3,600 bytes once percent-encoded in a link, past any QR code's 2,331


def all_text(at) -> str:
    return " ".join([w.value for w in at.warning] + [c.value for c in at.code] + [m.value for m in at.markdown])


def test_a_link_too_long_for_a_qr_code_is_a_sentence_in_the_dialog(app_page):
    at = app_page("pages/xlnet.py")
    at.text_area(key="text").set_value(LONG).run()
    at.button(key="bve-share-qr").click().run()
    assert not at.exception
    assert "too long for a QR code" in all_text(at)
    assert any("%E5%A5%BD" in c.value for c in at.code)  # the link itself is still there to copy


def test_a_link_too_long_for_a_qr_code_leaves_the_handout_whole(app_page):
    at = app_page("pages/xlnet.py")
    at.text_area(key="text").set_value(LONG).run()
    at.button(key="bve-add-view").click().run()
    at.switch_page("pages/lecture.py").run()
    at.button(key="lecture.handout").click().run()
    assert not at.exception
    made = at.session_state["_handout"]
    assert made["html"].count("<section") == 1 and "too long for a QR code" in made["html"]


def test_a_javascript_address_is_refused_with_a_sentence(app_page, monkeypatch):
    monkeypatch.setenv("BVE_PUBLIC_URL", "javascript:alert(document.domain)//")
    at = app_page("pages/lecture.py")
    assert not at.exception
    assert "must be an http:// or https:// address" in all_text(at)
    assert not any("javascript:" in c.value for c in at.code)
    monkeypatch.delenv("BVE_PUBLIC_URL")
    typed = app_page("pages/lecture.py")
    typed.text_input(key="public_url").set_value("javascript:alert(1)").run()
    assert not typed.exception and "must be an http:// or https:// address" in all_text(typed)
    assert not any("javascript:" in c.value for c in typed.code)


def test_the_lecture_page_warns_when_handout_links_would_point_at_this_computer(app_page, monkeypatch):
    monkeypatch.delenv("BVE_PUBLIC_URL", raising=False)
    at = app_page("pages/lecture.py")  # AppTest has no browser address: nothing students could reach
    assert not at.exception
    assert any("students' devices cannot reach it" in w.value for w in at.warning)
    monkeypatch.setenv("BVE_PUBLIC_URL", "http://192.168.1.20:8501")
    reachable = app_page("pages/lecture.py")
    assert not any("students' devices cannot reach it" in w.value for w in reachable.warning)
