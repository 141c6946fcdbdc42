"""``python -m app.experiments run NAME|all [--device cpu] [--quick [--allow-dirty]] [--jobs 2]``, ``list``,
``plans [--json]`` and ``verdicts [--readme docs/results.md] [--json]`` (every comparison's verdict, recomputed from the
bundled results; with ``--readme`` also written into docs/results.md's "Measured" table, which a full ``run`` rewrites
too; with ``--json`` also into each results file's stored ``verdicts``).

A full run follows its experiment's plan (app/experiments/plans.py): the plan's seeds (``--seeds`` may only
repeat them) and a committed tree (uncommitted changes under app/ are refused; ``--allow-dirty`` is for
``--quick`` only). The results file records the plan version as ``plan``.

Runs resume: a finished arm × seed is skipped and an interrupted one continues from its last saved
state (work folder ``--work``, default ``.train/experiments``). The results go to
``assets/experiments/<name>.json`` (``--quick``: a handful of steps and 1 seed, written under the work
folder unless ``--out`` says otherwise, so a smoke run never replaces the bundled results).

``--jobs N`` trains N arm × seed runs at once in separate processes (``--threads`` each, default 1):
on a 2-core CPU ``--jobs 2`` about doubles the throughput of these tiny models.
``--checkpoints DIR`` (sentence only): also write the seed-0 NSP and SOP models as Hugging Face
``BertForPreTraining`` folders ``DIR/bert-nsp-tinystories`` and ``DIR/bert-sop-tinystories``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from app.experiments import EXPERIMENTS


def _write_benchmarks(store: Path, measured: list[dict]) -> None:
    """BENCHMARKS.md's experiments section: the projections (``store`` merged with ``measured``) and what the
    bundled results' own runs took."""
    from app.experiments import runner, timing

    path = runner.REPO_ROOT / "BENCHMARKS.md"
    kept = timing.kept_rows(path.read_text(encoding="utf-8")) if path.exists() else {}
    timing.write_section(
        path, timing.section(timing.merge(store, measured), timing.bundled_runs(runner.DEFAULT_OUT), kept)
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m app.experiments", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the experiments and their claims")
    v = sub.add_parser("verdicts", help="every comparison's verdict from the bundled results (Holm over all of them)")
    v.add_argument(
        "--readme",
        type=Path,
        default=None,
        help="also write the table into this file's verdicts markers (docs/results.md)",
    )
    v.add_argument(
        "--json",
        action="store_true",
        help="also rewrite the verdicts stored in each results file (nothing else in it changes)",
    )
    r = sub.add_parser("run", help="run one experiment (or all) and write its JSON")
    r.add_argument("names", nargs="+", metavar="NAME", help=f"any of {', '.join(EXPERIMENTS)}, or all")
    r.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="seeds per arm (default: the plan's, app/experiments/plans.py; another count is refused; --quick: 1)",
    )
    r.add_argument(
        "--allow-dirty",
        action="store_true",
        help="with --quick only: run from a tree with uncommitted changes under app/ (a full run refuses it)",
    )
    r.add_argument("--device", default="cpu")
    r.add_argument("--quick", action="store_true", help="a handful of steps: a smoke run (tests use it)")
    r.add_argument(
        "--corpus", default=None, help="folder with tinystories_{train,valid}.txt (default ../shared/corpus)"
    )
    r.add_argument("--work", type=Path, default=None, help="resumable state (default .train/experiments)")
    r.add_argument("--out", type=Path, default=None, help="where the JSON goes (default assets/experiments)")
    r.add_argument("--jobs", type=int, default=1, help="runs at once, in separate processes")
    r.add_argument("--threads", type=int, default=None, help="torch threads per run")
    r.add_argument("--arms", nargs="+", default=None, help="only these arms (the JSON then holds only them)")
    r.add_argument("--checkpoints", type=Path, default=None, help="sentence: export the NSP/SOP models here")
    pl = sub.add_parser("plans", help="every experiment's analysis plan and its history (versions, looks)")
    pl.add_argument(
        "--json",
        action="store_true",
        help="also write into each results file the plan version its run followed (nothing else changes)",
    )
    t = sub.add_parser("time", help="measure what a full run would cost here (a minute or two), without running it")
    t.add_argument("names", nargs="+", metavar="NAME", help=f"any of {', '.join(EXPERIMENTS)}, or all")
    t.add_argument("--steps", type=int, default=30, help="timed steps per arm")
    t.add_argument("--seeds", type=int, default=3, help="seeds the projection counts (BENCHMARKS.md's table: 3)")
    t.add_argument("--jobs", type=int, default=2, help="parallel runs the projection assumes")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--device", default="cpu")
    t.add_argument("--corpus", default=None)
    t.add_argument("--work", type=Path, default=None)
    t.add_argument("--write-benchmarks", action="store_true", help="update the experiments section of BENCHMARKS.md")
    return p


