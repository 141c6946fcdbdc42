"""ALBERT, stage 2: the stand-in's sentence-order head taught the pairs the NSP vs SOP lesson shows.

Stage 1 (``app/training/albert.py``, ``--recipe albert``) trains ALBERT from scratch on masked LM + SOP over
packed chunks of 128 tokens cut at a random point: its SOP head reached 0.75 on held-out chunks, but on the
lesson's pairs — two consecutive segments of 2–3 sentences of one story, at most 96 tokens — it was at chance
(0.47 on 800 held-out pairs of whole stories; 0.48–0.69 on the page's paragraph pool, by draw). Those pairs
are short and read across a story, where a chunk pair is long and cut anywhere.

Stage 2 continues the same model (every weight, the shared layer, the factorized embeddings and the
SentencePiece tokenizer unchanged in shape) on masked LM + SOP over pairs drawn as the lesson and the NSP
stand-in (``app/training/bert_nsp.py``) draw theirs (``pairs.segment_triples`` on whole stories): half of every
batch in order (label 0), half swapped (label 1) — ALBERT's objective, only the segment size is the lesson's.
Masked LM (dynamic 15%, 80/10/10) continues on the same pairs, so the masked-LM head stays a masked LM and the
cloze floor is checked again.

Scored on held-out pairs of ``tinystories_valid`` drawn as the NSP stand-in's (the same draws, with this
tokenizer): SOP accuracy (in order vs swapped) and NSP accuracy (in order vs B from another story, "swapped"
read as "not next" — ALBERT's Table 5 scores its SOP model on NSP that way), masked top-1/top-5 and the cloze
set. The stage-1 checkpoint this stage starts from is kept in the work folder, so a rerun or an extension
starts from the same weights even after the bundled folder holds stage 2.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AlbertForPreTraining, AutoTokenizer

from app.training import albert, common, data, pairs

LOOP = common.LoopConfig(steps=1500, batch_size=32, seq_len=96, lr=3e-4, warmup=100, eval_every=250)


@dataclass(frozen=True)
class Recipe:
    min_sentences: int = 2  # the NSP stand-in's and the lesson's segments: 2..3 sentences
    max_sentences: int = 3
    eval_bases: int = 400  # held-out base pairs behind each evaluation during training (800 pairs a task)
    final_bases: int = 2000  # ... behind the final numbers (4000 pairs a task)
    valid_seed: int = 2  # the NSP stand-in's held-out draws
    sop_weight: float = 2.0  # loss = MLM + weight × SOP (the NSP stand-in's weight on its sentence task)


RECIPE = Recipe()
STAGE = "sop on story segments"  # curves.json "stage2": what the bundled folder holds after this recipe
OUT = "albert"  # the folder it writes: the ALBERT stand-in's own (python -m app.training says so)


def head_accuracy(model: AlbertForPreTraining, p: pairs.Pairs, batch_size: int = 256) -> float:
    """The SOP head's argmax against the labels (1 = swapped, or, on the NSP task, B from another story)."""
    return pairs.model_head_accuracy(albert.forward, model, p, batch_size)


def stage1(out: Path, work: Path) -> Path:
    """The stage-1 checkpoint to start from: ``work/start``, copied from ``out/albert`` the first time (refused
    when that folder already holds stage 2: rebuild stage 1 with ``--recipe albert`` first)."""
    start = work / "start"
    if (start / "config.json").exists():
        return start
    src = out / "albert"
    if not (src / "config.json").exists():
        raise SystemExit("albert-sop starts from the stage-1 ALBERT stand-in: build the albert recipe first")
    curves = json.loads((src / "curves.json").read_text()) if (src / "curves.json").exists() else {}
    if curves.get("stage2"):
        raise SystemExit(f"{src} already holds stage 2 ({curves['stage2']}); rebuild stage 1 with --recipe albert")
    shutil.copytree(src, start)
    return start


def sop_step(model, tok, train_stories, cfg: common.LoopConfig, r: Recipe):
    """``step_loss(step, gen)``: masked LM + SOP on story-segment pairs, half of every batch swapped."""
    rand_ids, half = data.random_ids(tok), cfg.batch_size // 2

    def step_loss(step, gen):
        tri = pairs.segment_triples(train_stories, cfg.batch_size, gen, r.max_sentences, 1, r.min_sentences)
        rows = [(a, b, 0) for a, b, _ in tri[:half]] + [(b, a, 1) for a, b, _ in tri[half:]]
        batch = pairs.encode_segment_pairs(tok, rows, cfg.seq_len, "sop")
        return pairs.mlm_and_head_loss(
            albert.forward, model, tok, batch, r.sop_weight, "sop", rand_ids, gen, cfg.device
        )

    return step_loss


def final_numbers(model, tok, valid: dict, start: Path) -> dict:
    """The held-out numbers of stage 2, and of the stage-1 checkpoint it started from (its heads on the same pairs)."""
    m = pairs.in_order_mlm_scores(albert.forward, model, tok, valid["sop"])
    final = {
        "segment_sop_accuracy": head_accuracy(model, valid["sop"]),
        "segment_nsp_accuracy": head_accuracy(model, valid["nsp"]),
        "held_out_pairs": len(valid["sop"]),
        "top1": m["valid_top1"],
        "top5": m["valid_top5"],
        **common.cloze_top5(model, tok),
    }
    before = AlbertForPreTraining.from_pretrained(start).eval()
    final["stage1_segment_sop_accuracy"] = head_accuracy(before, valid["sop"])
    final["stage1_segment_nsp_accuracy"] = head_accuracy(before, valid["nsp"])
    return final


