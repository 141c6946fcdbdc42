"""Your own checkpoint on the pages (issue 28, the UI half), through the router, against the loopback hub
(tests/ownhub.py: published configs shrunk, random tiny weights) with a Hugging Face cache of the test's own:

- an admitted model is downloaded on the page and used: the badge names it, the lesson shows it;
- afterwards *Auto* uses it offline (the hub stopped);
- a refused one (wrong model_type, remote code, pickle-only) is one warning sentence and the catalogue's model;
- the ``model=`` link parameter round-trips (a malformed one is a note), and the link to this view carries it;
- pages without a role show the field disabled with the reason;
- nothing is written outside the temporary cache.
"""

from __future__ import annotations

import pytest

from app.core.text import plain
from app.models import admission
from tests.conftest import run_page, shown_text
from tests.models.conftest import own_hub, own_repos, use_cache, written_outside  # noqa: F401  (fixtures)


@pytest.fixture(autouse=True)
def fresh_answers():
    from app.ui import own

    own.forget()
    yield
    own.forget()


def field(at):
    return next(t for t in at.sidebar.text_input if t.key == "model")


def badge(at) -> str:
    return "\n".join(m.value for m in at.sidebar.markdown)


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def test_an_admitted_model_downloads_and_the_page_runs_on_it(own_hub, tmp_path, use_cache):
    hub_id = "google-bert/bert-large-uncased"
    at = run_page("pages/masking.py", model=hub_id)
    assert not at.exception, at.exception
    assert warnings(at) == [], warnings(at)
    assert f"Your model (for BERT)** `{hub_id}`" in badge(at), badge(at)
    assert hub_id in shown_text(at)  # the lesson names the model it ran (tokenizer of ..., guesses by ...)
    assert field(at).value == hub_id and not field(at).disabled
    assert at.query_params["model"] in (hub_id, [hub_id])  # the URL keeps it
    link = next(c.value for c in at.code if "?" in c.value)
    assert "model=google-bert%2Fbert-large-uncased" in link
    got = {r.path.rsplit("/", 1)[-1] for r in own_hub.gets()}
    assert "model.safetensors" in got and "tf_model.h5" not in got
    assert written_outside(tmp_path, tmp_path / "hf") == []

    own_hub.stop()  # offline now: Auto reads the downloaded copy from the cache, without the hub
    use_cache(tmp_path / "hf")
    from app.ui import own

    own.forget()
    again = run_page("pages/attention.py", model=hub_id)
    assert not again.exception and warnings(again) == [], warnings(again)
    assert f"Your model (for BERT)** `{hub_id}`" in badge(again)


@pytest.mark.parametrize(
    "hub_id, rule",
    [("evil/wrong-type", "family"), ("evil/remote-code", "remote-code"), ("evil/pickle-only", "safetensors")],
)
def test_a_refused_model_is_one_sentence_and_the_catalogue(hub_id, rule, own_hub, tmp_path):
    at = run_page("pages/masking.py", model=hub_id)
    assert not at.exception, at.exception
    refusal = admission.admit(hub_id, "masked-lm")
    assert refusal.rule == rule
    assert warnings(at) == [plain(refusal.sentence) + " This page runs on the catalogue's model."]
    assert "**BERT** `bundled`" in badge(at) and "Your model" not in badge(at)
    assert [r for r in own_hub.gets() if r.path.endswith((".safetensors", ".bin"))] == []  # no weight fetched
    assert written_outside(tmp_path, tmp_path / "hf") == []


def test_a_model_of_another_role_says_where_it_fits(own_hub, tmp_path):
    at = run_page("pages/xlnet.py", model="google-bert/bert-large-uncased")
    assert not at.exception
    (warning,) = warnings(at)
    assert "refused for XLNet" in warning and "use it as the masked LM" in warning, warning


