"""Build the bundled checkpoints: ``python -m app.training --recipe all --corpus ../shared/corpus``.

Each recipe resumes from its work folder (``--work``), so an interrupted build continues where it
stopped; ``--time-budget`` caps the training seconds of each recipe. See the project README's *The bundled
checkpoints*.
"""

from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path

import torch

from app.training.common import LoopConfig

RECIPES = [
    "bert",
    "distilbert",
    "electra",
    "roberta",
    "albert",
    "albert-sop",
    "xlnet",
    "deberta",
    "modernbert",
    "bert-nsp",
]
# distilbert, electra and bert-nsp start from bert, albert-sop (ALBERT's stage 2) from albert; a recipe "x-y"
# lives in app/training/x_y.py


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m app.training", description=__doc__)
    p.add_argument("--recipe", nargs="+", default=["all"], help=f"any of {RECIPES} or all")
    p.add_argument(
        "--corpus", default="../shared/corpus", help="a folder with tinystories_{train,valid}.txt, or one text file"
    )
    p.add_argument("--out", default="assets/models", type=Path)
    p.add_argument("--work", default=".train", type=Path, help="resumable training state (not committed)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=None, help="override each recipe's step count")
    p.add_argument("--time-budget", type=float, default=None, help="seconds of training per recipe")
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument(
        "--precision",
        choices=["bf16", "fp32"],
        default=None,
        help="override each recipe's: bf16 autocast is fast on GPUs and on CPUs with AMX/AVX512-bf16, "
        "but many times slower than fp32 on a CPU without them (AVX2 only)",
    )
    a = p.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    names = RECIPES if "all" in a.recipe else a.recipe
    for name in names:
        if name not in RECIPES:
            p.error(f"unknown recipe {name!r}; choose from {RECIPES}")
        module = importlib.import_module(f"app.training.{name.replace('-', '_')}")
        cfg = getattr(module, "LOOP", LoopConfig())
        overrides = {
            k: v
            for k, v in {
                "steps": a.steps,
                "time_budget_s": a.time_budget,
                "batch_size": a.batch_size,
                "device": a.device,
                "precision": a.precision,
            }.items()
            if v is not None
        }
        cfg = LoopConfig(**{**cfg.__dict__, **overrides})
        t = time.time()
        module.run(a.corpus, a.out, a.work, cfg)
        print(f"[{name}] done in {time.time() - t:.0f} s -> {a.out / getattr(module, 'OUT', name)}", flush=True)


if __name__ == "__main__":
    main()
