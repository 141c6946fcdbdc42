"""The "Does it work?" lesson (app/lessons/claims.py), its figures, the one line a recipe lesson shows
(app.experiments.results.one_line) and the server's one background live run (app.experiments.live).

Results documents are made up here in the real schema (every claim's arms and metrics, per-seed curves
and finals), so the verdicts are known in advance; the live run trains the quick budget on a small
synthetic corpus for a few seconds."""

from __future__ import annotations

import random
import re
import time
from dataclasses import replace
from pathlib import Path

import pytest

from app.lessons import claims
from app.experiments import EXPERIMENTS, live, results, verdict
from app.experiments.claims import CLAIMS
from app.figures import claims as figures

STEPS = [0, 10, 20]


def make_doc(
    name: str, finals: dict[str, list[float]] | None = None, quick: bool = False, spread: float = 0.01, seed: int = 0
) -> dict:
    """A results document for experiment ``name`` in the real schema. Every arm gets 3 seeds whose every
    metric ends near a per-arm value; ``finals[arm]`` fixes the comparison metrics' per-seed finals. Every arm
    counts as trained (its training loss falls by 3 nats, a teacher 0.5 of top-1 above its students)."""
    rng = random.Random(seed)
    module = EXPERIMENTS[name].load()
    claim = CLAIMS[name]
    finals = finals or {}
    arms = {}
    for i, arm in enumerate(module.arms(module.FULL)):
        seeds = []
        for s in range(3):
            final, curves = (
                {},
                {
                    "step": [20, 40],
                    "train_loss": [8.0, 5.0],
                    "flops": [2000.0, 4000.0],
                    "eval_step": STEPS,
                    "eval_flops": [x * 100.0 for x in STEPS],
                },
            )
            for metric in claim.metrics:
                if metric == "params":
                    continue
                value = finals.get(arm.name, [None] * 3)[s]
                if value is None:
                    value = 1.0 + 0.1 * i + rng.uniform(-spread, spread)
                final[metric] = value
                curves[metric] = [value + 1.0, value + 0.5, value]
            details = {"teacher_final": {"top1": final["valid_top1"] + 0.5}} if "valid_top1" in final else {}
            seeds.append(
                {
                    "seed": s,
                    "steps": STEPS[-1],
                    "train_seconds": 1.0,
                    "wall_seconds": 1.0,
                    "details": details,
                    "final": final,
                    "curves": curves,
                }
            )
        arms[arm.name] = {
            "label": arm.label,
            "change": arm.change,
            "params": 1000 * (i + 1),
            "flops_per_step": 100.0,
            "flops_parts": {},
            "seeds": seeds,
        }
    doc = {
        "schema": results.SCHEMA,
        "experiment": name,
        "quick": quick,
        "claim": claim.as_dict(),
        "meta": {
            "command": f"python -m app.experiments run {name}",
            "git": {"revision": "abc", "dirty": False},
            "device": "cpu (test)",
            "started": "2026-01-01T00:00:00Z",
            "finished": "2026-01-01T01:00:00Z",
        },
        "budget": {"steps": STEPS[-1], "probe_test": 1000},
        "arms": arms,
    }
    doc["verdicts"] = [dict(key=k, **v) for k, v in results.verdicts(doc).items()]
    return doc


@pytest.fixture
def results_dir(tmp_path, monkeypatch) -> Path:
    """An empty results folder the lesson reads (BVE_EXPERIMENTS_DIR)."""
    folder = tmp_path / "experiments"
    folder.mkdir()
    monkeypatch.setenv("BVE_EXPERIMENTS_DIR", str(folder))
    return folder


def write(folder: Path, doc: dict) -> None:
    results.write(doc, folder / f"{doc['experiment']}.json")


CLEAR = {"dynamic": [2.00, 2.01, 1.99], "static1": [2.50, 2.51, 2.49]}  # loss: dynamic clearly lower


# ----------------------------------------------------------------------------- the spec


def test_the_spec_offers_every_experiment_and_its_metrics():
    assert claims.SPEC.claim.choices == tuple(EXPERIMENTS)
    for name, claim in CLAIMS.items():
        for c in claim.comparisons:
            assert c.metric in claims.SPEC.metric.choices
        assert len(claim.comparisons) <= claims.SPEC.compare.hi + 1
    assert claims.SPEC.seconds.hi == live.MAX_SECONDS == 60


