"""The papers' claims, replayed (app/experiments/): every experiment runs end to end in --quick mode on a
small synthetic corpus and writes a valid JSON; the arms of an experiment differ only in their one
recipe change; the verdict rule on synthetic numbers and curves; FLOP accounting against torch's own
counter; the live run; the NSP/SOP checkpoints. No download, no real corpus needed."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from app.experiments import EXPERIMENTS, claims, plans, results, verdict

NAMES = ["Lily", "Tom", "Ben", "Mia", "Sam", "Max", "Anna", "Tim", "Sue", "Jack"]
ANIMALS = ["dog", "cat", "bird", "frog", "bunny", "duck", "fish", "bear"]
THINGS = ["ball", "box", "kite", "hat", "cake", "toy", "book", "tree", "boat", "flower"]
PLACES = ["park", "garden", "house", "forest", "river", "school", "beach", "yard"]
ADJS = ["red", "big", "small", "happy", "shiny", "soft", "little", "blue", "green", "sad"]
VERBS = ["play", "jump", "run", "look", "sing", "dance", "swim", "help"]


def story(rng: random.Random) -> str:
    n, a, t, p = rng.choice(NAMES), rng.choice(ANIMALS), rng.choice(THINGS), rng.choice(PLACES)
    adj, v = rng.choice(ADJS), rng.choice(VERBS)
    lines = [
        f"Once upon a time, there was a {adj} {a} named {n}.",
        f"{n} liked to {v} in the {p} every day.",
        f"One day, {n} found a {rng.choice(ADJS)} {t} near the {rng.choice(PLACES)}.",
        f"The {t} was very {rng.choice(ADJS)} and {n} was {rng.choice(['happy', 'surprised', 'curious'])}.",
        f"{n} wanted to show the {t} to a friend called {rng.choice(NAMES)}.",
        f"They went to {v} together and had a lot of fun.",
        f"At the end of the day, {n} said thank you and went home to sleep.",
    ]
    return " ".join(lines[: rng.randint(5, 7)])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    rng = random.Random(0)
    (folder / "tinystories_train.txt").write_text("\n\n".join(story(rng) for _ in range(600)) + "\n", encoding="utf-8")
    (folder / "tinystories_valid.txt").write_text("\n\n".join(story(rng) for _ in range(150)) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("work")


@pytest.fixture(scope="module")
def quick_runs(corpus, work, tmp_path_factory):
    """Every experiment in --quick mode, 1 seed (run once for the module): name -> JSON path."""
    from app.experiments import runner

    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("out")
    return {
        name: runner.run_experiment(
            name,
            seeds=1,
            quick=True,
            corpus=corpus,
            work=work,
            out=out,
            command=f"python -m app.experiments run {name} --quick",
            allow_dirty=True,
        )
        for name in EXPERIMENTS
    }


def quick_context(name: str, corpus: Path, work: Path):
    from app.experiments import runner

    module = EXPERIMENTS[name].load()
    ctx = runner.context(name, module.QUICK, "cpu", corpus, work)
    if hasattr(module, "prepare"):
        module.prepare(ctx)
    return module, ctx


# ----------------------------------------------------------------------------- the registry


def test_every_experiment_names_its_claim_and_the_papers_numbers():
    for name, e in EXPERIMENTS.items():
        module = e.load()
        assert module.__doc__ and "Table" in module.__doc__, name
        arm_names = {a.name for a in module.arms(module.FULL)}
        assert set(e.live_pair) <= arm_names, name
        assert e.claim.comparisons, name
        for c in e.claim.comparisons:
            assert {c.better, c.worse} <= arm_names, (name, c.key)
            assert c.metric in e.claim.metrics, (name, c.key)
            assert c.source, (name, c.key)
        d = e.claim.as_dict()
        json.dumps(d)  # plain data the page can show
        assert all("higher_is_better" in c for c in d["comparisons"])


def test_full_budgets_use_three_seeds_tiny_models_and_the_real_corpus_defaults():
    from app.experiments import runner

    for name, e in EXPERIMENTS.items():
        module = e.load()
        b = module.FULL
        assert b.data == runner.DataSpec() and b.data.seq_len == 64, name
        assert 64 <= b.shape.hidden_size <= 128 and b.shape.num_hidden_layers <= 4, name
        assert 300 <= b.steps <= 5000, name
        assert module.QUICK.steps <= 10, name


# ----------------------------------------------------------------------------- quick runs end to end


@pytest.mark.slow  # trains
@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_quick_run_writes_a_valid_json(quick_runs, name):
    doc = results.read(quick_runs[name])
    assert results.validate(doc) == []
    assert doc["experiment"] == name and doc["quick"] is True
    assert doc["meta"]["command"].endswith("--quick") and doc["meta"]["device"].startswith("cpu")
    assert doc["plan"]["version"] == plans.current(name).version  # the plan it followed, recorded with the results
    assert all(r["git"]["revision"] == doc["meta"]["git"]["revision"] for a in doc["arms"].values() for r in a["seeds"])
    assert "revision" in doc["meta"]["git"]
    module = EXPERIMENTS[name].load()
    assert list(doc["arms"]) == [a.name for a in module.arms(module.QUICK)]
    for arm in doc["arms"].values():
        assert arm["params"] > 0 and arm["flops_per_step"] > 0
        (run,) = arm["seeds"]
        c = run["curves"]
        assert c["eval_step"][0] == 0 and c["eval_step"][-1] == run["steps"]
        assert c["eval_flops"] == [s * arm["flops_per_step"] for s in c["eval_step"]]
        for metric in doc["claim"]["metrics"]:
            assert metric in run["final"] or metric == "params"
    # one seed of a handful of steps: every verdict is there, and none is made — too few seeds to know the spread,
    # or an arm that did not learn its task in those steps (health before verdict)
    assert len(doc["verdicts"]) == len(doc["claim"]["comparisons"])
    for v in doc["verdicts"]:
        assert v["verdict"] in (verdict.TOO_SMALL, verdict.NO_VERDICT) and not v["enough_seeds"], v
        assert not v["holm_pass"], v
    assert all(v["label"].startswith(f"{verdict.NO_VERDICT}: {v['health']}") for v in doc["verdicts"] if v["health"])


@pytest.mark.slow  # trains
def test_a_second_run_resumes_from_the_finished_results(quick_runs, corpus, work, tmp_path, monkeypatch):
    from app.experiments import runner

    before = results.read(quick_runs["sharing"])
    monkeypatch.setattr(runner.common, "train_loop", lambda *a, **k: pytest.fail("a finished run was trained again"))
    path = runner.run_experiment(
        "sharing", seeds=1, quick=True, corpus=corpus, work=work, out=tmp_path, allow_dirty=True
    )
    after = results.read(path)
    assert after["arms"]["all"]["seeds"][0]["final"] == before["arms"]["all"]["seeds"][0]["final"]


@pytest.mark.slow  # trains
def test_the_command_line_lists_and_runs(corpus, work, tmp_path, capsys):
    from app.experiments.__main__ import main

    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in EXPERIMENTS)
    assert (
        main(
            [
                "run",
                "sharing",
                "--quick",
                "--allow-dirty",
                "--corpus",
                str(corpus),
                "--work",
                str(work),
                "--out",
                str(tmp_path),
                "--arms",
                "none",
                "all",
            ]
        )
        == 0
    )
    doc = results.read(tmp_path / "sharing.json")
    assert list(doc["arms"]) == ["none", "all"]
    assert doc["meta"]["command"].startswith("python -m app.experiments run sharing --quick")
    assert [v["key"] for v in doc["verdicts"]] == ["sharing_costs_quality"]  # only comparisons whose arms ran


# ----------------------------------------------------------------------------- arms differ only in the one change


def initial_weights(model) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_masking_arms_share_model_data_and_loop(corpus, work):
    from app.experiments import masking

    module, ctx = quick_context("masking", corpus, work)
    setups = {a.name: module.setup(a, 0, ctx) for a in module.arms(ctx.budget)}
    first = setups["dynamic"]
    for name, s in setups.items():
        assert s.cfg == first.cfg, name
        assert s.model.config.to_dict() == first.model.config.to_dict(), name
        assert same_weights(initial_weights(s.model), initial_weights(first.model)), name
        assert s.flops == first.flops and s.details["train_sequences"] == first.details["train_sequences"], name
    assert masking.training_sample(ctx) is masking.training_sample(ctx)  # one sample for every arm
    changes = {a.name: a.change for a in module.arms(ctx.budget)}
    assert changes["static1"]["copies"] == 1 and changes["static10"]["copies"] == ctx.budget.duplication
    assert {changes[n]["unit"] for n in ("dynamic", "word", "span")} == {"token", "word", "span"}
    for name in ("dynamic", "word", "span"):  # about 15% of the tokens are targets whatever the unit
        assert 0.08 < setups[name].details["target_rate"] < 0.25, (name, setups[name].details["target_rate"])
    # the same training steps draw the same rows: the original tokens at the targets agree
    gen = lambda: torch.Generator().manual_seed(5)  # noqa: E731
    losses = {n: float(setups[n].step_loss(0, gen())[0].detach()) for n in ("static1", "static10", "dynamic")}
    assert all(torch.isfinite(torch.tensor(v)) for v in losses.values())


def test_sentence_arms_see_the_same_pairs_but_for_the_negatives(corpus, work):
    from app.experiments import sentence

    module, ctx = quick_context("sentence", corpus, work)
    sets = sentence.pair_sets(ctx)["train"]
    none, nsp, sop = sets["none"], sets["nsp"], sets["sop"]
    assert (none.labels == 0).all()
    assert torch.equal(nsp.labels.bool() | sop.labels.bool(), sop.labels.bool())  # NSP negatives ⊆ the same draw
    keep = sop.labels == 0
    assert torch.equal(sop.seqs.input_ids[keep], none.seqs.input_ids[keep])  # positives: identical inputs
    keep = nsp.labels == 0
    assert torch.equal(nsp.seqs.input_ids[keep], none.seqs.input_ids[keep])
    assert 0.3 < float(sop.labels.float().mean()) < 0.7
    # a swapped pair holds the same tokens as the in-order one
    i = int(sop.labels.nonzero()[0])
    assert sorted(sop.seqs.input_ids[i].tolist()) == sorted(none.seqs.input_ids[i].tolist())
    assert not torch.equal(sop.seqs.input_ids[i], none.seqs.input_ids[i])
    setups = {a.name: module.setup(a, 0, ctx) for a in module.arms(ctx.budget)}
    for s in setups.values():
        assert s.cfg == setups["none"].cfg
        assert same_weights(initial_weights(s.model), initial_weights(setups["none"].model))


def test_electra_arms_share_the_encoder_and_spend_the_same_flops(corpus, work):
    from app.experiments import electra

    module, ctx = quick_context("electra", corpus, work)
    setups = {a.name: module.setup(a, 0, ctx) for a in module.arms(ctx.budget)}
    gcfg, dcfg = electra.configs(ctx)
    mlm_cfg = setups["mlm"].model.config.to_dict()
    disc_cfg = setups["electra"].model["discriminator"].config.to_dict()
    for k in (
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "embedding_size",
        "vocab_size",
    ):
        assert mlm_cfg[k] == disc_cfg[k], k
    assert gcfg.hidden_size == dcfg.hidden_size // 4 and gcfg.num_hidden_layers == dcfg.num_hidden_layers
    gen, disc = setups["electra"].model["generator"], setups["electra"].model["discriminator"]
    assert gen.electra.embeddings is disc.electra.embeddings  # shared embeddings
    budget = setups["mlm"].cfg.steps * setups["mlm"].flops_per_step
    for name, s in setups.items():  # equal compute, to within one step
        assert abs(s.cfg.steps * s.flops_per_step - budget) <= s.flops_per_step, name
    assert setups["electra"].cfg.steps < setups["mlm"].cfg.steps
    assert setups["electra"].flops == setups["electra15"].flops and setups["electra"].cfg == setups["electra15"].cfg


def test_electra_warm_start_is_shared_by_every_arm_and_counted_in_each(corpus, work, monkeypatch):
    from app.experiments import electra, runner

    budget = replace(electra.QUICK, warm_start=4)
    ctx = runner.context("electra", budget, "cpu", corpus, work)
    setups = {a.name: electra.setup(a, 0, ctx) for a in electra.arms(budget)}
    warm = {k: v for k, v in setups["mlm"].model.electra.state_dict().items()}
    for name in ("electra", "electra15"):
        disc = setups[name].model["discriminator"].electra.state_dict()
        assert all(torch.equal(disc[k], warm[k]) for k in warm), name  # the same starting encoder and embeddings
        assert (
            setups[name].model["generator"].electra.embeddings is setups[name].model["discriminator"].electra.embeddings
        )
    flops_warm = 4 * sum(electra.step_flops(ctx, "mlm").values())
    for s in setups.values():
        w = s.details["warm_start"]
        assert w["steps"] == 4 and w["flops"] == pytest.approx(flops_warm)
        assert w["total_flops"] == pytest.approx(flops_warm + s.details["flop_budget"])
    # trained once per seed: a second context reads it from disk
    monkeypatch.setattr(electra.common, "train_loop", lambda *a, **k: pytest.fail("the warm start was trained again"))
    again = runner.context("electra", budget, "cpu", corpus, work)
    assert torch.equal(
        electra.warm_start(0, again)["state"]["electra.embeddings.word_embeddings.weight"],
        warm["embeddings.word_embeddings.weight"],
    )


def test_identity_auc_reads_only_the_token():
    from app.experiments import electra

    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, 50, (4000,), generator=g)
    apart = (tokens >= 40).float()  # replaced exactly when the id is 40 or above: the identity tells all
    assert electra.identity_auc(tokens, apart, 50) == pytest.approx(1.0)
    noise = (torch.rand(4000, generator=g) < 0.15).float()  # replaced at random: the identity tells nothing
    assert abs(electra.identity_auc(tokens, noise, 50) - 0.5) < 0.05


def test_electra_samples_its_fakes_at_the_budgets_temperature(corpus, work, monkeypatch):
    from app.experiments import electra

    module, ctx = quick_context("electra", corpus, work)
    assert electra.FULL.generator_temperature == ctx.budget.generator_temperature == 2.0
    seen = []
    real = electra.sample_replacements
    monkeypatch.setattr(electra, "sample_replacements", lambda *a: seen.append(a[-1]) or real(*a))
    s = module.setup(next(a for a in module.arms(ctx.budget) if a.name == "electra"), 0, ctx)
    s.step_loss(0, torch.Generator().manual_seed(0))
    s.model.eval()
    with torch.no_grad():
        final = s.final()
    assert seen and set(seen) == {2.0}  # training and the held-out detection alike
    assert 0.0 <= final["rtd_auc_identity"] <= 1.0 and 0.0 <= final["rtd_auc"] <= 1.0


def test_sharing_arms_differ_only_in_what_is_shared_and_count_like_app_params(corpus, work):
    from app.lessons import albert_params as params

    module, ctx = quick_context("sharing", corpus, work)
    b = ctx.budget
    for arm in module.arms(b):
        s = module.setup(arm, 0, ctx)
        model = s.model
        c = model.config
        assert (c.hidden_size, c.num_hidden_layers, c.intermediate_size) == (
            b.shape.hidden_size,
            b.shape.num_hidden_layers,
            b.shape.intermediate_size,
        )
        assert c.embedding_size == arm.change["embedding_size"]
        arch = params.Arch(
            vocab_size=c.vocab_size,
            hidden_size=c.hidden_size,
            embedding_size=c.embedding_size,
            num_hidden_layers=c.num_hidden_layers,
            num_attention_heads=c.num_attention_heads,
            intermediate_size=c.intermediate_size,
            sharing=arm.change["sharing"],
            factorized=True,
            max_position_embeddings=c.max_position_embeddings,
            type_vocab_size=c.type_vocab_size,
            pooler=False,
        )
        assert s.params == params.breakdown(arch).total_with_head, arm.name
        layers = [g.albert_layers[0] for g in model.albert.encoder.albert_layer_groups]
        if arm.change["sharing"] == "attention":
            assert all(layer.attention is layers[0].attention for layer in layers)
            assert layers[1].ffn is not layers[0].ffn
        if arm.change["sharing"] == "ffn":
            assert all(layer.ffn is layers[0].ffn and layer.ffn_output is layers[0].ffn_output for layer in layers)
            assert layers[1].attention is not layers[0].attention
        assert s.cfg == module.setup(module.arms(b)[0], 0, ctx).cfg


def test_shared_modules_get_one_update_from_every_layer_that_uses_them(corpus, work):
    module, ctx = quick_context("sharing", corpus, work)
    arm = next(a for a in module.arms(ctx.budget) if a.name == "attention")
    s = module.setup(arm, 0, ctx)
    loss, _ = s.step_loss(0, torch.Generator().manual_seed(0))
    loss.backward()
    q = s.model.albert.encoder.albert_layer_groups[0].albert_layers[0].attention.query.weight
    assert q.grad is not None and q.grad.abs().sum() > 0
    names = [n for n, _ in s.model.named_parameters()]
    assert sum("attention.query.weight" in n for n in names) == 1  # listed (and optimised) once


@pytest.mark.slow  # trains
def test_distillation_arms_share_the_student_but_the_loss(corpus, work):
    module, ctx = quick_context("distillation", corpus, work)
    setups = {a.name: module.setup(a, 0, ctx) for a in module.arms(ctx.budget)}
    start = initial_weights(setups["hard"].model)
    for name in ("soft_t1", "soft_t2", "soft_t4", "soft_t8"):
        assert same_weights(initial_weights(setups[name].model), start), name
        assert setups[name].cfg == setups["hard"].cfg
    assert not same_weights(initial_weights(setups["scratch"].model), start)
    assert setups["scratch"].model.config.to_dict() == setups["hard"].model.config.to_dict()
    assert setups["hard"].model.config.n_layers * 2 == ctx.budget.teacher_layers
    temps = [
        a.change["temperature"]
        for a in module.arms(ctx.budget)
        if a.name.startswith("soft_t") and "random" not in a.name
    ]
    assert temps == [1.0, 2.0, 4.0, 8.0]
    # DistilBERT's initialisation ablation changes one thing against soft_t2 (the start) and one against
    # scratch (the loss): it starts from scratch's very weights and trains on soft_t2's loss
    assert same_weights(initial_weights(setups["soft_t2_random"].model), initial_weights(setups["scratch"].model))
    arm = {a.name: a for a in module.arms(ctx.budget)}
    assert {k: v for k, v in arm["soft_t2_random"].change.items() if k != "init"} == {
        k: v for k, v in arm["soft_t2"].change.items() if k != "init"
    }
    # the soft arm pays for the teacher's forward; the hard arm does not
    assert "teacher encoder" in setups["soft_t2"].flops and "teacher encoder" not in setups["hard"].flops


# ----------------------------------------------------------------------------- the verdict rule


def test_verdict_clear_win_reproduces():
    v = verdict.decide({0: 0.80, 1: 0.81, 2: 0.79}, {0: 0.70, 1: 0.705, 2: 0.69})
    assert v.verdict == verdict.REPRODUCES and v.enough_seeds and v.design == "paired"
    assert v.difference == pytest.approx(0.305 / 3) and v.df == 2
    assert v.ci_high - v.difference == pytest.approx(verdict.t_critical(2) * v.se)


def test_verdict_overlap_within_the_spread_is_too_small_to_tell():
    v = verdict.decide({0: 0.75, 1: 0.80, 2: 0.70}, {0: 0.79, 1: 0.69, 2: 0.74})
    assert v.verdict == verdict.TOO_SMALL and v.ci_low < 0 < v.ci_high


def test_verdict_reversal_and_direction_of_a_loss():
    assert verdict.decide([0.60, 0.61, 0.59], [0.70, 0.71, 0.69]).verdict == verdict.REVERSES
    # lower is better: a smaller loss for the claimed arm reproduces
    v = verdict.decide([2.0, 2.1, 1.9], [2.5, 2.6, 2.4], higher_is_better=False)
    assert v.verdict == verdict.REPRODUCES and v.difference == pytest.approx(0.5)
    assert verdict.decide([2.5, 2.6, 2.4], [2.0, 2.1, 1.9], higher_is_better=False).verdict == verdict.REVERSES


def synthetic_doc(finals_by_arm: dict[str, list[float]], metric="valid_loss", higher=False) -> dict:
    """A results document with made-up curves: each seed's curve falls linearly to its final value."""
    comp = claims.Comparison("a_beats_b", "A beats B", "a", "b", metric, "made up")
    claim = claims.Claim("t", "c", ("p",), {metric: claims.Metric("m", higher)}, (comp,))
    arms = {}
    for arm, finals in finals_by_arm.items():
        seeds = []
        for i, f in enumerate(finals):
            steps = [0, 10, 20]
            vals = [5.0, (5.0 + f) / 2, f]
            seeds.append(
                {
                    "seed": i,
                    "final": {metric: f},
                    "steps": 20,
                    "curves": {
                        "step": [],
                        "train_loss": [],
                        "flops": [],
                        "eval_step": steps,
                        "eval_flops": [s * 100.0 for s in steps],
                        metric: vals,
                    },
                }
            )
        arms[arm] = {"label": arm, "change": {}, "params": 10, "flops_per_step": 100.0, "seeds": seeds}
    doc = {"schema": 1, "experiment": "x", "claim": claim.as_dict(), "meta": {}, "budget": {}, "arms": arms}
    doc["verdicts"] = [dict(key=k, **v) for k, v in results.verdicts(doc, others={}).items()]
    return doc


