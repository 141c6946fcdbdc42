"""The bundled checkpoints' quality, measured now, against the floors their lessons need; written into
docs/results.md (between the quality markers). ``python -m app.training.report [--readme docs/results.md]``

What it measures on each bundled checkpoint (so the table is true of the files, not of a log):
- the project's content-word cloze set (tests/data/cloze.jsonl, app/cloze.py): top-5 hit rate;
- the held-out numbers each recipe saved in curves.json (masked top-1/top-5 on tinystories_valid);
- ELECTRA: the discriminator's held-out ROC-AUC (curves.json) and, live, the share of the generator's
  samples at masked content words on the ELECTRA page's default sentence that are words (100 seeds);
- DistilBERT: its top-1 as a share of its teacher's (curves.json) and, live, its encoder's forward speed-up on
  this CPU (the paper timed a full pass of STS-B: an encoder with a one-number head, no vocabulary head);
- the NSP stand-in (bert-nsp): its head's NSP and SOP accuracy on held-out story pairs (curves.json) and, live,
  on the NSP vs SOP page's own pool (60 base pairs of assets/sentence_order/stories.txt, scored as the page does).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from app.models.catalogue import CATALOGUE, bundled_parameter_count, bundled_root

CLOZE_FLOORS = {
    "bert": 0.50,
    "roberta": 0.50,
    "distilbert": 0.50,
    "albert": 0.40,
    "xlnet": 0.40,
    "electra-generator": 0.35,
    "deberta": 0.50,
    "modernbert": 0.50,
}
AUC_FLOOR, RETAINED_FLOOR, SPEEDUP_FLOOR, PLAUSIBLE_FLOOR = 0.90, 0.95, 1.6, 0.80
NSP_FLOOR = 0.85  # held-out NSP accuracy of the NSP head: NSP is the easy task (ALBERT's Table 5: 90.5)
SOP_NEAR_CHANCE = 0.10  # ... and its held-out SOP accuracy within this of 0.5 (Table 5: 52.0)
SOP_FLOOR = 0.80  # held-out SOP accuracy of ALBERT's head on story segments (stage 2; Table 5, SOP-trained: 86.5)

# Floors the bundled checkpoints do not reach yet, and what was seen: the report says so beside the number and
# the floor tests expect the miss (strictly: a retrained checkpoint that reaches its floor makes the test fail
# until its entry here is removed). The ELECTRA discriminator's AUC holds since its generator is stopped early
# (app/training/electra.py). The NSP head meets its floor and its SOP bound since its 12,000-step schedule (issue 26).
SHORT_OF_FLOOR: dict[str, str] = {  # "<model>" or "<model>:<what>" (one of several checks of a model)
}


def _curves(key: str) -> dict:
    path = bundled_root() / CATALOGUE[key].bundled / "curves.json"
    return json.loads(path.read_text()) if path.exists() else {}


def measure() -> dict[str, dict]:
    """Every bundled checkpoint's numbers: {key: {"cloze": ..., "checks": [(what, value, floor, holds)], ...}}."""
    import torch

    from app import cloze
    from app import detection, sentence_heads
    from app.models import loading
    from app.training.distilbert import forward_speedup

    items = cloze.load_items()
    out: dict[str, dict] = {}
    loaded = loading.load_set([key for key, v in CATALOGUE.items() if v.bundled_available()], source="bundled")
    for key, m in loaded.items():
        c = _curves(key)
        f = c.get("final", {})
        row = {"params": bundled_parameter_count(m.variant), "curves": c, "checks": []}
        if key in CLOZE_FLOORS:
            r = cloze.evaluate(m.model, m.tokenizer, items, k=5, permutation=m.variant.family == "xlnet")
            row["cloze"] = r.rate
            row["checks"].append(("cloze top-5", r.rate, CLOZE_FLOORS[key], r.rate >= CLOZE_FLOORS[key]))
        if key == "electra-discriminator":
            auc = f.get("discriminator", {}).get("auc")
            row["checks"].append(("held-out ROC-AUC", auc, AUC_FLOOR, auc is not None and auc >= AUC_FLOOR))
            if "electra-generator" in loaded:  # live, on sentences in the repo (the held-out corpus is not)
                row["live_auc"] = detection.pooled_detection(
                    {"electra-generator": loaded["electra-generator"], key: m}, [i.filled for i in items]
                ).auc
                row["live_sentences"] = len(items)
        if key == "electra-generator" and "electra-discriminator" in loaded:
            share = detection.plausible_share(
                {"electra-generator": m, "electra-discriminator": loaded["electra-discriminator"]}
            )
            row["checks"].append(
                ("samples at masked content words that are words", share, PLAUSIBLE_FLOOR, share >= PLAUSIBLE_FLOOR)
            )
        if key == "distilbert" and "bert" in loaded:
            retained = f.get("retained_top1")
            row["checks"].append(
                (
                    "top-1 kept of the teacher's",
                    retained,
                    RETAINED_FLOOR,
                    retained is not None and retained >= RETAINED_FLOOR,
                )
            )
            torch.set_num_threads(1)  # one core, as a class server gives each session
            # the encoders, as the paper timed them (a full pass of STS-B: one number out, no vocabulary head)
            speed = forward_speedup(loaded["bert"].model, m.model, m.tokenizer)["encoder_speedup"]
            row["checks"].append(("encoder forward speed-up on this CPU", speed, SPEEDUP_FLOOR, speed >= SPEEDUP_FLOOR))
        if key == "albert" and c.get("stage2"):
            sop = f.get("segment_sop_accuracy")
            row["checks"].append(
                ("held-out SOP accuracy on story segments", sop, SOP_FLOOR, sop is not None and sop >= SOP_FLOOR)
            )
            pool = sentence_heads.pool_accuracy(m)  # the page's own pool, scored as the page scores it
            if pool is not None:
                row["pool"] = pool
        if key == "bert-nsp":
            nsp, sop = f.get("nsp_accuracy"), f.get("sop_accuracy")
            row["checks"].append(("held-out NSP accuracy", nsp, NSP_FLOOR, nsp is not None and nsp >= NSP_FLOOR))
            row["checks"].append(
                (
                    "held-out SOP accuracy near chance",
                    sop,
                    SOP_NEAR_CHANCE,
                    sop is not None and abs(sop - 0.5) <= SOP_NEAR_CHANCE,
                )
            )
            pool = sentence_heads.pool_accuracy(m)  # the page's own pool, scored as the page scores it
            if pool is not None:
                row["pool"] = pool
        out[key] = row
    return out


