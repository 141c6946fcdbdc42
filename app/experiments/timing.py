"""What a full experiment would cost on this machine, measured in a minute or two instead of run for an hour:
``python -m app.experiments time NAME|all [--steps 30] [--threads 1]``.

For every arm (one seed) it times ``steps`` real training steps (the arm's own step loss, backward and
AdamW under the loop's bf16 autocast), one evaluation and the final scoring, then projects the full run:
``seeds × Σ_arms (planned steps × step time + evaluations × evaluation time + final time)``, plus
what the experiment needs first (DistilBERT's teacher), divided by ``--jobs``. A reference workload
(a fixed tiny BERT step, :func:`reference_ms`) is timed beside it, so that numbers taken on a busy machine
can be rescaled: ``projected × idle reference / measured reference``.

Times are the process's CPU time (``time.process_time``), not the wall clock: with one torch thread per
run that is what a run costs on a core of its own, even while other programs share the machine (which
inflates the wall clock but much less the CPU time). Run it with ``--threads 1``, as the runs will be.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch

from app.experiments import get, runner
from app.training import common


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2]


def reference_ms(repeats: int = 12) -> float:
    """Median milliseconds of one training step of a fixed tiny BERT (hidden 128, 2 layers, FFN 512,
    batch 32 × 64 tokens, vocabulary 4096, bf16 autocast): this machine's speed, right now."""
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    model = BertForMaskedLM(
        BertConfig(
            vocab_size=4096,
            hidden_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=512,
            max_position_embeddings=128,
        )
    )
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(5, 4096, (32, 64), generator=torch.Generator().manual_seed(0))
    targets = torch.rand(32, 64, generator=torch.Generator().manual_seed(1)) < 0.15
    times = []
    for _ in range(repeats + 3):
        t = time.process_time()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = model.bert(input_ids=ids).last_hidden_state
            loss = torch.nn.functional.cross_entropy(model.cls(h[targets]), ids[targets])
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.process_time() - t)
    return 1000 * _median(times[3:])


def time_steps(s: runner.ArmSetup, steps: int) -> float:
    """Median seconds of one training step of an arm (as train_loop takes it)."""
    opt = torch.optim.AdamW(s.model.parameters(), lr=1e-5)
    s.model.train()
    times = []
    for step in range(steps + 3):
        t = time.process_time()
        with common.autocast(s.cfg):
            loss, _ = s.step_loss(step, common.batch_generator(s.cfg, step))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(s.model.parameters(), 1.0)
        opt.step()
        times.append(time.process_time() - t)
    return _median(times[3:])


def _timed(f) -> float:
    t = time.process_time()
    f()
    return time.process_time() - t


def time_experiment(
    name: str,
    steps: int = 30,
    seeds: int = 3,
    jobs: int = 1,
    device: str = "cpu",
    corpus=runner.DEFAULT_CORPUS,
    work=runner.DEFAULT_WORK,
    quick: bool = False,
) -> dict:
    module = get(name).load()
    ctx = runner.context(name, runner.planned_budget(name, module, quick), device, corpus, work)
    out = {"experiment": name, "arms": {}, "prepare_s": 0.0, "reference_ms_before": reference_ms()}
    if hasattr(module, "time_prepare"):
        out["prepare_s"] = module.time_prepare(ctx, steps, jobs)
    elif hasattr(module, "prepare"):
        module.prepare(ctx)
    total = 0.0
    for arm in module.arms(ctx.budget):
        s = module.setup(arm, 0, ctx)
        step_s = time_steps(s, steps)
        s.model.eval()
        with torch.no_grad():
            eval_s = _timed(s.evaluate)
            final_s = _timed(s.final)
        n_evals = s.cfg.steps // s.cfg.eval_every + (1 if s.cfg.steps % s.cfg.eval_every else 0) + 1  # + step 0
        per_seed = s.cfg.steps * step_s + n_evals * eval_s + final_s
        total += seeds * per_seed
        out["arms"][arm.name] = {
            "steps": s.cfg.steps,
            "step_ms": round(1000 * step_s, 1),
            "evaluations": n_evals,
            "eval_s": round(eval_s, 2),
            "final_s": round(final_s, 2),
            "per_seed_s": round(per_seed, 1),
            "flops_per_step": s.flops_per_step,
        }
    out["reference_ms_after"] = reference_ms()
    out["seeds"], out["jobs"] = seeds, jobs
    out["projected_s"] = round(out["prepare_s"] + total / max(1, jobs), 1)
    return out


# ----------------------------------------------------------------------------- BENCHMARKS.md

START, END = "<!-- experiments:start -->", "<!-- experiments:end -->"