def test_verdicts_and_bands_from_synthetic_curves():
    doc = synthetic_doc({"a": [2.0, 2.1, 1.9], "b": [3.0, 3.1, 2.9]})
    assert doc["verdicts"][0]["verdict"] == verdict.REPRODUCES
    band = results.band(doc, "a", "valid_loss", x="flops")
    assert band["x"] == [0.0, 1000.0, 2000.0] and band["n"] == 3
    assert band["mean"][-1] == pytest.approx(2.0) and band["sd"][-1] == pytest.approx(0.1)
    assert band["lo"][-1] == pytest.approx(1.9) and band["hi"][-1] == pytest.approx(2.1)
    assert results.band(doc, "a", "valid_loss")["x"] == [0, 10, 20]
    s = results.summary(doc, "valid_loss")
    assert s["b"]["mean"] == pytest.approx(3.0) and s["b"]["n"] == 3
    overlap = synthetic_doc({"a": [2.0, 2.5, 1.5], "b": [2.6, 1.6, 2.1]})  # the seeds do not move the arms together
    assert overlap["verdicts"][0]["verdict"] == verdict.TOO_SMALL
    reverse = synthetic_doc({"a": [3.0, 3.1, 2.9], "b": [2.0, 2.1, 1.9]})
    assert reverse["verdicts"][0]["verdict"] == verdict.REVERSES
    few = synthetic_doc({"a": [2.0], "b": [3.0, 3.1, 2.9]})
    assert few["verdicts"][0]["verdict"] == verdict.TOO_SMALL and not few["verdicts"][0]["enough_seeds"]


