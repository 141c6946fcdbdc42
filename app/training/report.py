"""Write the bundled checkpoints' quality table into README.md (between the quality markers), from the
numbers each recipe saved in assets/models/<name>/curves.json. ``python -m app.training.report``"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from app.models.catalogue import CATALOGUE, bundled_root

FLOORS = {"bert": "top-5 ≥ 0.55", "roberta": "top-5 ≥ 0.55", "albert": "top-5 ≥ 0.45",
          "distilbert": "top-1 ≥ 90% of teacher, ≥ 1.6× faster", "electra-discriminator": "AUC ≥ 0.85",
          "xlnet": "top-5 ≥ 0.40", "electra-generator": "—"}


def rows() -> list[str]:
    out = ["| variant | parameters | steps · CPU time | held-out quality | unigram baseline | floor |", "|---|---|---|---|---|---|"]
    for key, v in CATALOGUE.items():
        path = bundled_root() / v.bundled / "curves.json"
        if not path.exists():
            out.append(f"| {v.label} | not built | | | | {FLOORS[key]} |")
            continue
        c = json.loads(path.read_text())
        f = c.get("final", {})
        from app.models.catalogue import bundled_parameter_count

        params = f"{bundled_parameter_count(v) / 1e6:.2f} M"
        steps = f"{c.get('steps_done')} · {c.get('train_seconds', 0) / 60:.0f} min"
        base = {} if key == "electra-discriminator" else f.get("baseline") or {}
        if key == "distilbert":  # the teacher's vocabulary and held-out text
            base = json.loads((bundled_root() / "bert" / "curves.json").read_text())["final"]["baseline"]
        if key == "electra-discriminator":
            d = f["discriminator"]
            quality = f"ROC-AUC {d['auc']:.3f} (P {d['precision']:.2f} / R {d['recall']:.2f} at 0.5)"
        elif key == "electra-generator":
            g = f["generator"]
            quality = f"masked top-1 {g['top1']:.3f} · top-5 {g['top5']:.3f}"
        elif key == "distilbert":
            quality = (f"masked top-1 {f['top1']:.3f} · top-5 {f['top5']:.3f}; {f['retained_top1']:.0%} of the teacher's top-1; "
                       f"{f['speedup']:.2f}× faster forward")
        else:
            kind = "permutation-target" if key == "xlnet" else "masked"
            quality = f"{kind} top-1 {f['top1']:.3f} · top-5 {f['top5']:.3f}"
            if "sop_accuracy" in f:
                quality += f"; SOP accuracy {f['sop_accuracy']:.2f}"
        baseline = f"top-1 {base['top1']:.3f} · top-5 {base['top5']:.3f}" if base else "—"
        out.append(f"| {v.label} | {params} | {steps} | {quality} | {baseline} | {FLOORS[key]} |")
    return out


def main() -> None:
    readme = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("README.md")
    table = "\n".join(rows())
    text = readme.read_text()
    text = re.sub(r"(<!-- quality:start -->\n).*?(<!-- quality:end -->)", lambda m: m.group(1) + table + "\n" + m.group(2), text, flags=re.S)
    readme.write_text(text)
    print(table)


if __name__ == "__main__":
    main()