# ----------------------------------------------------------------------------- without results


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_without_results_the_lesson_shows_the_paper_and_the_command(results_dir, name):
    r = claims.run({}, claims.Inputs(claim=name))
    assert not r.has_results and r.curves == () and r.finals == () and r.provenance == {}
    assert r.command == f"python -m app.experiments run {name}"
    assert len(r.comparisons) == len(CLAIMS[name].comparisons)
    for c, source in zip(r.comparisons, CLAIMS[name].comparisons):
        assert c.verdict is None
        assert [(p.measure, p.better, p.worse, p.difference) for p in c.paper] == [
            (p.measure, p.better, p.worse, p.difference) for p in source.paper
        ]
        assert c.better_label == r.labels[c.better] and c.better_label != c.better  # the experiment's own label
    assert r.metric_options == ("auto",)
    line = results.one_line(name)
    assert "not run yet" in line.lower() and f"`python -m app.experiments run {name}`" in line


# ----------------------------------------------------------------------------- with results


def test_verdicts_curves_and_finals_come_from_the_seeds(results_dir):
    doc = make_doc("masking", CLEAR)
    write(results_dir, doc)
    r = claims.run({}, claims.Inputs(claim="masking"))
    assert r.has_results and r.comparison.key == "dynamic_vs_static1"
    expected = results.verdicts(doc)
    for c in r.comparisons:
        assert c.verdict == expected[c.key]
    assert r.comparison.verdict["verdict"] == verdict.REPRODUCES
    # curves: the two compared arms, each the band over its seeds, against steps
    assert [c.arm for c in r.curves] == ["static1", "dynamic"] and all(c.compared for c in r.curves)
    band = results.band(doc, "dynamic", "valid_loss", "step")
    dyn = next(c for c in r.curves if c.arm == "dynamic")
    assert list(dyn.x) == band["x"] == STEPS and list(dyn.mean) == pytest.approx(band["mean"])
    assert list(dyn.lo) == pytest.approx(band["lo"]) and dyn.n == 3
    # finals: every arm, the comparison's metric, one value per seed
    f = {x.arm: x for x in r.finals}
    assert set(f) == set(doc["arms"]) and list(f["dynamic"].values) == CLEAR["dynamic"]
    assert f["dynamic"].mean == pytest.approx(2.0) and f["dynamic"].lo == 1.99 and f["dynamic"].compared
    assert not f["span"].compared
    assert r.provenance["seeds"] == 3 and r.provenance["revision"] == "abc"
    every = claims.run({}, claims.Inputs(claim="masking", arms="all"))
    assert len(every.curves) == len(doc["arms"]) and sum(c.compared for c in every.curves) == 2


@pytest.mark.parametrize(
    "finals, expected",
    [
        (CLEAR, verdict.REPRODUCES),
        ({"dynamic": [2.50, 2.51, 2.49], "static1": [2.00, 2.01, 1.99]}, verdict.REVERSES),
        ({"dynamic": [2.0, 2.3, 1.7], "static1": [2.35, 1.75, 2.05]}, verdict.TOO_SMALL),  # seeds not moving together
    ],
)
def test_the_verdict_and_the_one_line_follow_the_numbers(results_dir, finals, expected):
    write(results_dir, make_doc("masking", finals))
    r = claims.run({}, claims.Inputs(claim="masking"))
    v = r.comparison.verdict
    assert v["verdict"] == expected and claims.VERDICT_LEVEL[expected] in ("success", "info", "error")
    line = results.one_line("masking")
    assert line.split(" — ")[-1].startswith(expected) and "3 seeds" in line and "95% interval" in line
    assert results.fmt(v["mean_a"]) in line and results.fmt(v["mean_b"]) in line
    assert "dynamic" in line and "static ×1" in line and "held-out masked-LM loss" in line


def test_the_one_line_marks_a_smoke_run_and_reads_a_new_version_of_the_file(results_dir):
    write(results_dir, make_doc("masking", CLEAR, quick=True))
    assert "--quick" in results.one_line("masking")
    time.sleep(0.01)
    write(results_dir, make_doc("masking", {"dynamic": [2.50, 2.51, 2.49], "static1": [2.00, 2.01, 1.99]}))
    line = results.one_line("masking")
    assert "--quick" not in line and line.endswith(f"{verdict.REVERSES} at 20 steps, 3 seeds")


