"""Results shared across visitors (app/core/shared.py, app/ui/cache.py's shared_result): one computation for the
same key however many sessions ask, at once or later; exact keys (inputs, each model's identity and loaded object);
bounded; nothing one visitor typed or brought reaches another's view. And figures in their wire form
(app/figures.wire_form): converted once per content, a changed figure converted again."""

from __future__ import annotations

import gc
import importlib
import threading
from dataclasses import dataclass

import pytest

from app.core.shared import SharedResults, model_token

ui_cache = importlib.import_module("app.ui.cache")  # the module (app.ui.cache is also the function's name)


# ----------------------------------------------------------------------------- the store


def test_one_computation_for_concurrent_identical_requests():
    store, calls, started, release = SharedResults(8), [], threading.Event(), threading.Event()

    def compute():
        calls.append(1)
        started.set()
        release.wait(10)  # the others ask while this one computes
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(store.get("k", compute))) for _ in range(6)]
    threads[0].start()
    assert started.wait(10)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join(10)
    assert len(calls) == 1 and len(got) == 6 and all(g is got[0] for g in got)
    assert store.counts["computed"] == 1 and store.counts["waited"] + store.counts["shared"] == 5


def test_different_keys_are_not_shared_and_the_size_is_bounded():
    store = SharedResults(3)
    for k in range(5):
        assert store.get(k, lambda k=k: ("value", k)) == ("value", k)
    assert len(store) == 3  # the two least recently used were dropped
    calls = []
    assert store.get(4, lambda: calls.append(1)) == ("value", 4) and not calls  # kept
    assert store.get(0, lambda: calls.append(1) or "again") == "again" and calls == [1]  # dropped, computed again


def test_least_recently_used_is_dropped_first():
    store = SharedResults(2)
    store.get("a", lambda: 1)
    store.get("b", lambda: 2)
    store.get("a", lambda: -1)  # a used again: b is now the oldest
    store.get("c", lambda: 3)
    assert store.get("a", lambda: -1) == 1 and store.get("b", lambda: "recomputed") == "recomputed"


def test_a_failure_is_not_kept_and_waiters_compute_for_themselves():
    store, started, release = SharedResults(4), threading.Event(), threading.Event()

    def fail():
        started.set()
        release.wait(10)
        raise ValueError("nothing to show")

    errors, got = [], []

    def first():
        try:
            store.get("k", fail)
        except ValueError as e:
            errors.append(e)

    t1 = threading.Thread(target=first)
    t1.start()
    assert started.wait(10)
    t2 = threading.Thread(target=lambda: got.append(store.get("k", lambda: "second")))
    t2.start()
    release.set()
    t1.join(10)
    t2.join(10)
    assert len(errors) == 1 and got == ["second"]
    assert store.get("k", lambda: "third") == "third"  # nothing was kept for the failure


def test_an_entry_of_a_dropped_model_is_never_handed_out():
    class Model:  # weak-referenceable, like a torch module
        pass

    store, model = SharedResults(4), Model()
    token, alive = model_token(model)
    store.get(("r", token), lambda: "computed on model", alive)
    assert store.get(("r", token), lambda: "again", alive) == "computed on model"
    del model
    gc.collect()
    assert not alive()
    assert store.get(("r", token), lambda: "again", alive) == "again"  # same id, another object: recomputed


def test_put_keeps_only_what_is_not_kept_yet():
    store = SharedResults(4)
    store.put("k", "warm")
    store.put("k", "later")
    assert store.get("k", lambda: "computed") == "warm"


# ----------------------------------------------------------------------------- a lesson's Result, keyed exactly


@dataclass(frozen=True)
class Inputs:
    text: str = "The little girl found a red ball."
    seed: int = 0


@dataclass(frozen=True)
class Result:
    text: str


class Module:  # a loaded model's torch module stands for the object
    pass


@dataclass(frozen=True, eq=False)
class FakeLoaded:
    key: str
    source: str
    location: str
    model: object

    @property
    def identity(self) -> tuple:
        return (self.key, self.source, self.location, "cpu", "float32")


CALLS: list = []


def lesson_run(models, inputs, cache):
    """A lesson's run: counts its calls, and its Result carries the text it was given."""
    CALLS.append(inputs)
    return Result(f"{inputs.text} on {models['bert'].location}")


@pytest.fixture
def fresh_store(monkeypatch):
    monkeypatch.setattr(ui_cache, "_RESULTS", SharedResults(8))
    CALLS.clear()