def test_a_malformed_link_value_is_a_note_and_pages_without_a_role_disable_the_field(open_page):
    at = open_page("pages/masking.py", model="evil\"<script>")
    assert not at.exception
    assert any("Ignored `model=evil\"<script>`" in i.value for i in at.info), [i.value for i in at.info]
    assert field(at).value == ""
    params = run_page("pages/albert_params.py", model="google-bert/bert-large-uncased")
    assert field(params).disabled
    assert any("Not on this page" in c.value and "ALBERT" in c.value for c in params.sidebar.caption)
    assert params.warning.len == 0
    lecture = run_page("pages/lecture.py")
    assert not lecture.exception and field(lecture).disabled
    assert any("Open a lesson" in c.value for c in lecture.sidebar.caption)


def test_electra_takes_the_published_pair(own_hub, tmp_path):
    pair = "google/electra-base-generator,google/electra-base-discriminator"
    at = run_page("pages/electra.py", model=pair)
    assert not at.exception, at.exception
    assert warnings(at) == [], warnings(at)
    assert "Your model (for ELECTRA generator)** `google/electra-base-generator`" in badge(at)
    assert "Your model (for ELECTRA discriminator)** `google/electra-base-discriminator`" in badge(at)
    one = run_page("pages/electra.py", model="google/electra-base-generator")
    assert any("takes a pair" in w for w in warnings(one))


@pytest.mark.parametrize(
    "page, hub_id, used",
    [
        ("pages/attention.py", "albert/albert-large-v2", True),
        ("pages/masking.py", "google-bert/bert-base-multilingual-cased", True),
        ("pages/compare.py", "FacebookAI/xlm-roberta-base", True),
        ("pages/distillation.py", "google-bert/bert-large-uncased", True),  # a larger teacher, the same vocabulary
        ("pages/modernbert.py", "answerdotai/ModernBERT-large", True),
        ("pages/xlnet.py", "xlnet/xlnet-large-cased", True),
        ("pages/deberta.py", "microsoft/deberta-v3-base", False),  # v2/v3 lacks the v1 attention the lesson takes apart
    ],
)
def test_each_lesson_runs_on_a_brought_model_or_says_why_not(page, hub_id, used, own_hub, tmp_path):
    at = run_page(page, model=hub_id)
    assert not at.exception, at.exception
    said = "\n".join(warnings(at) + [e.value for e in at.error])
    if used:
        assert f"`{hub_id}`" in badge(at) and "runs on the catalogue" not in said, (badge(at), said)
        if page == "pages/distillation.py":  # the lesson says what a brought teacher is not
            assert "not** DistilBERT's real teacher" in said, said
        else:
            assert said == "", said
        assert any(f"Downloaded `{hub_id}`" in c.value for c in at.caption)
    else:
        assert "runs on the catalogue" in said and "Your model" not in badge(at), (badge(at), said)
    assert written_outside(tmp_path, tmp_path / "hf") == []


def test_on_side_by_side_a_brought_model_takes_its_own_familys_column(own_hub, tmp_path):
    """Side by side shows one column per family: a brought XLM-R replaces RoBERTa's column (not BERT's), and a
    BERT replaces BERT's; the other columns stay the catalogue's."""
    at = run_page("pages/compare.py", model="FacebookAI/xlm-roberta-base")
    assert not at.exception and warnings(at) == [], warnings(at)
    assert "Your model (for RoBERTa)** `FacebookAI/xlm-roberta-base`" in badge(at), badge(at)
    assert "Your model (for BERT)" not in badge(at)
    at = run_page("pages/compare.py", model="google-bert/bert-large-uncased")
    assert not at.exception and "Your model (for BERT)** `google-bert/bert-large-uncased`" in badge(at), badge(at)
    assert (
        "for the masked LM" in field(at).help and "RoBERTa, ALBERT, DistilBERT, DeBERTa, ModernBERT" in field(at).help
    )


@pytest.mark.slow  # waits out a stalled download
def test_a_stalled_download_stops_with_a_sentence_and_the_catalogue(own_hub, own_repos, tmp_path, monkeypatch):
    monkeypatch.setenv("BVE_DOWNLOAD_DEADLINE", "1")
    own_hub.trickle = 0.02  # the weights trickle (admission's config.json read does not)
    own_hub.trickle_paths = f"/evil/stall/resolve/{own_repos['evil/stall'].commit}/model.safetensors"
    at = run_page("pages/masking.py", model="evil/stall")
    assert not at.exception, at.exception
    (warning,) = warnings(at)
    assert "did not finish within 1 s" in warning and "runs on the catalogue" in warning, warning
    assert "**BERT** `bundled`" in badge(at)
    assert not list((tmp_path / "hf").glob("hub/models--evil--stall/snapshots/*/model.safetensors"))
    assert written_outside(tmp_path, tmp_path / "hf") == []


