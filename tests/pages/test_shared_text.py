"""The text box is shared by every lesson (the sentence a student typed follows them), but a page's default is
not a choice: going from one lesson to another shows the new lesson's own default sentence, and defaults stay
out of links."""

from __future__ import annotations

from app.lessons import electra, masking


def query(at) -> dict:
    return {k: at.query_params[k] for k in at.query_params}


def test_another_lessons_default_sentence_does_not_follow_into_this_ones_link(app_page):
    assert masking.SPEC.text.default != electra.SPEC.text.default
    at = app_page("pages/masking.py")
    assert at.text_area(key="text").value == masking.SPEC.text.default
    at.switch_page("pages/electra.py").run()
    assert not at.exception
    assert at.text_area(key="text").value == electra.SPEC.text.default
    assert "text" not in query(at)  # defaults stay out of links
    at.switch_page("pages/masking.py").run()
    assert at.text_area(key="text").value == masking.SPEC.text.default and "text" not in query(at)


def test_a_sentence_the_student_typed_follows_them(app_page):
    mine = "My dog found a stick by the river."
    at = app_page("pages/masking.py")
    at.text_area(key="text").set_value(mine).run()
    at.switch_page("pages/electra.py").run()
    assert not at.exception
    assert at.text_area(key="text").value == mine
    assert query(at).get("text") in (mine, [mine])


def test_a_sentence_from_a_link_follows_too(open_page):
    linked = "The cat sat on the warm mat."
    at = open_page("pages/masking.py", text=linked)
    at.switch_page("pages/electra.py").run()
    assert not at.exception and at.text_area(key="text").value == linked