def test_results_json_has_no_nan(tmp_path):
    doc = synthetic_doc({"a": [2.0, 2.1], "b": [3.0, 3.1]})
    doc["arms"]["a"]["seeds"][0]["final"]["extra"] = float("nan")
    results.write(doc, tmp_path / "x.json")
    text = (tmp_path / "x.json").read_text()
    assert "NaN" not in text and json.loads(text)["arms"]["a"]["seeds"][0]["final"]["extra"] is None


# ----------------------------------------------------------------------------- FLOPs


def counted_flops(fn) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fc:
        fn()
    return fc.get_total_flops()


def test_masked_lm_flops_match_torchs_counter():
    from transformers import BertConfig, BertForMaskedLM

    from app.training import bert, flops

    torch.manual_seed(0)
    model = BertForMaskedLM(
        BertConfig(
            vocab_size=600,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=128,
        )
    )
    ids = torch.randint(5, 600, (8, 32))
    att = torch.ones(8, 32, dtype=torch.long)
    targets = torch.rand(8, 32, generator=torch.Generator().manual_seed(1)) < 0.15

    def step():
        torch.nn.functional.cross_entropy(bert.masked_lm_logits(model, ids, att, targets), ids[targets]).backward()

    expected = sum(flops.mlm_step(model.config, 8, 32, int(targets.sum())).values())
    assert counted_flops(step) == pytest.approx(expected, rel=0.02)


