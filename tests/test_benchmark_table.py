"""scripts/benchmark.py's table merge: a partial run updates its own rows and keeps every other (no timing here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("benchmark", Path(__file__).resolve().parents[1] / "scripts" / "benchmark.py")
benchmark = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(benchmark)
PEAK = benchmark.PEAK


def test_a_partial_run_replaces_its_rows_keeps_the_others_and_only_a_larger_peak():
    old = [("Page X [bundled]: first run / rerun p50 · p95", "50 ms", "a"), ("Variant BERT: load", "40 ms", "b"),
           (PEAK, "3967 MiB", "ru_maxrss of `python scripts/benchmark.py --only pages-base`")]
    lighter = [("Page X [bundled]: first run / rerun p50 · p95", "60 ms", "new"), (PEAK, "602 MiB", "ru_maxrss of `light`")]
    out = benchmark.merge(old, lighter, ["pages"])
    assert out[0] == lighter[0] and out[1] == old[1]
    assert out[2] == old[2]  # the heavier run's peak, and its command, stay
    heavier = [(PEAK, "5000 MiB", "ru_maxrss of `heavy`")]
    assert benchmark.merge(old, heavier, ["pages-base"])[2] == heavier[0]
    assert benchmark.merge([r for r in old if r[0] != PEAK], lighter, ["pages"])[-1] == lighter[1]  # no peak before
