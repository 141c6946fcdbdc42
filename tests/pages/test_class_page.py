"""Ask the class on the projector (issue 50), through the router with AppTest: the presenter asks the masking lab's
question, the stage holds the model's figure back and shows the question and a live count; answers posted to the
room are counted; Reveal shows the histogram and the sentence computed from the tally; Next question clears it."""

from __future__ import annotations

import pytest

from tests.conftest import shown_text

pytestmark = pytest.mark.trained


def everything(at) -> str:
    """What the page shows, its escaped HTML blocks (the class panel's) included."""
    return shown_text(at) + "\n" + "\n".join(str(h.proto.body) for h in at.get("html"))


def _button(at, key: str):
    return next(b for b in at.button if b.key == key)


def test_the_class_answers_before_the_model_and_the_reveal_says_both(app_page):
    from app.classroom import question as questions
    from app.classroom.rooms import rooms
    from app.ui import classroom, stage

    at = app_page("pages/masking.py", presenter="1")
    assert not at.exception
    assert classroom.CURRENT in at.session_state and at.session_state[classroom.CURRENT] is not None
    _button(at, "bve-class-ask").click().run()
    assert not at.exception
    asked = at.session_state[classroom.ASKED]
    code, secret = at.session_state[classroom.ROOM]
    from app.core.text import html

    shown = everything(at)
    assert html(asked["prompt"]) in shown and f">{code}</b>" in shown
    assert classroom.HELD in shown and at.session_state[stage.HOLD]  # the key figure (the model's answer) waits
    assert "Takeaway" not in shown

    store = rooms()
    view = store.view(code)
    assert view["status"] == "open" and view["question"]["id"] == questions.Question.from_dict(asked).id
    assert "answer" not in view["question"]  # a phone never sees the model's answer before the reveal
    choices = asked["choices"]
    for i in range(10):  # 6 choose the first choice, 4 the second, one of them twice (a re-answer replaces it)
        assert store.answer(code, view["question"]["id"], f"phone-{i:03d}", choices[0] if i < 6 else choices[1]) is None
    assert store.answer(code, view["question"]["id"], "phone-009", choices[1]) is None
    assert store.tally(code, secret) == {choices[0]: 6, choices[1]: 4}

    _button(at, "bve-class-reveal").click().run()
    assert not at.exception
    payload = at.session_state[classroom.REVEALED]
    assert payload == questions.reveal(questions.Question.from_dict(asked), {choices[0]: 6, choices[1]: 4})
    assert payload["sentence"].startswith(f"60% of you chose {choices[0]}")
    assert html(payload["sentence"]) in everything(at)
    assert store.view(code)["status"] == "revealed" and store.view(code)["reveal"]["sentence"] == payload["sentence"]
    charts = [c.proto.spec for c in at.get("plotly_chart")]
    assert any('"the class"' in spec and "10 answered" in spec for spec in charts)

    _button(at, "bve-class-next").click().run()
    assert not at.exception
    assert at.session_state[classroom.ASKED] is None and store.view(code)["status"] == "waiting"
    assert "Takeaway" in shown_text(at)


def test_off_the_projector_nobody_is_asked(app_page):
    from app.ui import classroom

    at = app_page("pages/masking.py")
    assert not at.exception
    assert not [b for b in at.button if b.key == "bve-class-ask"]
    assert classroom.ASKED not in at.session_state or at.session_state[classroom.ASKED] is None