def test_replaced_token_detection_counts_the_generator_and_the_discriminator(corpus, work):
    from app.experiments import electra
    from app.training import flops

    module, ctx = quick_context("electra", corpus, work)
    gcfg, dcfg = electra.configs(ctx)
    b = ctx.budget
    parts = flops.rtd_step(gcfg, dcfg, b.batch_size, b.data.seq_len, 10.0)
    gen_alone = flops.mlm_step(gcfg, b.batch_size, b.data.seq_len, 10.0)
    assert parts["generator encoder"] == gen_alone["encoder"] and parts["generator head"] == gen_alone["mlm head"]
    disc_alone = parts["discriminator encoder"] + parts["discriminator head"]
    assert sum(parts.values()) == pytest.approx(sum(gen_alone.values()) + disc_alone)
    assert sum(parts.values()) > flops.mlm_step(dcfg, b.batch_size, b.data.seq_len, 10.0)["encoder"]

    # and the formula is what torch counts for a real ELECTRA step of the experiment
    arm = next(a for a in module.arms(b) if a.name == "electra")
    s = module.setup(arm, 0, ctx)
    gen_model, disc = s.model["generator"], s.model["discriminator"]
    train = ctx.data.train.subset(slice(0, b.batch_size))
    g = torch.Generator().manual_seed(3)
    n_targets = {}

    def step():
        g_loss, corrupted, replaced, targets = electra.corrupt(
            gen_model,
            train.input_ids,
            train.attention_mask,
            train.maskable,
            ctx.data.tokenizer,
            ctx.data.random_ids(),
            g,
        )
        n_targets["n"] = int(targets.sum())
        d = disc(input_ids=corrupted, attention_mask=train.attention_mask).logits
        (g_loss + torch.nn.functional.binary_cross_entropy_with_logits(d, replaced)).backward()

    counted = counted_flops(step)
    expected = sum(flops.rtd_step(gcfg, dcfg, b.batch_size, b.data.seq_len, n_targets["n"]).values())
    assert counted == pytest.approx(expected, rel=0.03)


