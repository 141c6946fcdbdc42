"""The "Does it work?" page through the router: without results (the paper's side and the command), with
made-up results in the real schema (the verdict, curves, final numbers and tables the library computes), URL
state, and the live run (started, watched by a second visitor, cancelled only by its owner). Asserts what the
page shows, not its wording."""

from __future__ import annotations

from pathlib import Path

import json
import time
from dataclasses import replace

import pytest

from app.lessons import claims
from app.experiments import EXPERIMENTS, live, results, verdict
from tests.conftest import shown_text
from tests.test_claims import CLEAR, make_doc, quick_live_budget, synthetic_corpus, wait, write

PAGE = "pages/claims.py"
K = "claims."
START = "Run a small one live"


@pytest.fixture(autouse=True)
def results_dir(tmp_path, monkeypatch):
    """An empty results folder (BVE_EXPERIMENTS_DIR) and a fresh, idle live runner for every test."""
    folder = tmp_path / "experiments"
    folder.mkdir()
    monkeypatch.setenv("BVE_EXPERIMENTS_DIR", str(folder))
    bg = live.Background()
    bg.corpus, bg.work = tmp_path / "no-corpus", tmp_path / "work"
    monkeypatch.setattr(live, "BACKGROUND", bg)
    yield folder
    bg.cancel(bg.snapshot().owner)
    wait(bg, 60)


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    """A small synthetic corpus for the live runner, and the quick masking budget as the live one."""
    quick_live_budget(monkeypatch)
    live.BACKGROUND.corpus, live.BACKGROUND.turn_s = synthetic_corpus(tmp_path / "corpus"), 0.5
    return live.BACKGROUND.corpus


