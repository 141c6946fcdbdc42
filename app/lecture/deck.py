"""A lecture as a deck: an ordered list of prepared *views* — a lesson page and its URL state — each with a
title and a one-line speaker note, presented one per screen. Pure: no streamlit, no torch at import.

    views = default_deck()                    # the usual lecture on BERT variants, from the examples gallery
    s = encode(views)                         # compact and URL-safe: the ``deck`` URL parameter
    views, notes = decode(s)                  # validated like every URL state: bad entries dropped, with notes
    text = to_json(views)                     # the same deck as a small file to download ...
    views, notes = from_json(text)            # ... and to load again (validated the same way)

A view's state is its lesson's URL query, checked against that lesson's ``SPEC`` (``app.core.state``): a page
that no longer exists drops the view, a value the lesson would refuse drops that value, and each drop is
a note (user values through ``app.core.text.md``). In the URL ``slide=n`` (from 1) says which view is on the
screen; a link with ``slide`` and no ``deck`` presents the default deck.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import json
import zlib
from dataclasses import dataclass
from typing import Callable, Mapping
from urllib.parse import urlencode

from app.core import state
from app.lecture.examples import EXAMPLES
from app.lessons import LESSONS
from app.models import chosen
from app.core.text import md

FORMAT = "bert-variants-explorer/deck"
VERSION = 1
PREFIX = "1."  # the encoded form's version, so that a later format can still read old links
MAX_VIEWS = 60
MAX_ENCODED = 8000  # characters of the ``deck`` URL parameter (browsers and servers take far longer URLs)
MAX_JSON = 256_000  # bytes of a deck file, and of a decoded deck
TITLE_LIMIT = 120
NOTE_LIMIT = 300

#: The usual lecture on BERT variants, by lesson: RoBERTa's dynamic masking, ALBERT's parameters and shared
#: layers, DistilBERT, ELECTRA, XLNet, attention, then every variant side by side and which one to choose.
#: Lessons not named here (newer ones) follow, in the order of app/lessons/__init__.py.
LECTURE = ("masking", "albert_params", "albert_activations", "distillation", "electra", "xlnet", "attention", "compare")


@dataclass(frozen=True)
class View:
    """One slide: a lesson page (its slug, the URL path) in a given state."""

    page: str  # the lesson's slug, e.g. "masking" (app/lessons/__init__.py)
    query: tuple[tuple[str, str], ...] = ()  # its URL state: (name, value) pairs, as in a link
    title: str = ""
    note: str = ""  # the speaker note, one line

    @property
    def params(self) -> dict[str, str]:
        return dict(self.query)

    def link(self, base: str = "", **extra: str) -> str:
        """The view's address: ``base`` (scheme, host and any path prefix, no trailing slash) + its page +
        its query, with ``extra`` parameters (``slide``, ``presenter``, ...) after the view's own."""
        query = urlencode({**self.params, **extra})
        return f"{base.rstrip('/')}/{self.page}" + (f"?{query}" if query else "")


def view(page: str, query: Mapping[str, str] | None = None, title: str = "", note: str = "") -> View:
    return View(page, tuple((str(k), str(v)) for k, v in (query or {}).items()), title, note)


# ----------------------------------------------------------------------------- the default deck


def lesson_of(slug: str):
    return next((lesson for lesson in LESSONS if lesson.slug == slug), None)


def default_deck() -> tuple[View, ...]:
    """The usual lecture, built from the examples gallery (app/lecture/examples.py): the lessons in ``LECTURE`` order,
    then every other lesson in the order of app/lessons/__init__.py. A lesson contributes its examples marked
    ``lecture``, else its first example, else its default view (a lesson with no example yet)."""
    order = [lesson_of(slug) for slug in LECTURE if lesson_of(slug) is not None]
    order += [lesson for lesson in LESSONS if lesson.slug not in LECTURE]
    views = []
    for lesson in order:
        examples = [ex for ex in EXAMPLES if ex.page == lesson.path]
        chosen = [ex for ex in examples if ex.lecture] or examples[:1]
        if chosen:
            views += [view(lesson.slug, ex.query, ex.label, ex.why) for ex in chosen]
        else:
            views.append(view(lesson.slug, {}, lesson.title, lesson.line))
    return tuple(views)


