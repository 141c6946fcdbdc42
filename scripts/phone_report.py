"""The phone and accessibility numbers of every page, as a table (issue 52's before/after).

    python scripts/phone_report.py [--root DIR] [--pages home,masking] [--axe] [--shots /tmp/phone-shots]
                                   [--query layout=phone]

Starts the app found in ``--root`` (default: this checkout; another checkout measures "before"), opens each page
at 390×844 (and, with ``--axe``, at 1280×720 too) in Debian's chromium, and prints per page: sideways overflow
(px), the key figure's smallest text (px), its overlapping label pairs, its labels outside the figure, and the
serious+critical axe-core violations (elements). With ``--shots`` it saves a full-page screenshot per page.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e import phone  # noqa: E402
from tests.e2e.browser import browser, free_port  # noqa: E402


def serve(root: Path):
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "BVE_WARM_START": "0", "PYTHONPATH": str(root)}
    log = open("/tmp/phone-report-server.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "streamlit_app.py",
            "--server.headless=true",
            f"--server.port={port}",
            "--server.address=127.0.0.1",
            "--browser.gatherUsageStats=false",
            "--server.fileWatcherType=none",
        ],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(480):
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2):
                return proc, base
        except OSError:
            time.sleep(0.25)
    proc.terminate()
    raise TimeoutError("no server")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=str(ROOT))
    ap.add_argument("--pages", default="")
    ap.add_argument("--axe", action="store_true")
    ap.add_argument("--shots", default="")
    ap.add_argument("--query", default="")
    ap.add_argument(
        "--wait-phone", action="store_true", help="wait for the phone's draw (a checkout with app/ui/layout.py)"
    )
    args = ap.parse_args()
    root = Path(args.root)
    if args.pages:
        slugs = args.pages.split(",")
    else:
        from app.lessons import TOOLS, find_lessons

        slugs = ["home", *(lesson.slug for lesson in find_lessons(root)), *(t.slug for t in TOOLS)]
    proc, base = serve(root)
    try:
        sizes = [("phone", phone.PHONE)] + ([("desktop", phone.DESKTOP)] if args.axe else [])
        print(
            "| page | viewport | overflow px | key figure smallest text px | overlapping pairs | labels outside"
            " | formulas cut (px) | axe serious+critical (rules: elements) |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for label, size in sizes:
            with browser(size) as (context, watcher):
                for slug in slugs:
                    page = phone.open_page(
                        context, watcher, base, slug, args.query, phone=args.wait_phone and label == "phone"
                    )
                    over = phone.overflow(page)
                    name = phone.KEY_FIGURES.get(slug)
                    fig = phone.figure_text(page, name) if name else None
                    axe = phone.axe(page) if args.axe else None
                    axe_text = ("; ".join(f"{v['id']}: {v['nodes']}" for v in axe) or "0") if axe is not None else "-"
                    if fig:
                        cells = (f"{fig['smallest']:.1f}", f"{len(fig['overlaps'])}", f"{len(fig['outside'])}")
                    else:
                        cells = ("-", "-", "-")
                    cut = phone.cut_formulas(page)
                    print(f"| {slug} | {label} | {over} | {' | '.join(cells)} | {cut or 0} | {axe_text} |", flush=True)
                    if fig and os.environ.get("PHONE_REPORT_DETAIL"):
                        print("   ", fig["overlaps"][:8], fig["outside"][:8], fig["small"][:8])
                    if axe and os.environ.get("PHONE_REPORT_DETAIL"):
                        for v in axe:
                            print("   ", v["id"], v["targets"])
                    if args.shots and label == "phone":
                        Path(args.shots).mkdir(parents=True, exist_ok=True)
                        phone.screenshot(page, f"{args.shots}/{slug}.png", name if fig else None)
                    page.close()
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