def test_distillation_flops_add_the_teachers_forward():
    from transformers import BertConfig, DistilBertConfig

    from app.training import flops

    teacher = BertConfig(
        vocab_size=100, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32
    )
    student = DistilBertConfig(vocab_size=100, dim=16, n_layers=2, n_heads=2, hidden_dim=32)
    soft = flops.distillation_step(student, teacher, 4, 8, 32, teacher=True)
    hard = flops.distillation_step(student, teacher, 4, 8, 32, teacher=False)
    assert soft["teacher encoder"] == 4 * flops.encoder_flops(teacher, 8)  # forward only: 1×, not 3×
    assert sum(soft.values()) - sum(hard.values()) == pytest.approx(soft["teacher encoder"] + soft["teacher head"])
    assert soft["student encoder"] == 3 * 4 * flops.encoder_flops(student, 8)


# ----------------------------------------------------------------------------- building blocks


def test_word_index_and_unit_masking_keep_whole_words():
    from app.masking import MaskingConfig
    from app.training import units

    ids = torch.tensor([[2, 10, 11, 12, 13, 14, 3, 0]])  # [CLS] a ##b c ##d ##e [SEP] [PAD]
    maskable = torch.tensor([[False, True, True, True, True, True, False, False]])
    starts = torch.ones(20, dtype=torch.bool)
    starts[[11, 13, 14]] = False
    words = units.word_index(ids, maskable, starts)
    assert words.tolist() == [[-1, 0, 0, 1, 1, 1, -1, -1]]
    cfg = MaskingConfig(mlm_probability=0.5)
    for unit in ("word", "span"):
        for seed in range(20):
            _, labels = units.unit_batch(
                unit, ids, maskable, words, 4, torch.tensor([7]), cfg, torch.Generator().manual_seed(seed)
            )
            hit = (labels != -100)[0]
            assert not hit[[0, 6, 7]].any()
            assert bool(hit[1]) == bool(hit[2]) and bool(hit[3]) == bool(hit[4]) == bool(hit[5]), (unit, seed)


