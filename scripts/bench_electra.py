"""How long the ELECTRA page takes to answer a temperature change, with the bundled pair. Not a test.

    python scripts/bench_electra.py          # prints the timings
    bench_rerun() -> {name: milliseconds}    # what scripts/benchmark.py puts in its table

A temperature change re-samples from the generator logits cached for (text, rate, seed) and runs the
discriminator once on the new corrupted sentence; the goal is well under 200 ms per rerun.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TEXT = "The little girl found a red ball in the park. She was happy and ran home to show her mom."
TEMPERATURES = (0.5, 0.75, 1.25, 1.5, 2.0, 0.3, 0.9, 1.1, 1.7, 2.5)


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def _pure(repeats: int) -> dict[str, float]:
    """The library calls one rerun makes, without Streamlit: p50 in ms."""
    import torch

    from app.lessons import electra
    from app.figures import electra as figures
    from app.models import loading

    pair = loading.load_set(("electra-generator", "electra-discriminator"))
    gen, disc = pair["electra-generator"], pair["electra-discriminator"]
    tok = gen.tokenizer
    enc = electra.encode(tok, TEXT)
    ids = torch.tensor(enc.input_ids)
    masked = electra.mask_positions(torch.tensor(enc.special), 0.15, torch.Generator().manual_seed(0))
    times: dict[str, list[float]] = {
        "generator forward": [],
        "sampling": [],
        "discriminator forward": [],
        "pipeline figure": [],
    }
    for i in range(repeats):
        t = time.perf_counter()
        logits = electra.generator_logits(gen.model, electra.masked_input(ids, masked, tok.mask_token_id), masked)
        times["generator forward"].append(_ms(time.perf_counter() - t))
        t = time.perf_counter()
        corrupted, info = electra.sample_round(tok, enc, masked, logits, TEMPERATURES[i % len(TEMPERATURES)], 0)
        times["sampling"].append(_ms(time.perf_counter() - t))
        t = time.perf_counter()
        scores = electra.discriminator_scores(disc.model, corrupted)
        times["discriminator forward"].append(_ms(time.perf_counter() - t))
        t = time.perf_counter()
        figures.pipeline_figure(electra.assemble_round(tok, enc, masked, corrupted, info, scores))
        times["pipeline figure"].append(_ms(time.perf_counter() - t))
    return {f"{name} p50": statistics.median(v[1:] or v) for name, v in times.items()}


def _page(repeats: int) -> dict[str, float]:
    """The page through the router in AppTest: first run, then reruns after a temperature change."""
    from streamlit.testing.v1 import AppTest

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
        at.run()
        at.switch_page("pages/electra.py")
        t = time.perf_counter()
        at.run()
        first = _ms(time.perf_counter() - t)
        if at.exception:
            raise RuntimeError(f"the ELECTRA page failed: {at.exception[0].message}")
        samples = []
        for i in range(repeats):
            slider = at.slider(key="electra.temperature").set_value(TEMPERATURES[i % len(TEMPERATURES)])  # scoped key
            t = time.perf_counter()
            slider.run()
            samples.append(_ms(time.perf_counter() - t))
    finally:
        os.chdir(cwd)
    samples.sort()
    return {
        "page first run (models loaded)": first,
        "rerun after temperature change p50": statistics.median(samples),
        "rerun after temperature change p95": samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))],
    }


def bench_rerun(repeats: int = 10) -> dict[str, float]:
    """{name: ms}: the page's rerun after a temperature change (AppTest, router and sidebar included)
    and the library calls inside one rerun. Uses the bundled pair (``BVE_BUNDLED_DIR`` to override)."""
    previous = os.environ.get("BVE_WARM_START")
    os.environ["BVE_WARM_START"] = "0"  # time this page alone, not a background warm start
    try:
        return {**_page(repeats), **_pure(repeats)}
    finally:
        if previous is None:
            os.environ.pop("BVE_WARM_START", None)
        else:
            os.environ["BVE_WARM_START"] = previous


if __name__ == "__main__":
    for name, value in bench_rerun().items():
        print(f"{name:45s} {value:8.1f} ms")
