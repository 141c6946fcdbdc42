"""The papers' claims, replayed: controlled toy-scale experiments, one module per claim.

Each experiment trains small models with the project's training recipes (app/training/: the one
resumable ``train_loop``, the recipes' data, masking and model building blocks), on the same data, at
the same model size for the same steps (ELECTRA: the same FLOPs), changing only the recipe setting the arm's
label names (where compute still differs — distillation's soft arms also run the teacher — the page says so);
the seeds its plan asks for (app/experiments/plans.py: fixed before the data, versioned); held-out metrics on
``tinystories_valid.txt``. Results are written as JSON under ``assets/experiments/`` (app/experiments/results.py
documents the schema) by one command:

    python -m app.experiments run masking        # or: run all; list; plans; --device cuda --jobs 2

The registry below maps a name to its module and its claim (app/experiments/claims.py: what the paper
reported, with its table and numbers, as data the page can show). Importing this package is light (no
torch): the experiment modules are imported only when one is run.

| name | paper's claim | module |
|---|---|---|
| masking | dynamic ≥ static ×10 > static ×1 (RoBERTa Table 1); spans > tokens (SpanBERT Table 6) | masking.py |
| sentence | NSP does not help; SOP-trained solves NSP, NSP-trained cannot solve SOP (ALBERT Table 5) | sentence.py |
| electra | replaced-token detection > masked LM per FLOP (ELECTRA Table 1); all tokens > 15% (Table 5) | electra.py |
| sharing | sharing all layers costs little for many fewer parameters (ALBERT Tables 3-4) | sharing.py |
| distillation | soft targets (T = 2) teach more than hard labels (DistilBERT Table 4) | distillation.py |
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import importlib
from dataclasses import dataclass

from app.experiments.claims import CLAIMS, Claim


@dataclass(frozen=True)
class Experiment:
    name: str
    module: str  # dotted path, imported on demand
    claim: Claim
    live_pair: tuple[str, str]  # the smallest pair of arms, for a live run on the page: (claimed better, other)

    def load(self):
        return importlib.import_module(self.module)


EXPERIMENTS: dict[str, Experiment] = {
    "masking": Experiment("masking", "app.experiments.masking", CLAIMS["masking"], ("dynamic", "static1")),
    "sentence": Experiment("sentence", "app.experiments.sentence", CLAIMS["sentence"], ("sop", "nsp")),
    "electra": Experiment("electra", "app.experiments.electra", CLAIMS["electra"], ("electra", "mlm")),
    "sharing": Experiment("sharing", "app.experiments.sharing", CLAIMS["sharing"], ("none", "all")),
    "distillation": Experiment(
        "distillation", "app.experiments.distillation", CLAIMS["distillation"], ("soft_t2", "hard")
    ),
}


def get(name: str) -> Experiment:
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; choose from {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]