def test_masked_lm_eval_is_deterministic_and_scores_a_perfect_model():
    from app.training import data, units

    ids = torch.randint(5, 50, (6, 12), generator=torch.Generator().manual_seed(0))
    seqs = data.Sequences(ids, torch.ones_like(ids), torch.ones_like(ids, dtype=torch.bool))

    def oracle(corrupted, att, targets, types):  # knows the answer: one-hot logits on the original token
        return torch.nn.functional.one_hot(ids[targets], 60).float() * 10

    a = units.masked_lm_eval(oracle, seqs, None, 4)
    b = units.masked_lm_eval(oracle, seqs, None, 4)
    assert a == b and a["top1"] == 1.0 and a["n_targets"] > 0 and a["loss"] < 0.01


def test_logistic_probe_separates_what_is_separable_and_not_noise():
    from app.training import probes

    g = torch.Generator().manual_seed(0)
    x = torch.randn(400, 8, generator=g)
    y = (x[:, 0] + 0.1 * x[:, 1] > 0).long()
    r = probes.logistic_probe(x[:200], y[:200], x[200:], y[200:])
    assert r["accuracy"] > 0.9
    noise = torch.randint(0, 2, (400,), generator=g)
    assert 0.35 < probes.logistic_probe(x[:200], noise[:200], x[200:], noise[200:])["accuracy"] < 0.65