def test_the_one_line_is_kept_until_a_results_file_of_its_family_changes(results_dir):
    """Lesson pages show the line on every rerun: it is computed once per version of the files, and another
    experiment's new results (which change Holm's family) change it too."""
    write(results_dir, make_doc("masking", CLEAR))
    alone = results.one_line("masking")
    assert results.one_line("masking") is alone  # kept: the same string, not computed again
    time.sleep(0.01)
    write(results_dir, make_doc("electra"))
    with_electra = results.one_line("masking")
    m = lambda line: int(re.search(r"Holm over (\d+) comparisons", line).group(1))  # noqa: E731
    assert m(with_electra) > m(alone)


def test_a_quick_run_a_bad_comparison_and_a_missing_curve_are_notes(results_dir):
    write(results_dir, make_doc("electra", quick=True))
    r = claims.run({}, claims.Inputs(claim="electra", compare=7, metric="nsp_probe"))
    text = " ".join(n.text for n in r.notes)
    assert "--quick" in text and "comparison 7 does not exist" in text and "`nsp_probe`" in text
    assert r.chosen == 0 and r.metric == r.comparison.metric == "probe_acc" and r.metric_choice == "auto"
    assert r.x == "flops"  # ELECTRA's claim is per unit of compute
    assert r.curves[0].x == (0.0, 1000.0, 2000.0)
    assert claims.run({}, claims.Inputs(claim="electra", x="step")).curves[0].x == tuple(STEPS)
    assert "train_loss" in r.metric_options and "rtd_auc" in r.metric_options
    assert claims.run({}, claims.Inputs(claim="electra", metric="train_loss")).curves[0].x == (2000.0, 4000.0)


def test_a_metric_measured_only_after_training_says_which_curve_is_shown_instead(results_dir):
    """The acceptability probe is measured once, after training: on "auto", the curves fall back to the training
    loss, and the page says so — the note, the selector's "auto" (r.metric) and a caption that does not call the
    training loss held-out. A comparison whose metric has a curve shows it, on held-out text, with no note."""
    doc = make_doc("masking")
    for arm in doc["arms"].values():
        for seed in arm["seeds"]:
            del seed["curves"]["probe_acc"]
    write(results_dir, doc)
    span = next(i for i, c in enumerate(claims.comparisons("masking", doc, {})) if c.metric == "probe_acc")
    r = claims.run({}, claims.Inputs(claim="masking", compare=span))
    assert r.comparison.metric == "probe_acc" and r.metric == "train_loss"
    text = " ".join(n.text for n in r.notes)
    assert "measured once, after training, so it has no curve" in text and "training loss" in text
    caption = claims.curves_caption(r)
    assert caption.startswith("training loss") and "not on held-out text" in caption
    loss = claims.run({}, claims.Inputs(claim="masking", compare=0))
    assert loss.metric == loss.comparison.metric != "train_loss"
    assert not any("no curve" in n.text for n in loss.notes)
    assert "on held-out text at every evaluation" in claims.curves_caption(loss)


def test_a_partial_run_has_no_verdict_for_the_missing_arms(results_dir):
    doc = make_doc("sharing")
    doc["arms"] = {k: v for k, v in doc["arms"].items() if k in ("none", "all")}
    write(results_dir, doc)
    r = claims.run({}, claims.Inputs(claim="sharing", compare=1))
    assert r.comparisons[0].verdict is not None and r.comparison.verdict is None
    assert any("no run of" in n.text for n in r.notes)
    assert r.params_axis and {f.params for f in r.finals} == {1000, 2000}


def test_a_broken_results_file_reads_as_not_run(results_dir):
    (results_dir / "masking.json").write_text("{ not json")
    assert not claims.run({}, claims.Inputs(claim="masking")).has_results
    assert "not run yet" in results.one_line("masking").lower()