def merge(store: Path, measured: list[dict]) -> dict:
    """Keep the latest measurement of every experiment in ``store`` (JSON); returns them all."""
    import json

    known = json.loads(store.read_text()) if store.exists() else {}
    for r in measured:
        known[r["experiment"]] = {**r, "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps(known, indent=1))
    return known


def _runs(arm: dict) -> list:
    runs = arm.get("seeds", arm.get("runs", []))
    return list(runs.values()) if isinstance(runs, dict) else list(runs)


def bundled_runs(folder: Path) -> list[dict]:
    """What each bundled result's own run cost, from its JSON's provenance (``meta``): one dict per file."""
    import json

    out = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            d = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if d.get("quick"):
            continue
        meta, arms = d.get("meta", {}), d.get("arms", {})
        seeds = max((len(_runs(a)) for a in arms.values()), default=0)
        records = [r for a in arms.values() for r in _runs(a) if isinstance(r, dict)]
        summed = sum(r.get("wall_seconds") or 0.0 for r in records) or None
        out.append(
            {
                "experiment": d.get("experiment", path.stem),
                "arms": len(arms),
                "seeds": seeds,
                "jobs": meta.get("jobs"),
                "device": meta.get("device", "?"),
                "wall_s": meta.get("wall_seconds"),
                "runs_s": summed,
                "finished": meta.get("finished", "?"),
                "command": meta.get("command", "?"),
            }
        )
    return out


def kept_rows(text: str) -> dict[str, tuple[str, float]]:
    """The projection rows of an existing experiments section (BENCHMARKS.md), by experiment: (the row as
    written, its projected seconds). A partial measurement (``time distillation``, or a store that lost the
    others' measurements) keeps the rows it did not measure."""
    rows = {}
    body = text[text.index(START) : text.index(END)] if START in text and END in text else ""
    body = body.split("### The bundled results")[0]
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and " × " in cells[1] and cells[5].split(" ")[1:2] == ["min"]:
            try:
                rows[cells[0]] = (line.strip(), float(cells[5].split(" ")[0]) * 60)
            except ValueError:
                continue
    return rows


def section(known: dict, runs: list[dict] | None = None, kept: dict[str, tuple[str, float]] | None = None) -> str:
    """The experiments' cost as a Markdown section for BENCHMARKS.md: the projections in ``known``, the rows in
    ``kept`` (:func:`kept_rows`) of the experiments ``known`` lacks, as they were, and, where given, what the
    bundled full runs actually took (:func:`bundled_runs`)."""
    rows = [
        "## Experiments: what each full run costs",
        "",
        "Measured by `python -m app.experiments time all --threads 1 --write-benchmarks` (CPU time of timed steps, "
        "projected to the full budget; 3 seeds per arm; two runs at once, `--jobs 2`, one thread each). "
        "The reference column is one step of a fixed tiny BERT at the time of measuring (app/experiments/timing.py): "
        "rescale the projection by (reference on your machine) / (reference here).",
        "",
        "| experiment | arms × seeds | steps per arm | ms per step (1 thread) | evaluations + final per run "
        "| projected, 2 jobs | reference step | measured |",
        "|---|---|---|---|---|---|---|---|",
    ]
    total = 0.0
    for name, r in known.items():
        arms = r["arms"]
        steps = sorted({a["steps"] for a in arms.values()})
        ms = [a["step_ms"] for a in arms.values()]
        extra = [a["evaluations"] * a["eval_s"] + a["final_s"] for a in arms.values()]
        prep = f" (of which {r['prepare_s'] / 60:.1f} min the teacher, alone)" if r.get("prepare_s") else ""
        ref = (r["reference_ms_before"] + r["reference_ms_after"]) / 2
        rows.append(
            f"| {name} | {len(arms)} × {r['seeds']} | {'–'.join(map(str, steps))} | {min(ms):.0f}–{max(ms):.0f} | "
            f"{min(extra):.0f}–{max(extra):.0f} s | {r['projected_s'] / 60:.1f} min{prep} | {ref:.0f} ms | "
            f"{r['measured']} |"
        )
        total += r["projected_s"]
    for name, (row, seconds) in (kept or {}).items():
        if name not in known:
            rows.append(row)
            total += seconds
    rows += [
        "",
        f"All of them: {total / 60:.0f} min projected (`python -m app.experiments run all --jobs 2 --threads 1`; "
        "the pool's last runs of each experiment may leave a core idle for a few minutes).",
    ]
    if runs:
        rows += [
            "",
            "### The bundled results: what their runs took",
            "",
            "From each `assets/experiments/<name>.json`'s own record: the wall time of the last command, as it "
            "ran (a run made while other training shared the machine took longer than the projection; a "
            "command that resumed skipped the arm × seed runs an earlier one had finished), and every arm × "
            "seed run's own wall time, summed, whichever command ran it.",
            "",
            "| experiment | arms × seeds | wall time | runs' own time, summed | jobs | device | finished | command |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in runs:
            wall = f"{r['wall_s'] / 60:.1f} min" if r["wall_s"] else "?"
            summed = f"{r['runs_s'] / 60:.1f} min" if r.get("runs_s") else "?"
            rows.append(
                f"| {r['experiment']} | {r['arms']} × {r['seeds']} | {wall} | {summed} | {r['jobs']} | "
                f"{r['device']} | {r['finished']} | `{r['command']}` |"
            )
    return "\n".join(rows)


def write_section(path: Path, text: str) -> None:
    """Put ``text`` between the experiments markers of ``path`` (appended the first time)."""
    body = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"{START}\n{text}\n{END}"
    if START in body and END in body:
        body = body[: body.index(START)] + block + body[body.index(END) + len(END) :]
    else:
        body = body.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(body, encoding="utf-8")