def test_acceptability_pairs_swap_two_adjacent_words():
    from app.training import probes

    assert probes.swap_adjacent("The dog ran to the park.", 0.0) == "dog The ran to the park."
    assert probes.swap_adjacent("Hi.", 0.5) is None
    assert probes.swap_adjacent("the the park.", 0.0) is None  # same words, nothing changes


# ----------------------------------------------------------------------------- the NSP / SOP stand-ins


@pytest.mark.slow  # trains
def test_sentence_run_keeps_nsp_and_sop_checkpoints_in_berts_conventions(quick_runs, corpus, work, tmp_path):
    from transformers import AutoTokenizer, BertForPreTraining

    from app.experiments import sentence

    written = sentence.export_checkpoints(tmp_path, quick=True, corpus=corpus, work=work)
    assert [p.name for p in written] == ["bert-nsp-tinystories", "bert-sop-tinystories"]
    for folder in written:
        model = BertForPreTraining.from_pretrained(folder).eval()
        tok = AutoTokenizer.from_pretrained(folder)
        assert type(tok).__name__ == "BertTokenizer"
        assert tok.convert_ids_to_tokens([0, 1, 2, 3, 4]) == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        enc = tok("lily found a ball.", "she was happy.", return_tensors="pt")
        assert enc["token_type_ids"][0, -1] == 1
        with torch.no_grad():
            out = model(**enc)
        assert out.seq_relationship_logits.shape == (1, 2) and out.prediction_logits.shape[-1] == len(tok)
        assert json.loads((folder / "config.json").read_text())["architectures"] == ["BertForPreTraining"]
        assert "seq_relationship" in (folder / "README.md").read_text()


# ----------------------------------------------------------------------------- the live run