# ----------------------------------------------------------------------------- validation


def lesson_spec(slug: str):
    """The lesson's URL parameters (its library's SPEC), or None when its library cannot be imported. Imports
    the library (and so torch): call only where a lesson runs anyway."""
    lesson = lesson_of(slug)
    try:
        return importlib.import_module(lesson.library).SPEC
    except Exception:  # a lesson still being written: its values cannot be checked
        return None


def _clean_text(value: object, limit: int) -> str:
    return " ".join(str(value).split())[:limit] if isinstance(value, str) else ""


def validate(
    entries: list, spec_of: Callable[[str], object] | None = lesson_spec
) -> tuple[tuple[View, ...], list[str]]:
    """Views from decoded entries ``{"page", "query", "title", "note"}``, and notes for what was dropped: an
    entry that is not a view, a page that is not a lesson, and every query value the lesson's SPEC refuses
    (or does not have). Kept values are canonical: a value equal to its default is left out, as in links.
    ``spec_of=None``: a deck this app validated already (a session's own), whose values are kept as they are."""
    views, notes = [], []
    if len(entries) > MAX_VIEWS:
        notes.append(f"The deck has {len(entries)} views; only the first {MAX_VIEWS} are kept.")
        entries = entries[:MAX_VIEWS]
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("page"), str):
            notes.append(f"Dropped view {n} of the deck: it is not a view (a page and its settings).")
            continue
        page, query = entry["page"], entry.get("query", {})
        title = _clean_text(entry.get("title", ""), TITLE_LIMIT)
        note = _clean_text(entry.get("note", ""), NOTE_LIMIT)
        lesson = lesson_of(page)
        if lesson is None:
            notes.append(
                f"Dropped view {n} of the deck ({md(title or page, 40)}): there is no lesson {md(page, 40)} (any more)."
            )
            continue
        title = title or lesson.title
        where = f"View {n} of the deck ({md(title, 40)}): "
        if not isinstance(query, dict) or not all(isinstance(v, (str, int, float, bool)) for v in query.values()):
            notes.append(where + "its settings are not a list of values; they were dropped (the lesson's defaults).")
            query = {}
        query = {str(k): ("1" if v is True else "0" if v is False else str(v)) for k, v in query.items()}
        if spec_of is None:
            views.append(View(page, tuple(query.items()), title, note))
            continue
        spec = spec_of(page)
        if spec is None:
            if query:
                notes.append(where + "this lesson's settings cannot be checked yet; they were dropped (its defaults).")
            views.append(View(page, (), title, note))
            continue
        spec = (*spec, chosen.PARAM)  # a view may name your own model for its lesson (app.models.chosen)
        known = {p.name for p in spec}
        values, refused = state.parse({k: v for k, v in query.items() if k in known}, spec)
        notes += [where + r for r in refused]
        notes += [
            where + f"Ignored {md(k)}: {md(lesson.title, 40)} has no such setting." for k in query if k not in known
        ]
        given = {p.name for p in spec if p.name in query}
        canonical = state.encode({k: v for k, v in values.items() if k in given}, spec)
        views.append(View(page, tuple(canonical.items()), title, note))
    return tuple(views), notes


# ----------------------------------------------------------------------------- the URL form


def _entries(views) -> list[dict]:
    return [{"page": v.page, "query": v.params, "title": v.title, "note": v.note} for v in views]


def encode(views) -> str:
    """The deck as one URL-safe string (the ``deck`` parameter): its views as compact JSON, deflated, in
    base64url without padding, after a version prefix."""
    rows = [[v.page, v.params, v.title, v.note] if v.note else [v.page, v.params, v.title] for v in views]
    raw = json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii").rstrip("=")


