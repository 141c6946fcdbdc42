"""Screenshot every page in headless chromium, to look at what a student or a lecturer sees.

    python scripts/screenshots.py [--out screenshots] [--presenter] [--size 1280x720] [--pages home masking ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lessons import LESSONS  # noqa: E402
from tests.e2e.browser import browser, exception_boxes, streamlit_server, wait_for_app  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="screenshots", type=Path)
    p.add_argument("--presenter", action="store_true")
    p.add_argument("--size", default="1280x900")
    p.add_argument("--full", action="store_true", help="the whole page, not only the first screen")
    p.add_argument("--pages", nargs="*", help="slugs (home for the home page); default all")
    p.add_argument("--query", default="", help="extra query string, e.g. seed=3")
    a = p.parse_args()
    w, h = (int(x) for x in a.size.split("x"))
    a.out.mkdir(parents=True, exist_ok=True)
    slugs = [("home", "")] + [(lesson.slug, lesson.slug) for lesson in LESSONS]
    if a.pages:
        slugs = [s for s in slugs if s[0] in a.pages]
    query = "&".join(x for x in ["presenter=1" if a.presenter else "", a.query] if x)
    with streamlit_server() as (base, _), browser((w, h)) as (context, watcher):
        page = watcher.watch(context.new_page())
        for name, path in slugs:
            page.goto(f"{base}/{path}" + (f"?{query}" if query else ""))
            wait_for_app(page)
            page.wait_for_timeout(1500)
            file = a.out / f"{name}{'-presenter' if a.presenter else ''}.png"
            page.screenshot(path=str(file), full_page=a.full)
            print(file, "exceptions:", len(exception_boxes(page)))
    print("console errors:", watcher.console_errors[:5], "blocked:", watcher.blocked[:5])


if __name__ == "__main__":
    main()