@pytest.fixture
def quick_live(monkeypatch):
    """The live run with the quick budget (the page's uses LIVE: full-size models)."""
    from app.experiments import masking

    monkeypatch.setattr(masking, "LIVE", replace(masking.QUICK, steps=40, eval_every=5))
    return masking


@pytest.mark.slow  # trains
def test_live_run_trains_both_arms_reports_progress_and_stops_in_time(quick_live, corpus, work):
    from app.experiments import live

    points = []
    r = live.live_run(
        "masking", seconds=20, progress=lambda step, m: points.append((step, m)), corpus=corpus, work=work, turn_s=0.5
    )
    assert r.arms == ("dynamic", "static1") and not r.cancelled  # in time: it finished (below) within the 20 s
    assert {m["arm"] for _, m in points} == {"dynamic", "static1"}
    assert points[0][0] == 0 and "valid_loss" in points[0][1] and 0 <= points[-1][1]["fraction"] <= 1
    assert r.finished and r.steps == {"dynamic": 40, "static1": 40}
    assert r.points["dynamic"]["step"][0] == 0 and r.points["dynamic"]["step"][-1] == 40
    assert not list(Path(work).glob("live-*"))  # its scratch state is gone


@pytest.mark.slow  # trains
def test_live_run_is_cancellable_and_one_at_a_time(quick_live, corpus, work):
    from app.experiments import live

    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] > 3

    r = live.live_run("masking", seconds=20, should_stop=stop, corpus=corpus, work=work)
    assert r.cancelled and not r.finished and sum(r.steps.values()) <= 4
    with live.LOCK:
        with pytest.raises(live.Busy):
            live.live_run("masking", seconds=1, corpus=corpus, work=work)


def test_live_run_says_why_it_cannot_start(tmp_path):
    from app.experiments import live

    with pytest.raises(live.Unavailable, match="corpus"):
        live.live_run("masking", seconds=1, corpus=tmp_path / "missing", work=tmp_path)


def test_benchmarks_section_lists_each_bundled_runs_own_cost(tmp_path):
    from app.experiments import timing

    meta = {
        "command": "python -m app.experiments run masking",
        "device": "cpu (2 cores)",
        "jobs": 2,
        "finished": "2026-11-23T14:00:00Z",
        "wall_seconds": 1800.0,
    }
    arms = {"static1": {"seeds": [{"wall_seconds": 300.0}] * 3}, "dynamic": {"seeds": [{"wall_seconds": 400.0}] * 3}}
    (tmp_path / "masking.json").write_text(json.dumps({"experiment": "masking", "meta": meta, "arms": arms}))
    (tmp_path / "smoke.json").write_text(json.dumps({"experiment": "smoke", "quick": True, "meta": meta, "arms": arms}))
    (tmp_path / "broken.json").write_text("{not json")
    runs = timing.bundled_runs(tmp_path)
    assert [(r["experiment"], r["arms"], r["seeds"], r["wall_s"], r["runs_s"]) for r in runs] == [
        ("masking", 2, 3, 1800.0, 2100.0)
    ]  # the last command's wall time; every run's own, summed
    text = timing.section({}, runs)
    assert "| masking | 2 × 3 | 30.0 min | 35.0 min | 2 | cpu (2 cores) |" in text
    assert "`python -m app.experiments run masking`" in text


def test_a_partial_measurement_keeps_the_other_experiments_rows(tmp_path):
    """``time distillation --write-benchmarks`` (or a store that lost the others) rewrites its own row and keeps the
    others as they were, with the total still over all of them."""
    from app.experiments import timing

    arm = {"steps": 1000, "step_ms": 80.0, "evaluations": 5, "eval_s": 1.0, "final_s": 3.0}
    old = {
        name: {
            "arms": {"a": arm},
            "seeds": 3,
            "projected_s": 600.0,
            "prepare_s": 0,
            "reference_ms_before": 75,
            "reference_ms_after": 77,
            "measured": "2026-11-23 10:40 UTC",
        }
        for name in ("masking", "distillation")
    }
    page = tmp_path / "BENCHMARKS.md"
    timing.write_section(page, timing.section(old))
    kept = timing.kept_rows(page.read_text())
    assert set(kept) == {"masking", "distillation"} and kept["masking"][1] == pytest.approx(600.0)
    new = {"distillation": {**old["distillation"], "projected_s": 1800.0, "measured": "2026-11-26 08:00 UTC"}}
    timing.write_section(page, timing.section(new, None, kept))
    text = page.read_text()
    assert kept["masking"][0] in text  # masking's row, as it was
    assert "| distillation | 1 × 3 |" in text and "30.0 min" in text and "2026-11-26 08:00 UTC" in text
    assert text.count("| distillation |") == 1 and "All of them: 40 min projected" in text