# ----------------------------------------------------------------------------- the live pair


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_every_claim_offers_its_smallest_pair_live_with_a_metric_the_live_run_reports(name):
    lv = claims.live_of(name)
    assert lv.pair == EXPERIMENTS[name].live_pair
    comp = next(c for c in CLAIMS[name].comparisons if (c.better, c.worse) == lv.pair)
    assert lv.metric == comp.metric and lv.x == ("flops" if name == "electra" else "step")


def test_live_points_keep_the_finite_values():
    p = live.Progress(
        arms=("a", "b"),
        points={"a": {"step": [0, 5, 10], "valid_loss": [3.0, None, 2.0]}},
        training={"b": {"step": [1, 2], "flops": [10.0, 20.0], "train_loss": [6.0, float("nan")]}},
    )
    assert claims.live_points(p, "valid_loss", "step") == {"a": ([0, 10], [3.0, 2.0]), "b": ([], [])}
    assert claims.live_training(p, "flops") == {"a": ([], []), "b": ([10.0], [6.0])}


def test_availability_says_why_a_live_run_cannot_start(tmp_path):
    assert "corpus" in live.availability("masking", corpus=tmp_path / "missing", work=tmp_path)
    (tmp_path / "corpus").mkdir()
    assert live.availability("masking", corpus=tmp_path / "corpus", work=tmp_path) is None
    assert "teacher" in live.availability("distillation", corpus=tmp_path / "corpus", work=tmp_path)


# ----------------------------------------------------------------------------- figures


def test_figures_draw_the_bands_the_means_and_every_seed(results_dir):
    write(results_dir, make_doc("masking", CLEAR))
    r = claims.run({}, claims.Inputs(claim="masking"))
    comp = r.comparison
    fig = figures.curves_figure(r.curves, r.x, r.metric_label, False, comp.better, comp.worse)
    fig.to_dict()  # validated
    band, mean = fig.data[2], fig.data[3]  # the second arm: dynamic
    dyn = r.curves[1]
    assert list(band.x) == list(dyn.x) + list(dyn.x)[::-1] and list(band.y) == list(dyn.hi) + list(dyn.lo)[::-1]
    assert list(mean.y) == list(dyn.mean) and mean.line.color == figures.BETTER
    assert fig.data[1].line.color == figures.WORSE
    fin = figures.finals_figure(r)
    dots = [t for t in fin.data if t.name.endswith(": seeds")]
    assert sorted(y for t in dots for y in t.y) == sorted(v for f in r.finals for v in f.values)
    diamonds = {t.name: t for t in fin.data if not t.name.endswith(": seeds")}
    assert diamonds[r.finals[2].label].y[0] == pytest.approx(r.finals[2].mean)
    shared = figures.finals_figure(replace(r, params_axis=True))
    assert shared.layout.xaxis.type == "log" and shared.data[0].x[0] == r.finals[0].params
    lv = figures.live_figure(
        claims.LiveCurves(
            {"dynamic": ([1, 2, 3], [6.0, 5.9, 5.7]), "static1": ([1, 2], [6.0, 5.8])},
            {"dynamic": ([0, 5], [3.0, 2.5]), "static1": ([0, 5], [3.0, 2.7])},
            {"dynamic": "dynamic"},
            "step",
            "loss",
            ("dynamic", "static1"),
            False,
        )
    )
    lv.to_dict()
    assert [list(t.y) for t in lv.data] == [[6.0, 5.9, 5.7], [6.0, 5.8], [3.0, 2.5], [3.0, 2.7]]
    assert [t.xaxis for t in lv.data] == ["x", "x", "x2", "x2"] and lv.data[3].name == "static1"
    assert lv.data[0].line.color == lv.data[2].line.color == figures.BETTER


def test_a_long_claim_and_its_verdict_wrap_in_the_key_figures_title_and_push_the_plot_down(results_dir):
    """At 1280 px a title of one line ran off the figure's right edge: the claim wraps, the verdict gets its own
    line, and the top margin and the height grow by a line each, so the legend and the plot keep their room."""
    import re

    write(results_dir, make_doc("sharing"))
    comps = claims.comparisons("sharing", make_doc("sharing"), {})
    longest = max(range(len(comps)), key=lambda i: len(comps[i].claim))
    r = claims.run({}, claims.Inputs(claim="sharing", compare=longest))
    assert len(r.comparison.claim) > figures.TITLE_CHARS
    fig = figures.key_figure(r)
    lines = [re.sub("<[^>]+>", "", x) for x in fig.layout.title.text.split("<br>")]
    assert len(lines) >= 3 and lines[-1].startswith("verdict: ") and "<b>" in fig.layout.title.text
    assert all(len(x) <= figures.TITLE_CHARS for x in lines[:-1])
    plain = figures.curves_figure(r.curves, r.x, r.metric_label, None, r.comparison.better, r.comparison.worse)
    grown = (len(lines) - 1) * figures.TITLE_LINE_PX
    assert fig.layout.margin.t == plain.layout.margin.t + grown and fig.layout.height == plain.layout.height + grown


