"""The training loop's resume (app/training/common.py): a run that a later command extends with a larger
``--steps`` is recorded, and the model card says so (the schedule restarts, the exact rebuild commands); a recipe
that starts from the BERT stand-in keeps its vocabulary."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from app.training import common


def _loop(cfg, work, calls):
    model = torch.nn.Linear(3, 1)

    def step_loss(step, gen):
        calls.append(step)
        x = torch.randn(4, 3, generator=gen)
        return model(x).pow(2).mean(), {}

    return common.train_loop("toy", model, step_loss, lambda: {"metric": 0.5}, cfg, work)


def test_an_extension_resumes_where_the_last_run_stopped_and_is_recorded(tmp_path):
    cfg = common.LoopConfig(steps=6, batch_size=2, seq_len=4, eval_every=3, warmup=1, precision="fp32")
    calls = []
    curves = _loop(cfg, tmp_path, calls)
    assert calls == list(range(6)) and "runs" not in curves  # one run: nothing to say
    assert "- Rebuild: `cmd`" in common.describe_runs(cfg, curves, "cmd")
    assert "- Rebuild: `cmd`" in common.describe_runs(cfg, curves, "cmd", default_steps=6)  # the recipe's own count
    assert "- Rebuild: `cmd --steps 6`" in common.describe_runs(cfg, curves, "cmd", default_steps=3000)  # overridden
    assert common.recipe_steps("xlnet") == 3000 and common.recipe_steps("albert-sop") > 0
    assert common.recipe_steps("no-such-recipe") is None

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        curves = _loop(replace(cfg, steps=9), tmp_path, calls)  # extended: only steps 6..8 run
    finally:
        torch.set_num_threads(threads)
    assert calls[6:] == [6, 7, 8] and curves["steps_done"] == 9
    assert curves["runs"] == [{"to_step": 6, "threads": None}, {"from_step": 6, "to_step": 9, "threads": 1}]
    text = common.describe_runs(replace(cfg, steps=9), curves, "cmd")
    assert "trained to 6 steps, then extended to 9" in text and "rose again at step 6 (warm restart)" in text
    assert "- Rebuild: `cmd --steps 6`, then the same with `--steps 9`" in text
    assert "thread" in common.describe_compute(cfg, curves)

    _loop(replace(cfg, steps=9), tmp_path, calls)  # the same total again: nothing runs, nothing is recorded
    assert len(calls) == 9


def test_early_stopping_ends_at_the_first_evaluation_it_accepts_and_a_resume_does_not_train_on(tmp_path):
    cfg = common.LoopConfig(steps=12, batch_size=2, seq_len=4, eval_every=2, warmup=1, precision="fp32")
    model = torch.nn.Linear(3, 1)
    calls, evals = [], iter([0.1, 0.4, 0.6, 0.9, 0.95, 0.99])

    def step_loss(step, gen):
        calls.append(step)
        return model(torch.randn(4, 3, generator=gen)).pow(2).mean(), {}

    def run():
        return common.train_loop(
            "toy", model, step_loss, lambda: {"top5": next(evals)}, cfg, tmp_path, stop_when=lambda m: m["top5"] >= 0.55
        )

    curves = run()
    assert curves["stopped_at"] == curves["steps_done"] == 6 and calls == list(range(6))
    assert curves["eval_step"] == [2, 4, 6] and curves["top5"] == [0.1, 0.4, 0.6]
    again = run()  # resumed: it stopped for good, so nothing trains and nothing is evaluated
    assert calls == list(range(6)) and again["steps_done"] == 6 and again["stopped_at"] == 6


def test_the_reports_training_column_counts_each_electra_model_by_its_own_stages():
    from app.training import report

    curves = {
        "steps_done": 2500,
        "train_seconds": 900.0,
        "joint_stage": {"steps_done": 2500, "train_seconds": 3300.0},
        "generator_stage": {"steps_done": 250, "train_seconds": 80.0, "stopped_at": 250},
    }
    assert report._training("electra-generator", curves) == "250 steps · 1 min CPU, alone (stage 1)"
    assert report._training("electra-discriminator", curves) == "2500 joint + 2500 steps · 55 + 15 min CPU"
    assert report._training("bert", {"steps_done": 6000, "train_seconds": 1200.0}) == "6000 steps · 20 min CPU"
    assert report._training("bert", {}) == "—"


def test_the_reports_training_column_says_which_device_trained_each_stage():
    """Stand-ins rebuilt on a GPU say so (curves.json "devices"), also where a resumed stage moved to the CPU."""
    from app.training import report

    gpu = ["H100 80GB HBM3 GPU"]
    curves = {
        "steps_done": 2500,
        "train_seconds": 900.0,
        "joint_stage": {"steps_done": 2500, "train_seconds": 180.0, "devices": gpu},
        "generator_stage": {"steps_done": 250, "train_seconds": 15.0, "devices": gpu},
    }
    assert report._training("electra-generator", curves) == "250 steps · 0 min H100 80GB HBM3 GPU, alone (stage 1)"
    assert (
        report._training("electra-discriminator", curves)
        == "2500 joint + 2500 steps · 3 min H100 80GB HBM3 GPU + 15 min CPU"
    )
    both = {
        "steps_done": 1500,
        "train_seconds": 120.0,
        "devices": gpu,
        "stage1": {"steps_done": 11000, "train_seconds": 285.0, "devices": gpu},
    }
    assert report._training("albert", both).startswith("11000 + 1500 steps · 5 + 2 min H100 80GB HBM3 GPU (stage 2")
    assert (
        report._training("bert", {"steps_done": 6000, "train_seconds": 133.0, "devices": gpu})
        == "6000 steps · 2 min H100 80GB HBM3 GPU"
    )


def test_the_loop_records_the_device_of_the_steps_it_trains(tmp_path):
    cfg = common.LoopConfig(steps=4, batch_size=2, seq_len=4, eval_every=2, warmup=1, precision="fp32")
    calls = []
    curves = _loop(cfg, tmp_path, calls)
    assert curves["devices"] == ["CPU"]
    again = _loop(cfg, tmp_path, calls)  # nothing left to train: nothing new recorded
    assert again["devices"] == ["CPU"] and len(calls) == 4


def test_a_card_trained_on_a_gpu_names_the_gpu_not_the_host_cpu_alone(monkeypatch):
    """A checkpoint built on a GPU says which one (the cards of the stand-ins rebuilt on an H100 do)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(common, "processor_name", lambda: "Intel(R) Xeon(R) Processor")
    cfg = common.LoopConfig(steps=6000, device="cuda")
    text = common.describe_compute(cfg, {"steps_done": 6000, "train_seconds": 133})
    assert text.endswith("2 min of training on GPU (NVIDIA H100 80GB HBM3, CUDA 13.0; host Intel(R) Xeon(R) Processor)")
    assert "bf16 autocast" in text
    cpu = common.describe_compute(
        common.LoopConfig(steps=6000, precision="fp32"), {"steps_done": 6000, "train_seconds": 133}
    )
    assert "float32, 2 min" in cpu and "autocast" not in cpu
    assert "on CPU, " in cpu and "thread" in cpu and cpu.endswith("(Intel(R) Xeon(R) Processor)")