def _time(a, names: list[str]) -> int:
    """`time`: what a full run of each experiment would cost here, projected from a few timed steps."""
    import json

    from app.experiments import runner, timing

    grand, measured = 0.0, []
    for name in names:
        r = timing.time_experiment(
            name,
            steps=a.steps,
            seeds=a.seeds,
            jobs=a.jobs,
            device=a.device,
            corpus=a.corpus or runner.DEFAULT_CORPUS,
            work=a.work or runner.DEFAULT_WORK,
        )
        grand += r["projected_s"]
        measured.append(r)
        print(json.dumps(r), flush=True)
        print(
            f"[{name}] projected {r['projected_s'] / 60:.1f} min with {a.jobs} job(s) of {a.threads} thread(s) "
            f"(reference step {r['reference_ms_before']:.0f}/{r['reference_ms_after']:.0f} ms)",
            flush=True,
        )
    print(f"[{' '.join(names)}] projected {grand / 60:.1f} min", flush=True)
    if a.write_benchmarks:
        _write_benchmarks((a.work or runner.DEFAULT_WORK) / "timing.json", measured)
    return 0


def _run(a, argv: list[str], names: list[str]) -> int:
    """`run`: each experiment in turn, its JSON, and the tables that follow from it."""
    from app.experiments import runner

    work = a.work or runner.DEFAULT_WORK
    out = a.out or (work / "quick-results" if a.quick else runner.DEFAULT_OUT)
    command = "python -m app.experiments " + " ".join(shlex.quote(x) for x in argv)
    for name in names:
        t = time.time()
        try:
            path = runner.run_experiment(
                name,
                seeds=a.seeds,
                device=a.device,
                quick=a.quick,
                corpus=a.corpus or runner.DEFAULT_CORPUS,
                work=work,
                out=out,
                jobs=a.jobs,
                threads=a.threads,
                command=command,
                arms=a.arms,
                allow_dirty=a.allow_dirty,
            )
        except runner.Refused as e:
            print(f"[{name}] refused: {e}", file=sys.stderr, flush=True)
            return 2
        print(f"[{name}] done in {time.time() - t:.0f} s -> {path}", flush=True)
        store = work / "timing.json"
        if not a.quick and Path(out) == Path(runner.DEFAULT_OUT):  # its cost, in BENCHMARKS.md (others' rows kept)
            _write_benchmarks(store, [])
        readme = runner.REPO_ROOT / "docs" / "results.md"
        if not a.quick and Path(out) == Path(runner.DEFAULT_OUT) and readme.exists():  # the verdicts table follows
            from app.experiments import results

            results.write_measured(readme, Path(out))
        if name == "sentence" and a.checkpoints:
            from app.experiments import sentence

            for folder in sentence.export_checkpoints(
                a.checkpoints, quick=a.quick, device=a.device, corpus=a.corpus or runner.DEFAULT_CORPUS, work=work
            ):
                print(f"[sentence] checkpoint -> {folder}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = _parser()
    a = p.parse_args(argv)
    if a.cmd == "list":
        for name, e in EXPERIMENTS.items():
            print(f"{name:13s} {e.claim.title}\n{'':13s} {e.claim.claim}\n")
        return 0
    if a.cmd == "plans":
        from app.experiments import plans

        print(plans.table())
        if a.json:
            for path in plans.record_in_results():
                print(f"plan -> {path}")
        return 0
    if a.cmd == "verdicts":
        from app.experiments import results

        print(results.measured_table())
        if a.readme:
            results.write_measured(a.readme)
        if a.json:
            for path in results.rewrite_verdicts():
                print(f"verdicts -> {path}")
        return 0

    import torch

    if a.threads:
        torch.set_num_threads(a.threads)
    names = list(EXPERIMENTS) if "all" in a.names else a.names
    for name in names:
        if name not in EXPERIMENTS:
            p.error(f"unknown experiment {name!r}; choose from {', '.join(EXPERIMENTS)} or all")
    if a.cmd == "time":
        return _time(a, names)
    return _run(a, argv, names)


if __name__ == "__main__":
    raise SystemExit(main())