def test_the_legend_of_every_arm_gets_its_own_rows_above_the_plot_clear_of_the_title(results_dir):
    """Rows are packed by the labels' width at a projector's font size: two short labels share a row, masking's
    two long ones (static ×1 and dynamic) took two rows on the stage, six arms more; the top margin and the figure
    grow by a row each, so the entries stay clear of the title and the plot keeps its height."""
    import dataclasses

    write(results_dir, make_doc("masking", CLEAR))
    r = claims.run({}, claims.Inputs(claim="masking"))
    comp = r.comparison
    short = [dataclasses.replace(c, label=c.arm) for c in r.curves[:2]]
    one = figures.curves_figure(short, r.x, r.metric_label, False, comp.better, comp.worse)
    two = figures.curves_figure(r.curves[:2], r.x, r.metric_label, False, comp.better, comp.worse)
    six = figures.curves_figure((r.curves * 3)[:6], r.x, r.metric_label, False, comp.better, comp.worse)
    assert [figures.legend_rows(f) for f in (one, two)] == [1, 2] and figures.legend_rows(six) >= 4
    for fig in (two, six):
        grow = (figures.legend_rows(fig) - 1) * figures.LEGEND_ROW_PX
        assert fig.layout.margin.t - one.layout.margin.t == grow and fig.layout.height - one.layout.height == grow
    assert one.layout.margin.t >= figures.TITLE_PX + figures.LEGEND_ROW_PX


# ----------------------------------------------------------------------------- the background live run


def synthetic_corpus(folder: Path, train: int = 300, valid: int = 80) -> Path:
    """``folder`` with tinystories_{train,valid}.txt of made-up stories (tests/test_experiments.py's)."""
    from tests.test_experiments import story

    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tinystories_train.txt").write_text("\n\n".join(story(rng) for _ in range(train)), encoding="utf-8")
    (folder / "tinystories_valid.txt").write_text("\n\n".join(story(rng) for _ in range(valid)), encoding="utf-8")
    return folder


def quick_live_budget(monkeypatch) -> None:
    """The live run trains the quick masking budget for 8 steps (the page's trains the full-size models)."""
    from app.experiments import masking

    monkeypatch.setattr(masking, "LIVE", replace(masking.QUICK, steps=8, eval_every=4))


@pytest.fixture
def background(tmp_path, monkeypatch):
    """A Background of its own on a small synthetic corpus, training the quick masking budget."""
    quick_live_budget(monkeypatch)
    bg = live.Background()
    bg.corpus, bg.work, bg.turn_s = synthetic_corpus(tmp_path / "corpus"), tmp_path / "work", 0.5
    yield bg
    bg.cancel(bg.snapshot().owner)
    wait(bg, 60)


def wait(bg: live.Background, timeout: float) -> live.Progress:
    end = time.time() + timeout
    while bg.snapshot().active and time.time() < end:
        time.sleep(0.2)
    return bg.snapshot()


@pytest.mark.slow  # trains
def test_the_background_run_trains_both_arms_and_everyone_sees_it(background):
    assert background.snapshot().state == "idle"
    first = background.start("masking", seed=3, seconds=40, owner="me")
    assert first.active and first.seed == 3 and first.arms == ("dynamic", "static1")
    assert first.labels["static1"].startswith("static ×1")
    with pytest.raises(live.Busy, match="started .* by another visitor"):
        background.start("masking", seed=0, seconds=20, owner="you")
    assert not background.cancel("you")  # only the visitor who started it
    done = wait(background, 60)
    assert done.state == "finished" and done.steps == {"dynamic": 8, "static1": 8}
    assert done.points["dynamic"]["step"] == [0, 4, 8]
    assert done.training["static1"]["step"] == list(range(1, 9)) and len(done.training["static1"]["train_loss"]) == 8
    assert "valid_loss" in done.points["static1"] and 0 < done.fraction <= 1
    assert "by you" in done.describe("me") and "by another visitor" in done.describe("you")
    # a snapshot is a copy: changing it changes nothing
    done.points["dynamic"]["step"].clear()
    assert background.snapshot().points["dynamic"]["step"]