def charts(at) -> dict[str, dict]:
    return {c.proto.id.split("fig-")[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def frame(at, column: str):
    """The page's one table with this column (the plan history's, in its expander, comes before the others)."""
    (found,) = [d.value for d in at.dataframe if column in d.value.columns]
    return found


def start_button(at):
    return next(b for b in at.button if b.label == START)


def test_without_results_it_shows_the_paper_the_command_and_why_no_live_run(app_page):
    at = app_page(PAGE)
    assert not at.exception
    assert at.title[0].value == "Does it work?"
    assert "python -m app.experiments run masking" in [c.value for c in at.code]
    assert not charts(at)  # nothing measured, nothing live
    overview = frame(at, "verdict")  # §4.1 gives no number: no paper table, only the claim's comparisons
    assert not [d for d in at.dataframe if "measured" in d.value.columns]
    assert len(overview) == 4 and list(overview["verdict"]) == ["not run yet"] * 4
    at = app_page(PAGE, compare="1")  # RoBERTa's Table 1: static ×10 vs dynamic
    paper = frame(at, "measured")
    rows = claims.CLAIMS["masking"].comparisons[1].paper
    assert list(paper["measured"]) == [row.measure for row in rows]
    assert list(paper["A"]) == [f"{row.better:.4g}" for row in rows] and list(paper["B"]) == [
        f"{row.worse:.4g}" for row in rows
    ]
    assert at.selectbox(key=K + "claim").options == [claims.CLAIMS[n].title for n in EXPERIMENTS]
    assert any("corpus" in i.value for i in at.info) and start_button(at).disabled


def test_with_results_the_verdict_curves_and_numbers_are_the_librarys(app_page, results_dir):
    doc = make_doc("masking", CLEAR)
    write(results_dir, doc)
    at = app_page(PAGE)
    assert not at.exception
    r = claims.run({}, claims.Inputs())
    v = r.comparison.verdict
    assert v["verdict"] == verdict.REPRODUCES
    assert any(f"Verdict: {verdict.REPRODUCES}" in s.value for s in at.success)
    figs = charts(at)
    curves = figs["claims-masking-curves"]["data"]
    means = [t for t in curves if "seeds)" in t["name"]]
    assert [t["y"] for t in means] == [pytest.approx(list(c.mean)) for c in r.curves]
    finals = figs["claims-masking-finals"]["data"]
    assert sorted(y for t in finals if t["name"].endswith(": seeds") for y in t["y"]) == pytest.approx(
        sorted(x for f in r.finals for x in f.values)
    )
    table = frame(at, "mean")
    assert list(table["mean"]) == pytest.approx([f.mean for f in r.finals])
    here = frame(at, "A − B").iloc[-1]
    assert here[""] == "here" and f"{v['difference']:+.4g}" in here["A − B"]
    overview = frame(at, "95% interval")
    assert list(overview["verdict"]) == [c.verdict["label"] for c in r.comparisons]
    assert list(overview["95% interval"]) == [claims.interval_text(c.verdict) for c in r.comparisons]
    assert "3 seeds per arm" in shown_text(at)
    # the box: what was measured (every seed's difference), the interval, Holm's m and threshold, and why
    box = next(s.value for s in at.success if f"Verdict: {verdict.REPRODUCES}" in s.value)
    assert all(f"seed {s}" in box for s in v["seeds"]) and "95% interval" in box
    assert f"This page makes {r.m} comparison" in box and "Holm" in box and f"{v['holm_threshold']:.2g}" in box
    assert v["why"] in box and r.m == 4  # only masking has results here: its 4 comparisons are the family
    # the overview of every comparison: one dot and bar per comparison with results, coloured by verdict
    fam = figs["claims-all-comparisons"]["data"]
    dots = [t for t in fam if t["name"] in verdict.VERDICTS]
    assert (
        sum(len(t["y"]) for t in dots) == 4 and sum(len(t["y"]) for t in fam if "boundary" in t["name"]) == 20
    )  # 19 comparisons, the equivalence one with two boundaries (±margin)


def test_a_reversal_and_a_tie_are_shown_as_computed(app_page, results_dir):
    write(results_dir, make_doc("masking", {"dynamic": [2.50, 2.51, 2.49], "static1": [2.00, 2.01, 1.99]}))
    at = app_page(PAGE)
    assert any(f"Verdict: {verdict.REVERSES}" in e.value for e in at.error)
    write(results_dir, make_doc("masking", {"dynamic": [2.0, 2.3, 1.7], "static1": [2.35, 1.75, 2.05]}))
    at = app_page(PAGE)
    assert any(f"Verdict: {verdict.TOO_SMALL}" in i.value for i in at.info)


def test_url_state_restores_the_widgets_and_malformed_values_get_notes(app_page, results_dir):
    write(results_dir, make_doc("electra"))
    at = app_page(PAGE, claim="electra", compare="1", x="step", arms="all", seed="5", seconds="30", metric="rtd_auc")
    assert not at.exception
    assert at.selectbox(key=K + "claim").value == "electra" and at.selectbox(key=K + "compare").value == 1
    assert at.radio(key=K + "x").value == "step" and at.radio(key=K + "arms").value == "all"
    assert at.number_input(key=K + "seed").value == 5 and at.slider(key=K + "seconds").value == 30
    assert at.selectbox(key=K + "metric").value == "rtd_auc"
    curves = charts(at)["claims-electra-curves"]["data"]
    assert len([t for t in curves if "seeds)" in t["name"]]) == 3 and curves[1]["x"] == [0, 10, 20]
    bad = app_page(PAGE, claim="gpt", compare="9", seconds="600")
    assert not bad.exception
    text = shown_text(bad)
    assert "Ignored `claim=gpt`" in text and "Ignored `seconds=600`" in text
    assert "comparison 9 does not exist" in text and bad.selectbox(key=K + "compare").value == 0


def test_another_claim_starts_from_its_first_comparison(app_page, results_dir):
    write(results_dir, make_doc("sharing"))
    at = app_page(PAGE, compare="3")
    at.selectbox(key=K + "claim").set_value("sharing").run()
    assert not at.exception
    assert at.selectbox(key=K + "compare").value == 0 and not any("does not exist" in i.value for i in at.info)
    assert charts(at)["claims-sharing-finals"]["layout"]["xaxis"]["type"] == "log"  # sharing: against parameters


def test_the_live_run_trains_in_the_background_and_every_visitor_sees_it(app_page, corpus):
    at = app_page(PAGE)
    assert not start_button(at).disabled
    start_button(at).click().run()
    assert not at.exception
    assert live.BACKGROUND.snapshot().owner == at.session_state[K + "live_owner"]
    other = app_page(PAGE)  # a second visitor while it runs (or just after)
    if live.BACKGROUND.snapshot().active:
        assert start_button(other).disabled and "another visitor" in shown_text(other)
        assert not [b for b in other.button if b.label == "Cancel"]
    done = wait(live.BACKGROUND, 90)
    assert done.state == "finished"
    at.run()
    assert not at.exception and not start_button(at).disabled
    fig = charts(at)["claims-live"]["data"]
    assert [t["name"] for t in fig] == [done.labels["dynamic"], done.labels["static1"]] * 2
    assert fig[0]["x"] == done.training["dynamic"]["step"]  # every training step ...
    assert fig[2]["x"] == done.points["dynamic"]["step"]  # ... and every evaluation
    assert fig[2]["y"] == pytest.approx(done.points["dynamic"]["valid_loss"])
    assert "by you" in shown_text(at)


def test_only_the_visitor_who_started_it_can_cancel(app_page, corpus, monkeypatch):
    from app.experiments import masking

    monkeypatch.setattr(masking, "LIVE", replace(masking.QUICK, steps=5000, eval_every=50))
    at = app_page(PAGE, seconds="60")
    start_button(at).click().run()
    end = time.time() + 60
    while live.BACKGROUND.snapshot().state == "preparing" and time.time() < end:
        time.sleep(0.2)
    at.run()
    cancel = [b for b in at.button if b.label == "Cancel"]
    assert cancel and not [b for b in app_page(PAGE).button if b.label == "Cancel"]
    cancel[0].click().run()
    assert wait(live.BACKGROUND, 30).state == "cancelled"


def test_the_recipe_lessons_line_names_the_measured_result(results_dir):
    assert "not run yet" in results.one_line("electra").lower()
    write(results_dir, make_doc("electra"))
    line = results.one_line("electra")
    assert "replaced-token detection vs masked LM" in line and line.split(" — ")[-1].startswith(tuple(verdict.VERDICTS))


def test_an_arm_that_did_not_learn_its_task_gets_no_verdict_and_the_page_shows_its_health_check(app_page, results_dir):
    # the first ELECTRA run (plan version 1, 3 seeds, kept in tests/data): its discriminators stayed near 0.55
    doc = results.read(Path(__file__).resolve().parents[1] / "data" / "electra-3seeds-plan1.json")
    write(results_dir, doc)
    at = app_page(PAGE, claim="electra")
    assert not at.exception
    box = next(w.value for w in at.warning if f"Verdict: {verdict.NO_VERDICT}" in w.value)
    assert "electra did not learn its task (discriminator ROC-AUC 0.561, 0.541, 0.544" in box
    assert "needs ≥ 0.750" in box and "Holm" in box and "p = " not in box  # no test, so no p
    health = " ".join(e.value for e in at.markdown if "on every seed" in e.value)
    assert "discriminator ROC-AUC ≥ 0.750 on every seed — 0.561, 0.541, 0.544: **fails** on 3 seeds" in health
    overview = at.dataframe[-1].value
    assert all(label.startswith("no verdict: ") for label in overview["verdict"]) and set(overview["p"]) == {"—"}
    assert results.one_line("electra").split(" — ")[-1].startswith("no verdict: electra did not learn its task")
    text = shown_text(at)  # ELECTRA's arms differ even in their step counts: pairing shares seeds, not batches
    assert "same batches and masks" not in text and "A trained 1,802 steps, B 2,000" in text
    total = sum(len(c.comparisons) for c in claims.CLAIMS.values())
    assert f"All {total} comparisons of this page" in [h.value for h in at.subheader]  # counted, drawn with m tested


def test_the_verdict_box_gives_the_effect_in_margins_and_the_equivalence_test(app_page, results_dir):
    write(results_dir, results.read(results.BUNDLED / "distillation.json"))
    at = app_page(PAGE, claim="distillation", compare="3")  # T = 2 vs T = 1: clearly within ±0.01 of top-1
    assert not at.exception
    v = claims.run({}, claims.Inputs(claim="distillation", compare=3)).comparison.verdict
    box = next(i.value for i in at.info if "Verdict: equivalent within ±0.01" in i.value)
    assert "**Against the margin** (±0.01)" in box and f"outcome **{verdict.WITHIN}**" in box
    assert results.margins_text(v) in box and f"{v['p_equiv']:.2g}" in box and f"{v['equiv_threshold']:.2g}" in box
    overview = at.dataframe[-1].value
    assert list(overview["in margins"]) == [
        claims.margins_cell(c.verdict) for c in claims.run({}, claims.Inputs(claim="distillation")).comparisons
    ]


def test_the_plan_history_of_a_comparison_is_on_the_page(app_page, results_dir):
    write(results_dir, results.read(results.BUNDLED / "masking.json"))
    at = app_page(PAGE, claim="masking", compare="2")  # span vs token: seeds 3 -> 5 -> 10, three looks
    assert not at.exception
    assert any(e.label.startswith("The plan and its history: looked at 3 times") for e in at.expander)
    table = next(d.value for d in at.dataframe if "version" in d.value.columns)
    assert list(table["seeds"]) == [3, 3, 5, 10, 10] and list(table["version"]) == [1, 2, 3, 4, 5]
    overview = at.dataframe[-1].value
    assert list(overview["looks"]) == [3, 3, 3, 3]