def test_a_recipe_that_starts_from_bert_keeps_bert_s_vocabulary(tmp_path):
    """ELECTRA's discriminator and DistilBERT's student copy the BERT stand-in's embedding rows, so they must
    encode with its tokenizer, not a WordPiece vocabulary trained again (two builds on one corpus differed in 8
    pieces and 185 ids, which put other words' embeddings under 185 tokens)."""
    from transformers import AutoTokenizer

    from app.training import bert

    story = "Lily saw a big red ball. She ran to the park with her dog Max, and they played all day.\n\n"
    corpus = tmp_path / "stories.txt"
    corpus.write_text(story * 40, encoding="utf-8")
    other = tmp_path / "other.txt"
    other.write_text(("A small cat sat on the warm mat and looked at the moon.\n\n") * 40, encoding="utf-8")
    teacher_tok = AutoTokenizer.from_pretrained("assets/models/bert")
    teacher = tmp_path / "bert"
    teacher_tok.save_pretrained(teacher)

    tok, train, _ = bert.prepare(corpus, tmp_path / "w", 32, vocabulary_of=teacher)
    assert tok.get_vocab() == teacher_tok.get_vocab()
    assert train.input_ids[0, 1:4].tolist() == teacher_tok("Lily saw a", add_special_tokens=False)["input_ids"]

    built, _, _ = bert.prepare(other, tmp_path / "fresh", 32)  # no warm start: a vocabulary of its own corpus
    assert built.get_vocab() != teacher_tok.get_vocab()
    with pytest.raises(SystemExit, match="another vocabulary"):  # a work folder cached with another vocabulary
        bert.prepare(other, tmp_path / "fresh", 32, vocabulary_of=teacher)