def test_a_cancelled_download_says_so_and_downloads_again_on_request(own_hub, tmp_path):
    from app.ui import own

    hub_id = "google-bert/bert-large-uncased"
    at = run_page("pages/masking.py")
    at.session_state[own.CANCELLED] = {hub_id}  # what the Cancel button's callback leaves
    field(at).input(hub_id).run()
    assert not at.exception
    (warning,) = warnings(at)
    assert warning.startswith(plain(f"You cancelled the download of {hub_id}")), warning
    assert "**BERT** `bundled`" in badge(at)
    again = next(b for b in at.button if b.key.startswith("own-again-"))
    again.click().run()
    assert warnings(at) == [] and f"Your model (for BERT)** `{hub_id}`" in badge(at), (warnings(at), badge(at))
    assert at.query_params["model"] in (hub_id, [hub_id])


def test_another_visitors_download_is_waited_for(own_hub, own_repos, tmp_path):
    import threading
    import time

    from app.models import own as own_models

    hub_id = "google-bert/bert-base-multilingual-cased"
    spec = admission.admit(hub_id, "masked-lm")
    # the first download trickles until the page has joined it (no race with the page's start under load)
    own_hub.trickle, own_hub.trickle_paths = 0.5, f"/{hub_id}/resolve/{spec.commit}/tokenizer_config.json"
    first = threading.Thread(target=own_models.fetch_admitted, args=(spec,))
    first.start()
    while not own_models.in_progress():
        time.sleep(0.01)

    def release_once_joined():
        while not any(f.waiters for f in list(own_models._FLIGHTS.values())):
            time.sleep(0.01)
        own_hub.release.set()

    threading.Thread(target=release_once_joined, daemon=True).start()
    at = run_page("pages/masking.py", model=hub_id)
    first.join(20)
    assert not at.exception and warnings(at) == [], warnings(at)
    assert any(f"another visitor's download of `{hub_id}`" in c.value for c in at.caption), [
        c.value for c in at.caption
    ]
    assert f"Your model (for BERT)** `{hub_id}`" in badge(at)
    whole = [r for r in own_hub.gets(name="model.safetensors") if r.range is None]  # not admission's header reads
    assert len(whole) == 1  # one download for both


def test_a_deck_view_keeps_its_model():
    from app.lecture import deck

    view = deck.view("masking", {"seed": "3", "model": "google-bert/bert-large-uncased"})
    (back,), notes = deck.decode(deck.encode([view]))
    assert notes == [] and back.params == {"seed": "3", "model": "google-bert/bert-large-uncased"}
    assert "model=google-bert%2Fbert-large-uncased" in back.link()
    (bad,), notes = deck.decode(deck.encode([deck.view("masking", {"model": "x](javascript:alert(1))"})]))
    assert bad.params == {} and "Ignored" in notes[0]


def test_a_deck_slide_runs_on_its_views_model_and_the_next_slide_on_the_catalogue(own_hub, tmp_path, open_page):
    from app.lecture import deck

    hub_id = "google-bert/bert-large-uncased"
    views = [deck.view("masking", {"seed": "3", "model": hub_id}), deck.view("attention", {})]
    at = open_page("pages/masking.py", deck=deck.encode(views), slide="1")
    assert not at.exception, at.exception
    assert f"Your model (for BERT)** `{hub_id}`" in badge(at), badge(at)
    assert at.query_params["model"] in (hub_id, [hub_id])
    at.query_params["slide"] = "2"  # the deck's Next: the next view, exactly its state (no model: the catalogue)
    at.run()
    assert not at.exception, at.exception
    assert "Your model" not in badge(at) and "**BERT** `bundled`" in badge(at), badge(at)
    assert field(at).value == "" and "model" not in at.query_params