def _fmt(what: str, value, floor) -> str:
    if value is None:
        return f"{what}: not measured"
    if "speed" in what:
        return f"{what} {value:.2f}× (≥ {floor:g}×)"
    if "near chance" in what:
        return f"{what} {value:.3f} (0.5 ± {floor:.2f})"
    if "kept" in what or "share" in what or "words" in what:
        return f"{what} {value:.0%} (≥ {floor:.0%})"
    return f"{what} {value:.3f} (≥ {floor:.2f})"


def _training(key: str, c: dict) -> str:
    """Steps, minutes and the device (CPU unless curves.json says otherwise); ELECTRA's recipe has stages
    (app/training/electra.py): the generator row counts its own stage, the discriminator row the joint stage and
    its own."""
    steps = c.get("steps_done")
    if not steps:
        return "—"
    minutes = lambda d: d.get("train_seconds", 0) / 60  # noqa: E731
    on = lambda d: " + ".join(d.get("devices") or ["CPU"])  # noqa: E731  (curves before devices were recorded: CPU)

    def stages(a: dict, b: dict) -> str:
        if on(a) == on(b):
            return f"{minutes(a):.0f} + {minutes(b):.0f} min {on(b)}"
        return f"{minutes(a):.0f} min {on(a)} + {minutes(b):.0f} min {on(b)}"

    joint, gen = c.get("joint_stage") or {}, c.get("generator_stage") or {}
    if key == "electra-generator" and gen.get("steps_done"):
        return f"{gen['steps_done']} steps · {minutes(gen):.0f} min {on(gen)}, alone (stage 1)"
    if key == "electra-discriminator" and joint.get("steps_done"):
        return f"{joint['steps_done']} joint + {steps} steps · {stages(joint, c)}"
    first = c.get("stage1") or {}
    if key == "albert" and first.get("steps_done"):  # ALBERT's stage 2 (app/training/albert_sop.py)
        return f"{first['steps_done']} + {steps} steps · {stages(first, c)} (stage 2: SOP on story segments)"
    start = f", from {c['starts_from']}" if c.get("starts_from") else ""  # a recipe that fine-tunes another stand-in
    return f"{steps} steps · {minutes(c):.0f} min {on(c)}{start}"