def _inflate(data: bytes) -> bytes:
    """Decompress at most MAX_JSON bytes (a small link must not unpack into gigabytes)."""
    d = zlib.decompressobj()
    out = d.decompress(data, MAX_JSON + 1)
    if len(out) > MAX_JSON or d.unconsumed_tail:
        raise ValueError("it unpacks to more than a deck can hold")
    if not d.eof:
        raise ValueError("it is cut short (was part of the link lost when it was copied?)")
    return out


def decode(s: str, spec_of: Callable[[str], object] | None = lesson_spec) -> tuple[tuple[View, ...], list[str]]:
    """The views of an encoded deck and notes about what was dropped; a deck that cannot be read at all gives
    no views and one note saying why (never an exception)."""
    s = s.strip()
    try:
        if len(s) > MAX_ENCODED:
            raise ValueError(f"longer than {MAX_ENCODED:,} characters")
        if not s.startswith(PREFIX):
            raise ValueError("not a deck this app writes")
        body = s[len(PREFIX) :]
        if not body or not all(c.isascii() and (c.isalnum() or c in "-_") for c in body):
            raise ValueError("it holds characters a deck never has")
        rows = json.loads(_inflate(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))).decode("utf-8"))
        if not isinstance(rows, list):
            raise ValueError("it is not a list of views")
    except (binascii.Error, zlib.error, UnicodeDecodeError):
        return (), [
            f"Ignored the deck in the link ({md(s, 24)}): it is damaged (was part of the link lost when it "
            "was copied?)."
        ]
    except (ValueError, RecursionError) as e:
        return (), [f"Ignored the deck in the link ({md(s, 24)}): {e}."]
    entries = [
        {
            "page": r[0],
            "query": r[1] if len(r) > 1 else {},
            "title": r[2] if len(r) > 2 else "",
            "note": r[3] if len(r) > 3 else "",
        }
        if isinstance(r, list) and r
        else r
        for r in rows
    ]
    return validate(entries, spec_of)


# ----------------------------------------------------------------------------- the file form


def to_json(views) -> str:
    """The deck as a small JSON file a lecturer keeps and loads again (``from_json``)."""
    return json.dumps({"format": FORMAT, "version": VERSION, "views": _entries(views)}, ensure_ascii=False, indent=2)


def from_json(text: str | bytes, spec_of: Callable[[str], object] = lesson_spec) -> tuple[tuple[View, ...], list[str]]:
    """The views of a deck file and notes about what was dropped (a file that is not a deck: no views, a note)."""
    try:
        if len(text) > MAX_JSON:
            raise ValueError(f"larger than {MAX_JSON // 1000} kB")
        data = json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("views"), list):
            raise ValueError("it is not a deck saved by this app")
        if data.get("version") != VERSION:
            raise ValueError(f"it is version {md(data.get('version'), 10)} of the format; this app reads {VERSION}")
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        return (), [f"Could not load that file: {e}."]
    return validate(data["views"], spec_of)


# ----------------------------------------------------------------------------- editing


def add(views, new: View) -> tuple[View, ...]:
    return (*views, new)


def remove(views, index: int) -> tuple[View, ...]:
    return tuple(v for i, v in enumerate(views) if i != index)


def move(views, index: int, by: int) -> tuple[View, ...]:
    """The deck with view ``index`` moved ``by`` places (-1: one earlier), kept within the deck."""
    views = list(views)
    to = min(max(index + by, 0), len(views) - 1)
    views.insert(to, views.pop(index))
    return tuple(views)


def titled(views, titles: list[str], notes: list[str]) -> tuple[View, ...]:
    """The deck with new titles and speaker notes (cut to their limits; an empty title becomes the lesson's)."""
    out = []
    for v, t, n in zip(views, titles, notes):
        lesson = lesson_of(v.page)
        out.append(
            View(
                v.page,
                v.query,
                _clean_text(t or "", TITLE_LIMIT) or (lesson.title if lesson else v.page),
                _clean_text(n or "", NOTE_LIMIT),
            )
        )
    return tuple(out)