def test_identical_inputs_are_computed_once_across_sessions(fresh_store):
    bundled = FakeLoaded("bert", "bundled", "assets/models/bert", Module())
    one = ui_cache.shared_result(lesson_run, {"bert": bundled}, Inputs())
    other = ui_cache.shared_result(lesson_run, {"bert": bundled}, Inputs())  # another session's equal Inputs
    assert one is other and len(CALLS) == 1


def test_different_inputs_are_not_shared_and_carry_their_own_text(fresh_store):
    bundled = FakeLoaded("bert", "bundled", "assets/models/bert", Module())
    mine = ui_cache.shared_result(lesson_run, {"bert": bundled}, Inputs(text="my secret sentence"))
    theirs = ui_cache.shared_result(lesson_run, {"bert": bundled}, Inputs())
    seeded = ui_cache.shared_result(lesson_run, {"bert": bundled}, Inputs(seed=1))
    assert len(CALLS) == 3
    assert "my secret sentence" in mine.text
    assert "secret" not in theirs.text and "secret" not in seeded.text


def test_a_brought_model_is_not_shared_with_another_model(fresh_store):
    """Two visitors bring models under the same name and place (same identity tuple), but different loaded objects:
    neither sees the other's Result. The same loaded object (the same model brought, shared by the loader) is."""
    mine = FakeLoaded("bert", "folder", "/home/me/model", Module())
    theirs = FakeLoaded("bert", "folder", "/home/me/model", Module())
    a = ui_cache.shared_result(lesson_run, {"bert": mine}, Inputs())
    b = ui_cache.shared_result(lesson_run, {"bert": theirs}, Inputs())
    assert a is not b and len(CALLS) == 2
    again = FakeLoaded("bert", "folder", "/home/me/model", mine.model)
    assert ui_cache.shared_result(lesson_run, {"bert": again}, Inputs()) is a and len(CALLS) == 2
    bundled = FakeLoaded("bert", "bundled", "assets/models/bert", Module())
    assert ui_cache.shared_result(lesson_run, {"bert": bundled}, Inputs()).text.endswith("assets/models/bert")
    assert len(CALLS) == 3


def test_unhashable_inputs_run_unshared(fresh_store):
    @dataclass
    class Loose:  # not frozen: not hashable, so it cannot key a shared Result
        text: str = "x"

    bundled = FakeLoaded("bert", "bundled", "assets/models/bert", Module())
    ui_cache.shared_result(lesson_run, {"bert": bundled}, Loose())
    ui_cache.shared_result(lesson_run, {"bert": bundled}, Loose())
    assert len(CALLS) == 2


# ----------------------------------------------------------------------------- figures in their wire form


def test_wire_form_is_converted_once_per_content():
    import json

    import plotly.graph_objects as go
    import plotly.io as pio

    from app.figures import wire_form, wired_counts

    def figure(title):
        return go.Figure(go.Heatmap(z=[[0.0, 1.0], [2.0, 3.5]]), layout={"title": {"text": title}})

    before = wired_counts()
    first = wire_form(figure("a <b>token</b>"))
    second = wire_form(figure("a <b>token</b>"))  # another figure, the same content
    assert second is first
    assert first == json.loads(pio.to_json(figure("a <b>token</b>"), validate=False))  # what Streamlit would send
    changed = figure("a <b>token</b>")
    changed.update_layout(height=300)  # restyled (presenter mode, a phone, a height): converted again
    assert wire_form(changed)["layout"]["height"] == 300 and "height" not in first["layout"]
    after = wired_counts()
    assert after["serialized"] - before["serialized"] == 2 and after["kept"] - before["kept"] == 1


def test_a_lesson_that_reads_files_keys_its_shared_result_by_their_state(tmp_path, monkeypatch):
    """The claims page reads results files a run rewrites: its shared_key(inputs) (their versions) is part of the
    key, so a rewritten file gives a new Result — in CI a page test saw a Result computed from another folder."""
    from app.lessons import claims
    from app.ui.cache import result_key

    monkeypatch.setenv("BVE_EXPERIMENTS_DIR", str(tmp_path / "a"))
    first, _ = result_key(claims.run, {}, claims.Inputs())
    monkeypatch.setenv("BVE_EXPERIMENTS_DIR", str(tmp_path / "b"))
    second, _ = result_key(claims.run, {}, claims.Inputs())
    assert first != second and first[:4] == second[:4]  # the same lesson and inputs; another state of its files
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "masking.json").write_text("{}")
    assert result_key(claims.run, {}, claims.Inputs())[0] != second  # a file written: another key
