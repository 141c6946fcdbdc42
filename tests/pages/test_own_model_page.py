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


@pytest.mark.parametrize("hub_id, rule", [("evil/wrong-type", "family"), ("evil/remote-code", "remote-code"),
                                          ("evil/pickle-only", "safetensors")])
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


def test_electra_takes_the_published_pair(own_hub, tmp_path):
    pair = "google/electra-base-generator,google/electra-base-discriminator"
    at = run_page("pages/electra.py", model=pair)
    assert not at.exception, at.exception
    assert warnings(at) == [], warnings(at)
    assert "Your model (for ELECTRA generator)** `google/electra-base-generator`" in badge(at)
    assert "Your model (for ELECTRA discriminator)** `google/electra-base-discriminator`" in badge(at)
    one = run_page("pages/electra.py", model="google/electra-base-generator")
    assert any("takes a pair" in w for w in warnings(one))


@pytest.mark.parametrize("page, hub_id", [("pages/deberta.py", "microsoft/deberta-v3-base"),
                                          ("pages/modernbert.py", "answerdotai/ModernBERT-large"),
                                          ("pages/xlnet.py", "xlnet/xlnet-large-cased"),
                                          ("pages/compare.py", "FacebookAI/xlm-roberta-base")])
def test_each_lesson_runs_on_a_brought_model_or_says_what_it_lacks(page, hub_id, own_hub, tmp_path):
    at = run_page(page, model=hub_id)
    assert not at.exception, at.exception
    said = "\n".join(warnings(at) + [e.value for e in at.error])
    assert f"`{hub_id}`" in badge(at) or "runs on the catalogue" in said, (badge(at), said)
    assert written_outside(tmp_path, tmp_path / "hf") == []
