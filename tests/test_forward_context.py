"""One forward context (app.models.device.forward, nanoGPT's ``ctx``): every model call a lesson makes runs in
inference mode and, for a half-precision model, under autocast to its dtype — no lesson writes its own. Walked
here for every lesson's ``run`` in bfloat16 and float16 on the CPU (autocast on the CPU takes both), so a new
lesson cannot skip it: a model call outside the context fails there the way XLNet's einsum failed on a GPU."""

from __future__ import annotations

import ast
import copy
import dataclasses
import importlib
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from app.core.lesson import Stop, direct
from app.lecture import deck, handout
from app.lessons import LESSONS
from app.models import device as devices
from app.models import loading

ROOT = Path(__file__).resolve().parents[1]
#: What runs models for the pages: every module there goes through the one context.
INFERENCE = [
    "app/lessons",
    "app/figures",
    "app/lecture",
    "app/mlm.py",
    "app/cloze.py",
    "app/permutation.py",
    "app/replaced_tokens.py",
    "app/triple_loss.py",
    "app/masking.py",
    "app/ui",
]
OWN_CONTEXTS = {"inference_mode", "no_grad", "autocast", "enable_grad"}


def sources():
    for entry in INFERENCE:
        path = ROOT / entry
        yield from ([path] if path.suffix == ".py" else sorted(path.rglob("*.py")))


def test_no_lesson_writes_its_own_grad_mode_or_autocast():
    offenders = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in OWN_CONTEXTS:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.attr}")
    assert offenders == [], "use app.models.device.forward(model): " + ", ".join(offenders)


def test_the_context_autocasts_half_models_only():
    half = torch.nn.Linear(4, 4).to(torch.bfloat16)
    with devices.forward(half):
        assert torch.is_inference_mode_enabled() and torch.is_autocast_enabled("cpu")
        assert torch.get_autocast_dtype("cpu") == torch.bfloat16
        y = half(torch.ones(1, 4))  # a float32 input meets bfloat16 weights: autocast makes it work
    assert y.dtype == torch.bfloat16 and not torch.is_inference_mode_enabled()
    full = torch.nn.Linear(4, 4)
    with devices.forward(full):
        assert torch.is_inference_mode_enabled() and not torch.is_autocast_enabled("cpu")


def nonfinite(value, seen=None) -> int:
    """How many non-finite numbers a Result holds (tensors, arrays, floats, in dataclasses and containers)."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, torch.Tensor):
        return int((~torch.isfinite(value.float())).sum()) if value.is_floating_point() else 0
    if isinstance(value, np.ndarray):
        return int((~np.isfinite(value)).sum()) if np.issubdtype(value.dtype, np.floating) else 0
    if isinstance(value, float):
        return 0 if math.isfinite(value) else 1
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nonfinite(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return sum(nonfinite(v, seen) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(nonfinite(v, seen) for v in value)
    return 0


def in_dtype(models: dict, dtype: str) -> dict:
    """The lesson's bundled models, copied and cast to ``dtype`` (ELECTRA's pair tied again)."""
    out = {
        k: dataclasses.replace(m, model=copy.deepcopy(m.model).to(devices.torch_dtype(dtype)), dtype=dtype)
        for k, m in models.items()
    }
    if "electra-generator" in out and "electra-discriminator" in out:
        loading.tie_electra_pair(out["electra-generator"], out["electra-discriminator"])
    return out


def run(lesson, models: dict):
    lib = importlib.import_module(lesson.library)
    try:
        return lib.run(models, lib.Inputs.from_values({}), direct)
    except Stop as stop:  # a lesson with nothing to show on its defaults would be a bug of its own
        pytest.fail(f"{lesson.slug} stopped on its defaults: {stop.note.text}")


@pytest.fixture(scope="module")
def float32_results(bundled):
    return {}


@pytest.mark.slow  # every lesson in float16 and bfloat16 on the CPU (5-55 s each)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.slug)
def test_every_lesson_runs_in_half_precision_through_the_context(lesson, dtype, bundled, float32_results):
    keys = handout.models_for(deck.View(lesson.slug))
    models = {k: bundled(k) for k in keys}
    if lesson.slug not in float32_results:
        float32_results[lesson.slug] = nonfinite(run(lesson, models))
    half = run(lesson, in_dtype(models, dtype))
    assert nonfinite(half) <= float32_results[lesson.slug], f"{lesson.slug} in {dtype}: new NaN or inf"