def _sop_with_nsp(c: dict) -> str:
    """The NSP head's training curve: its SOP accuracy at every evaluation where NSP had reached its floor (does
    SOP rise with NSP, or could an earlier checkpoint have had both?)."""
    sop = [o for n, o in zip(c.get("valid_nsp_acc", []), c.get("valid_sop_acc", [])) if n >= NSP_FLOOR]
    if not sop:
        return ""
    both = sum(abs(o - 0.5) <= SOP_NEAR_CHANCE for o in sop)
    return (
        f"; in training, SOP was {min(sop):.2f}–{max(sop):.2f} at the {len(sop)} evaluations where NSP was ≥ "
        f"{NSP_FLOOR:.2f}: " + (f"{both} of them had both" if both else "no checkpoint had both")
    )


def rows(measured: dict[str, dict]) -> list[str]:
    out = [
        "| variant | parameters | training | held-out (tinystories_valid) | floors, measured now | holds |",
        "|---|---|---|---|---|---|",
    ]
    for key, v in CATALOGUE.items():
        if key not in measured:
            out.append(f"| {v.label} | not built | | | | |")
            continue
        m = measured[key]
        c = m["curves"]
        f = c.get("final", {})
        train = _training(key, c)
        if key == "electra-discriminator":
            d = f.get("discriminator", {})
            held = f"P {d.get('precision', float('nan')):.2f} / R {d.get('recall', float('nan')):.2f} at 0.5"
            if "live_auc" in m:
                held += (
                    f"; live, {m['live_sentences']} cloze sentences filled, 3 rounds each: ROC-AUC {m['live_auc']:.3f}"
                )
        elif key == "bert-nsp":
            held = (
                f"NSP accuracy {f['nsp_accuracy']:.2f} · SOP accuracy {f['sop_accuracy']:.2f} (the head, "
                f"{f['held_out_pairs']} held-out pairs a task)"
                if "nsp_accuracy" in f
                else "—"
            )
            if "pool" in m:
                held += (
                    f"; the NSP vs SOP page's pool (120 pairs a task), measured now: NSP {m['pool']['nsp']:.2f} · "
                    f"SOP {m['pool']['sop']:.2f}"
                )
        else:
            g = f.get("generator", f)
            kind = "permutation-target" if key == "xlnet" else "masked"
            held = f"{kind} top-1 {g['top1']:.3f} · top-5 {g['top5']:.3f}" if "top1" in g else "—"
            if "segment_sop_accuracy" in f:  # ALBERT after stage 2
                held = (
                    f"masked top-1 {f['top1']:.3f} · top-5 {f['top5']:.3f}; its SOP head on held-out story "
                    f"segments ({f['held_out_pairs']} pairs a task): SOP {f['segment_sop_accuracy']:.2f} · NSP "
                    f"{f['segment_nsp_accuracy']:.2f} (stage 1's: SOP {f['stage1_segment_sop_accuracy']:.2f} · "
                    f"NSP {f['stage1_segment_nsp_accuracy']:.2f})"
                )
                if "pool" in m:
                    held += (
                        f"; the NSP vs SOP page's pool, measured now: NSP {m['pool']['nsp']:.2f} · "
                        f"SOP {m['pool']['sop']:.2f}"
                    )
            elif "sop_accuracy" in f:
                held += f"; SOP accuracy {f['sop_accuracy']:.2f}"
        checks = "; ".join(_fmt(w, val, fl) for w, val, fl, _ in m["checks"]) or "—"
        holds = "yes" if m["checks"] and all(h for *_, h in m["checks"]) else ("—" if not m["checks"] else "**no**")
        reasons = [r for k, r in SHORT_OF_FLOOR.items() if k == key or k.startswith(f"{key}:")]
        if holds == "**no**" and reasons:
            holds += ": " + "; ".join(reasons)
        if key == "bert-nsp" and holds.startswith("**no**"):
            holds += _sop_with_nsp(c)
        out.append(f"| {v.label} | {m['params'] / 1e6:.2f} M | {train} | {held} | {checks} | {holds} |")
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m app.training.report", description=__doc__)
    p.add_argument("--readme", type=Path, default=Path("docs/results.md"))
    a = p.parse_args(argv)
    table = "\n".join(rows(measure()))
    text = a.readme.read_text()
    text = re.sub(
        r"(<!-- quality:start -->\n).*?(<!-- quality:end -->)",
        lambda m: m.group(1) + table + "\n" + m.group(2),
        text,
        flags=re.S,
    )
    a.readme.write_text(text)
    print(table)


if __name__ == "__main__":
    main()
