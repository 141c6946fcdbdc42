"""``python -m app.lessons new <slug>``: a new lesson that runs and passes its tests, to make your own.

It writes the three files a lesson is (docs/architecture.md, "Adding a lesson") and a first test:

    app/lessons/<slug>.py    the library: ORDER, TITLE, ICON, LINE, SPEC, MODELS, Inputs, Result, TAKEAWAY, run
    app/figures/<slug>.py    key_figure(r) and every_figure(r)
    pages/<slug>.py          the thin page
    tests/test_<slug>.py     run on the bundled model, the figure, an empty box

The lesson it writes is a real one, small: how the BERT stand-in's WordPiece tokenizer cuts each word of your
sentence into pieces. Replace its idea with yours, one file at a time, keeping its tests green; the router, the
home page, lecture mode and the per-lesson tests (deep links, injection, base size, phone) find it by its slug.
Nothing is overwritten: an existing file stops it before anything is written."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parents[2]
SLUG = re.compile(r"[a-z][a-z0-9_]{1,39}")
TEMPLATES = Path(__file__).resolve().parent / "_scaffold"
FILES = {
    "lesson.py.tmpl": "app/lessons/{slug}.py",
    "figures.py.tmpl": "app/figures/{slug}.py",
    "page.py.tmpl": "pages/{slug}.py",
    "test.py.tmpl": "tests/test_{slug}.py",
}


class Refused(Exception):
    """Why the scaffold wrote nothing, in one sentence."""


def plan(slug: str, title: str, order: int, root: Path = ROOT) -> dict[Path, str]:
    """{path: text} of the files a new lesson ``slug`` is, or :class:`Refused` (a bad slug, a slug in use)."""
    if not SLUG.fullmatch(slug):
        raise Refused(
            f"{slug!r} is not a slug: lower-case letters, digits and _, starting with a letter, "
            "2 to 40 characters (it is the page's URL and its files' name)"
        )
    taken = [path for name in FILES.values() if (path := root / name.format(slug=slug)).exists()]
    if taken:
        raise Refused(f"{slug!r} is taken: {', '.join(str(p.relative_to(root)) for p in taken)} exists already")
    if not title.strip():
        raise Refused("the title is empty: it is what the navigation and the home page show")
    text = title.strip().replace("\\", "/").replace('"""', "'''")  # safe inside the files' docstrings
    values = {
        "slug": slug,
        "title": repr(title.strip()),
        "title_text": text,
        "order": int(order),
        "line": repr("How the BERT stand-in's tokenizer cuts each word of your sentence into pieces."),
    }
    return {
        root / name.format(slug=slug): Template((TEMPLATES / tmpl).read_text(encoding="utf-8")).substitute(values)
        for tmpl, name in FILES.items()
    }


def write(files: dict[Path, str]) -> list[Path]:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.lessons", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    new = sub.add_parser("new", help="write a new lesson that runs and passes its tests")
    new.add_argument("slug", help="the lesson's URL and its files' name, e.g. token_counts")
    new.add_argument("--title", help="what the navigation shows (default: the slug in words)")
    new.add_argument("--order", type=int, default=95, help="its place in teaching order (the lessons use 10-110)")
    args = parser.parse_args(argv)
    title = args.title or args.slug.replace("_", " ").capitalize()
    try:
        written = write(plan(args.slug, title, args.order, root))
    except Refused as refused:
        print(f"Nothing written: {refused}.", file=sys.stderr)
        return 2
    print("Wrote " + ", ".join(str(p.relative_to(root)) for p in written))
    print(f"Test it: python -m pytest -q tests/test_{args.slug}.py tests/test_layering.py")
    print(f"     and python -m pytest -q tests/pages tests/test_figure_injection.py -k {args.slug}")
    print(f"See it: python -m app.serve, then open /{args.slug}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