@pytest.mark.slow  # trains
def test_the_owner_cancels_and_the_next_run_may_start(background):
    background.start("masking", seed=0, seconds=20, owner="me")
    assert background.cancel("me")
    assert wait(background, 60).state == "cancelled"
    second = background.start("masking", seed=1, seconds=999, owner="you")
    assert second.run_id == 2 and second.seconds == live.MAX_SECONDS
    background.cancel("you")


def test_a_run_that_cannot_start_says_why(background, tmp_path):
    background.corpus = tmp_path / "missing"
    background.start("masking", seed=0, seconds=5, owner="me")
    p = wait(background, 30)
    assert p.state == "error" and "corpus" in p.message and "could not run" in p.describe("me")


def fake_clock(monkeypatch) -> list[float]:
    """The live run's clock, the test's: every reading is 10 ms of work (a training step is a few readings), so a
    budget is spent in the same steps whatever the machine's load. Returns [now], to move it by hand."""
    from types import SimpleNamespace

    from app.training import common

    now = [1_000.0]

    def reading() -> float:
        now[0] += 0.01
        return now[0]

    clock = SimpleNamespace(time=reading)
    monkeypatch.setattr(live, "time", clock)
    monkeypatch.setattr(common, "time", clock)
    return now


@pytest.mark.slow  # trains
def test_a_run_that_runs_out_of_time_between_evaluations_ends_on_one(tmp_path, monkeypatch):
    from app.experiments import masking

    monkeypatch.setattr(masking, "LIVE", replace(masking.QUICK, steps=10_000, eval_every=10_000))
    fake_clock(monkeypatch)  # 3 s of readings, not of a loaded machine's time (it once left an arm no step)
    steps = []
    corpus = synthetic_corpus(tmp_path / "corpus")
    live.prepare("masking", corpus, tmp_path / "work", "cpu")  # the data, prepared before: the 3 s are training
    r = live.live_run(
        "masking",
        seconds=3,
        corpus=corpus,
        work=tmp_path / "work",
        turn_s=0.5,
        on_step=lambda arm, step, point: steps.append((arm, step, point["train_loss"])),
    )
    assert not r.finished and not r.cancelled
    for arm in r.arms:
        assert r.points[arm]["step"] == [0, r.steps[arm]] and r.steps[arm] > 0  # step 0, and where it stopped
        assert [s for a, s, _ in steps if a == arm] == list(range(1, r.steps[arm] + 1))


@pytest.mark.slow  # trains
def test_the_live_budget_counts_preparation_and_the_closing_evaluation(tmp_path, monkeypatch):
    """ "At most N seconds" holds from the click: the data preparation (slow on a first run) and the last
    evaluation are inside the budget, not added to it. The run's clock is the test's: every reading of it is
    10 ms of work (a training step is a few readings) and the preparation takes 1.5 s of it, so the budget's
    arithmetic is checked exactly, whatever the machine's load."""
    from app.experiments import masking

    monkeypatch.setattr(masking, "LIVE", replace(masking.QUICK, steps=10_000, eval_every=10_000))
    now = fake_clock(monkeypatch)
    prepare = live.prepare

    def slow_prepare(*args, **kwargs):  # a first run: tokenizer and sequences are built before training
        now[0] += 1.5
        return prepare(*args, **kwargs)

    corpus = synthetic_corpus(tmp_path / "corpus")
    prepare("masking", corpus, tmp_path / "work", "cpu")  # cached on disk: what is slow below is the 1.5 s
    monkeypatch.setattr(live, "prepare", slow_prepare)
    r = live.live_run("masking", seconds=6, corpus=corpus, work=tmp_path / "work", turn_s=0.5)
    assert 6 <= r.seconds <= 6.5, r.seconds  # the budget used, overrun by one turn's closing work (a save) at most
    assert all(r.points[arm]["elapsed_s"][0] >= 1.5 for arm in r.arms)  # the preparation counted: step 0 came after
    assert all(r.steps[arm] > 0 for arm in r.arms) and not r.finished