def run(corpus, out: Path, work: Path, cfg: common.LoopConfig, recipe: Recipe = RECIPE) -> None:
    work = work / "albert-sop"
    start = stage1(out, work)
    first = json.loads((start / "curves.json").read_text())
    tok = AutoTokenizer.from_pretrained(start)
    train_stories, valid_stories, train_file = pairs.whole_story_sets(tok, corpus, work)
    r = recipe
    valid, eval_sets = pairs.held_out_tasks(tok, valid_stories, r, cfg.seq_len, 1)  # the NSP stand-in's draws

    torch.manual_seed(cfg.seed)
    model = AlbertForPreTraining.from_pretrained(start).to(cfg.device)
    model.train()

    def evaluate():
        return {
            "valid_sop_acc": head_accuracy(model, eval_sets["sop"]),
            "valid_nsp_acc": head_accuracy(model, eval_sets["nsp"]),
            **pairs.in_order_mlm_scores(albert.forward, model, tok, eval_sets["sop"]),
            **common.cloze_top5(model, tok),
        }

    step_loss = sop_step(model, tok, train_stories, cfg, r)
    curves = common.train_loop("albert-sop", model, step_loss, evaluate, cfg, work)
    model.cpu().eval()
    with torch.no_grad():
        final = final_numbers(model, tok, valid, start)
    model.config.architectures = ["AlbertForPreTraining"]
    card = stage2_card(model, tok, cfg, r, curves, final, first, train_file)
    curves["final"] = {**final, "sop_accuracy": final["segment_sop_accuracy"]}
    curves["stage2"] = STAGE
    curves["stage1"] = {k: first.get(k) for k in ("steps_done", "train_seconds", "final", "devices") if k in first}
    common.save_checkpoint(model, tok, out / OUT, curves, card)


def stage2_card(model, tok, cfg: common.LoopConfig, r: Recipe, curves: dict, final: dict, first: dict, train_file):
    """The model card of the two-stage stand-in."""
    f1 = first.get("final", {})
    n = final["held_out_pairs"]
    s1_min = first.get("train_seconds", 0) / 60
    s1_on = f" on {' + '.join(first['devices'])}" if first.get("devices") else ""
    s1_sop = final["stage1_segment_sop_accuracy"]
    return common.model_card(
        name="albert-tiny-tinystories",
        family="albert",
        stands_in_for="albert/albert-base-v2",
        recipe=(
            f"two stages. **Stage 1** (`--recipe albert`, {first.get('steps_done')} steps, {s1_min:.0f} min{s1_on}): "
            "masked LM (dynamic, 15%, 80/10/10) + sentence-order prediction on packed chunks of 128 tokens cut at "
            "a random point; factorized embedding E="
            f"{model.config.embedding_size} < H={model.config.hidden_size}; "
            f"one transformer layer shared by all {model.config.num_hidden_layers} (num_hidden_groups=1); no "
            f"dropout (ALBERT v2); SentencePiece Unigram vocabulary of {len(tok)}, lowercased; token-level rather "
            "than n-gram masking. **Stage 2** (`--recipe albert-sop`, this card's steps and schedule): the same "
            "model and tokenizer continued on masked LM + "
            f"{r.sop_weight:g} × SOP over pairs drawn as the NSP vs SOP lesson draws its pool — A and B "
            f"consecutive segments of {r.min_sentences}–{r.max_sentences} sentences of one whole story, at most "
            f"{cfg.seq_len} tokens, half of every batch swapped. Stage 1's SOP head scored {s1_sop:.2f} on such "
            f"pairs (chance is 0.50)"
        ),
        model=model,
        cfg=cfg,
        curves=curves,
        recipe_name="albert-sop",
        starts_from="its own stage 1",
        metrics={
            f"SOP accuracy (held-out story segments: {n} pairs, in order vs swapped)": final["segment_sop_accuracy"],
            f"NSP accuracy (held-out story segments: {n} pairs, in order vs B from another story; 'swapped' "
            "read as 'not next')": final["segment_nsp_accuracy"],
            "… the same two before stage 2 (stage 1's head)": f"SOP {final['stage1_segment_sop_accuracy']:.4f} · "
            f"NSP {final['stage1_segment_nsp_accuracy']:.4f}",
            "masked top-1 (15% masking, held-out in-order pairs)": final["top1"],
            "masked top-5 (15% masking, held-out in-order pairs)": final["top5"],
            "cloze top-5 (content words)": final["cloze_top5"],
            "stage 1: SOP accuracy on held-out 128-token chunk pairs": f1.get("sop_accuracy", float("nan")),
            "stage 1: cloze top-5": f1.get("cloze_top5", float("nan")),
        },
        baseline=None,
        corpus=train_file.name,
        notes="\nThe checkpoint holds both heads: `AlbertForPreTraining.from_pretrained` gives the masked-LM and the "
        "sentence-order (SOP) heads — `sop_logits[:, 1]` is *swapped* — and `AlbertForMaskedLM` / "
        "`pipeline(\"fill-mask\")` load the masked-LM part. Both stages from nothing: "
        "`python -m app.training --recipe albert albert-sop` (stage 2 keeps the stage-1 checkpoint it started "
        "from in its work folder, `.train/albert-sop/start`).\n",
    )
