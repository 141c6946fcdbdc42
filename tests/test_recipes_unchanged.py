"""The training recipes (app/training) train the bundled checkpoints, so a refactor of them must not change what they
compute: each recipe runs here for 3 steps, seeded, on a tiny corpus and batch, with the bundled tokenizers (a
WordPiece or BPE vocabulary trained again is not reproducible across machines), and its per-step training losses and
final held-out numbers are compared with the ones the recipes gave before they were rebuilt on one base recipe
(app/training/recipe.py).

EXPECTED was produced by this file's ``_measure`` on the tree at commit 9aa90a6 (before the refactor), CPU, float32,
torch 2.13.0: ``python -m tests.test_recipes_unchanged`` prints it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.slow

MODELS = Path(__file__).resolve().parents[1] / "assets" / "models"
STEPS = 3

NAMES = ["Lily", "Tom", "Max", "Sue", "Ben", "Mia", "Sam", "Anna"]
THINGS = ["red ball", "big box", "small cat", "blue kite", "old book", "green hat"]
PLACES = ["park", "garden", "house", "forest", "school", "beach"]


def _story(i: int) -> str:
    n, m = NAMES[i % len(NAMES)], NAMES[(3 * i + 1) % len(NAMES)]
    t, p = THINGS[i % len(THINGS)], PLACES[(5 * i + 2) % len(PLACES)]
    return (
        f"Once upon a time, there was a little girl named {n}. She liked to play in the {p}.\n\n"
        f"One day, {n} found a {t} near a tree. She was very happy and showed it to her friend {m}. "
        f"{m} smiled and said, \"Can we play with the {t} together?\"\n\n"
        f"They played all day in the {p}. When the sun went down, {n} and {m} went home. They were tired but happy."
    )


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tinystories_train.txt").write_text("\n\n".join(_story(i) for i in range(48)) + "\n", encoding="utf-8")
    (folder / "tinystories_valid.txt").write_text(
        "\n\n".join(_story(i) for i in range(100, 116)) + "\n", encoding="utf-8"
    )
    return folder


def _seed_tokenizer(work: Path, bundled: str) -> None:
    """The recipe's work folder holds the bundled model's tokenizer, so ``cached_tokenizer`` builds none."""
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(MODELS / bundled).save_pretrained(work / "tokenizer")


def _copy_model(name: str, out: Path) -> None:
    shutil.copytree(MODELS / name, out / name)


def _prepare(recipe: str, out: Path, work: Path) -> dict:
    """Bundled folders and tokenizers a recipe starts from; returns the extra keyword arguments of its ``run``."""
    if recipe in ("bert", "roberta", "deberta", "modernbert", "albert", "xlnet"):
        _seed_tokenizer(work / recipe, recipe)
    if recipe in ("distilbert", "electra", "bert-nsp"):
        _copy_model("bert", out)
    if recipe == "electra":
        from app.training.electra import Shape

        return {
            "shape": Shape(joint_steps=STEPS, generator_steps=STEPS, generator_warmup=1, generator_eval_every=STEPS)
        }
    if recipe == "albert-sop":
        _copy_model("albert", out)
        curves = json.loads((out / "albert" / "curves.json").read_text())
        curves.pop("stage2", None)  # the bundled folder holds stage 2: this copy plays stage 1
        (out / "albert" / "curves.json").write_text(json.dumps(curves))
        from app.training.albert_sop import RECIPE

        return {"recipe": replace(RECIPE, eval_bases=16, final_bases=32)}
    return {}


def _flat(d, prefix=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _flat(v, f"{prefix}{k}.")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield f"{prefix}{k}", float(v)


def _measure(recipe: str, root: Path, monkeypatch) -> dict:
    """Run ``recipe`` for STEPS steps; returns {"loss": {loop name: [loss per step]}, "final": {metric: value}}."""
    import importlib

    from app.training import common

    module = importlib.import_module(f"app.training.{recipe.replace('-', '_')}")
    corpus, out, work = _corpus(root / "corpus"), root / "out", root / "work"
    kwargs = _prepare(recipe, out, work)
    losses: dict[str, list[float]] = {}
    loop = common.train_loop

    def recording_loop(name, model, step_loss, *args, **kw):
        def recorded(step, gen):
            loss, logs = step_loss(step, gen)
            losses.setdefault(name, []).append(round(float(loss.detach()), 6))
            return loss, logs

        return loop(name, model, recorded, *args, **kw)

    monkeypatch.setattr(common, "train_loop", recording_loop)
    if recipe == "distilbert":  # a timing, not a number of the training: fixed so that the card can be written
        monkeypatch.setattr(module, "forward_speedup", lambda *a, **k: {"speedup": 1.0, "encoder_speedup": 1.0})
    if recipe == "bert-nsp":
        monkeypatch.setattr(module, "RECIPE", replace(module.RECIPE, eval_bases=16, final_bases=32))
    cfg = common.LoopConfig(
        steps=STEPS, batch_size=4, seq_len=32, lr=1e-3, warmup=1, eval_every=1000, seed=0, precision="fp32"
    )
    torch.manual_seed(0)
    module.run(corpus, out, work, cfg, **kwargs)
    final = {}
    for folder in WRITES.get(recipe, [recipe]):
        written = json.loads((out / folder / "curves.json").read_text())
        final.update({f"{folder}.{k}": round(v, 6) for k, v in _flat(written.get("final", {}))})
    return {"loss": losses, "final": final}


WRITES = {"electra": ["electra-generator", "electra-discriminator"], "albert-sop": ["albert"]}


RECIPES = [
    "bert",
    "roberta",
    "deberta",
    "modernbert",
    "albert",
    "xlnet",
    "distilbert",
    "electra",
    "bert-nsp",
    "albert-sop",
]

EXPECTED: dict[str, dict] = {  # measured on commit 9aa90a6, before the refactor (see the docstring)
    "bert": {
        "loss": {"bert": [8.487717, 8.086005, 7.844821]},
        "final": {
            "bert.top1": 0.096447,
            "bert.top5": 0.208122,
            "bert.n_targets": 197.0,
            "bert.cloze_top5": 0.058824,
            "bert.cloze_top5_noun": 0.0,
            "bert.cloze_top5_verb": 0.033333,
            "bert.cloze_top5_adj": 0.2,
            "bert.baseline.top1": 0.08046,
            "bert.baseline.top5": 0.252874,
        },
    },
    "roberta": {
        "loss": {"roberta": [8.340025, 8.224087, 8.217999]},
        "final": {
            "roberta.top1": 0.045685,
            "roberta.top5": 0.137056,
            "roberta.n_targets": 197.0,
            "roberta.cloze_top5": 0.0,
            "roberta.cloze_top5_noun": 0.0,
            "roberta.cloze_top5_verb": 0.0,
            "roberta.cloze_top5_adj": 0.0,
            "roberta.baseline.top1": 0.081395,
            "roberta.baseline.top5": 0.255814,
        },
    },
    "deberta": {
        "loss": {"deberta": [8.372434, 8.28257, 8.22073]},
        "final": {
            "deberta.top1": 0.055838,
            "deberta.top5": 0.147208,
            "deberta.n_targets": 197.0,
            "deberta.cloze_top5": 0.0,
            "deberta.cloze_top5_noun": 0.0,
            "deberta.cloze_top5_verb": 0.0,
            "deberta.cloze_top5_adj": 0.0,
            "deberta.baseline.top1": 0.081395,
            "deberta.baseline.top5": 0.255814,
        },
    },
    "modernbert": {
        "loss": {"modernbert": [8.413424, 8.05926, 8.06568]},
        "final": {
            "modernbert.top1": 0.055838,
            "modernbert.top5": 0.172589,
            "modernbert.n_targets": 197.0,
            "modernbert.cloze_top5": 0.009804,
            "modernbert.cloze_top5_noun": 0.0,
            "modernbert.cloze_top5_verb": 0.033333,
            "modernbert.cloze_top5_adj": 0.0,
            "modernbert.baseline.top1": 0.081395,
            "modernbert.baseline.top5": 0.255814,
        },
    },
    "albert": {
        "loss": {"albert": [8.914498, 8.976343, 8.680858]},
        "final": {
            "albert.top1": 0.052083,
            "albert.top5": 0.130208,
            "albert.n_targets": 192.0,
            "albert.sop_accuracy": 0.5625,
            "albert.cloze_top5": 0.058824,
            "albert.cloze_top5_noun": 0.0,
            "albert.cloze_top5_verb": 0.2,
            "albert.cloze_top5_adj": 0.0,
            "albert.baseline.top1": 0.081395,
            "albert.baseline.top5": 0.255814,
        },
    },
    "xlnet": {
        "loss": {"xlnet": [8.283587, 8.227263, 7.991278]},
        "final": {
            "xlnet.top1": 0.018382,
            "xlnet.top5": 0.191176,
            "xlnet.n_targets": 272.0,
            "xlnet.cloze_top5": 0.029412,
            "xlnet.cloze_top5_noun": 0.0,
            "xlnet.cloze_top5_verb": 0.1,
            "xlnet.cloze_top5_adj": 0.0,
            "xlnet.baseline.top1": 0.078652,
            "xlnet.baseline.top5": 0.247191,
        },
    },
    "distilbert": {
        "loss": {"distilbert": [9.13858, 10.301307, 7.871166]},
        "final": {
            "distilbert.top1": 0.563452,
            "distilbert.top5": 0.736041,
            "distilbert.n_targets": 197.0,
            "distilbert.cloze_top5": 0.5,
            "distilbert.cloze_top5_noun": 0.297872,
            "distilbert.cloze_top5_verb": 0.8,
            "distilbert.cloze_top5_adj": 0.52,
            "distilbert.teacher.top1": 0.568528,
            "distilbert.teacher.top5": 0.817259,
            "distilbert.teacher.n_targets": 197.0,
            "distilbert.teacher.cloze_top5": 0.598039,
            "distilbert.teacher.cloze_top5_noun": 0.489362,
            "distilbert.teacher.cloze_top5_verb": 0.866667,
            "distilbert.teacher.cloze_top5_adj": 0.48,
            "distilbert.retained_top1": 0.991071,
            "distilbert.speedup": 1.0,
            "distilbert.encoder_speedup": 1.0,
        },
    },
    "electra": {
        "loss": {
            "electra-joint": [40.8964, 41.57513, 41.35817],
            "electra-generator": [6.903278, 6.391188, 5.683281],
            "electra-discriminator": [0.693611, 0.599545, 0.507163],
        },
        "final": {
            "electra-generator.generator.top1": 0.071066,
            "electra-generator.generator.top5": 0.258883,
            "electra-generator.generator.n_targets": 197.0,
            "electra-generator.generator.cloze_top5": 0.0,
            "electra-generator.generator.cloze_top5_noun": 0.0,
            "electra-generator.generator.cloze_top5_verb": 0.0,
            "electra-generator.generator.cloze_top5_adj": 0.0,
            "electra-generator.discriminator.auc": 0.622904,
            "electra-generator.discriminator.precision": float("nan"),
            "electra-generator.discriminator.recall": 0.0,
            "electra-generator.discriminator.replaced_share": 0.153736,
            "electra-generator.discriminator.fakes_that_are_words": 0.906542,
            "electra-generator.baseline.top1": 0.08046,
            "electra-generator.baseline.top5": 0.252874,
            "electra-discriminator.generator.top1": 0.071066,
            "electra-discriminator.generator.top5": 0.258883,
            "electra-discriminator.generator.n_targets": 197.0,
            "electra-discriminator.generator.cloze_top5": 0.0,
            "electra-discriminator.generator.cloze_top5_noun": 0.0,
            "electra-discriminator.generator.cloze_top5_verb": 0.0,
            "electra-discriminator.generator.cloze_top5_adj": 0.0,
            "electra-discriminator.discriminator.auc": 0.622904,
            "electra-discriminator.discriminator.precision": float("nan"),
            "electra-discriminator.discriminator.recall": 0.0,
            "electra-discriminator.discriminator.replaced_share": 0.153736,
            "electra-discriminator.discriminator.fakes_that_are_words": 0.906542,
            "electra-discriminator.baseline.top1": 0.08046,
            "electra-discriminator.baseline.top5": 0.252874,
        },
    },
    "bert-nsp": {
        "loss": {"bert-nsp": [4.693314, 2.778386, 3.005061]},
        "final": {
            "bert-nsp.nsp_accuracy": 0.5,
            "bert-nsp.sop_accuracy": 0.65625,
            "bert-nsp.held_out_pairs": 64.0,
            "bert-nsp.top1": 0.608696,
            "bert-nsp.top5": 0.782609,
            "bert-nsp.page_pool_nsp": 0.466667,
            "bert-nsp.page_pool_sop": 0.6,
        },
    },
    "albert-sop": {
        "loss": {"albert-sop": [3.546253, 2.47273, 1.413373]},
        "final": {
            "albert.segment_sop_accuracy": 0.875,
            "albert.segment_nsp_accuracy": 0.515625,
            "albert.held_out_pairs": 64.0,
            "albert.top1": 0.530435,
            "albert.top5": 0.843478,
            "albert.cloze_top5": 0.470588,
            "albert.cloze_top5_noun": 0.361702,
            "albert.cloze_top5_verb": 0.666667,
            "albert.cloze_top5_adj": 0.44,
            "albert.stage1_segment_sop_accuracy": 0.828125,
            "albert.stage1_segment_nsp_accuracy": 0.53125,
            "albert.sop_accuracy": 0.875,
        },
    },
}


@pytest.mark.parametrize("recipe", RECIPES)
def test_a_recipe_trains_as_it_did_before_the_refactor(recipe, tmp_path, monkeypatch):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as EXPECTED was measured: a float sum's order depends on the threads
    try:
        got = _measure(recipe, tmp_path, monkeypatch)
    finally:
        torch.set_num_threads(threads)
    want = EXPECTED[recipe]
    assert got["loss"].keys() == want["loss"].keys()
    for name, losses in want["loss"].items():
        assert got["loss"][name] == pytest.approx(losses, rel=1e-4, abs=1e-5), name
    assert got["final"].keys() == want["final"].keys()
    for k, v in want["final"].items():
        assert got["final"][k] == pytest.approx(v, rel=1e-3, abs=1e-4, nan_ok=True), k


if __name__ == "__main__":  # prints EXPECTED for the tree checked out
    import sys
    import tempfile

    from _pytest.monkeypatch import MonkeyPatch

    torch.set_num_threads(1)
    measured = {}
    for recipe in sys.argv[1:] or RECIPES:
        with tempfile.TemporaryDirectory() as tmp:
            mp = MonkeyPatch()
            try:
                measured[recipe] = _measure(recipe, Path(tmp), mp)
            finally:
                mp.undo()
        print(recipe, json.dumps(measured[recipe]), file=sys.stderr, flush=True)
    print("EXPECTED = " + json.dumps(measured, indent=1))