def test_the_overview_draws_every_comparison_against_its_boundary(results_dir):
    write(results_dir, make_doc("masking", CLEAR))
    r = claims.run({}, claims.Inputs(claim="masking"))
    assert r.m == 4 and len(r.family) == sum(len(c.comparisons) for c in CLAIMS.values())
    assert [row.chosen for row in r.family].count(True) == 1 and r.family[0].chosen
    fig = figures.family_figure(r)
    dots = {y: (x, t.name) for t in fig.data if t.name in verdict.VERDICTS for x, y in zip(t.x, t.y)}
    assert len(dots) == 4  # only masking has results
    first = next(y for y in dots if "dynamic_vs_static1 " in y)
    v = r.family[0].verdict
    assert v["difference"] / 0.05 == pytest.approx(10) and dots[first] == (figures.FAMILY_EDGE, v["verdict"])
    assert any(a.text == "+10" for a in fig.layout.annotations)  # past the edge: written there
    ticks = next(t for t in fig.data if "boundary" in t.name)
    eq = [x for x, y in zip(ticks.x, ticks.y) if "electra15_vs_mlm" in y]
    ni = [x for x, y in zip(ticks.x, ticks.y) if "dynamic_vs_static10" in y]
    assert eq == [-1.0, 1.0] and ni == [-1.0]
    assert "4 comparisons" in claims.family_caption(r) and "0.05 nats" in claims.family_caption(r)


def test_pairing_by_seed_does_not_claim_the_same_batches_and_masks(results_dir):
    import json

    bundled = Path(__file__).resolve().parents[1] / "assets" / "experiments"
    # the first ELECTRA run (plan version 1, kept in tests/data): its arms' step counts differ, 1,802 against 2,000
    electra = json.loads((Path(__file__).resolve().parent / "data" / "electra-3seeds-plan1.json").read_text())
    text = claims.pairing_text(electra, "electra", "mlm")
    assert "A trained 1,802 steps, B 2,000" in text and "same batches and masks" not in text
    masking = json.loads((bundled / "masking.json").read_text())
    assert claims.pairing_text(masking, "dynamic", "static10") == claims.PAIRING  # same steps, masks differ by design
    assert "differs by design" in claims.PAIRING
    write(results_dir, make_doc("masking", CLEAR))
    r = claims.run({}, claims.Inputs(claim="masking"))
    box = claims.verdict_text(r.comparison, r.m)
    assert claims.PAIRING in box and "the same seed gives both arms the same batches and masks" not in box


def test_each_comparison_shows_its_plan_history_and_counts_its_looks(results_dir):
    """The plan's versions (app/experiments/plans.py) beside every comparison: seeds 3 → 5 → 10, the looks (two of
    masking's three recorded runs from a dirty tree), the version the results followed; a run the history does not
    list yet is one more look."""
    write(results_dir, results.read(results.BUNDLED / "masking.json"))
    c = claims.run({}, claims.Inputs(claim="masking", compare=2)).comparison
    assert (c.key, c.looks, c.dirty_looks) == ("span_vs_token", 3, 2)
    assert [h["seeds"] for h in c.plan] == [3, 3, 5, 10, 10] and c.plan[2]["changed"] == ["seeds"]
    text = claims.looks_text(c)
    assert "Looked at 3 times" in text and "2 of them from a tree with uncommitted changes" in text
    assert "Seeds 3 → 5 → 10" in text and "plan version 4 of 2026-11-26, fixed after the data" in text
    rows = claims.history_rows(c)
    assert [r["version"] for r in rows] == [1, 2, 3, 4, 5] and rows[0]["changed"] == "first"
    assert rows[0]["fixed"].startswith("not written down")

    write(results_dir, make_doc("distillation"))  # a run the history has not recorded: one look more
    c = claims.run({}, claims.Inputs(claim="distillation", compare=0)).comparison
    assert c.looks == 6 + 1 and "metric valid_loss → valid_top1" in claims.looks_text(c)
