"""A page's state in the URL, stated once: each parameter's name, kind, default, range, and the label and
help of the widget that sets it. ``ui.bind`` reads the URL into session state and ``ui.widget`` draws
the widget from the same statement. Parsing is strict and every value a link carries that is not used
becomes a note (never a traceback). Pure: no streamlit here.

    SPEC = Spec(Param("seed", "int", 0, lo=0, hi=2**31 - 1, label="Seed"),
                Param("rate", "float", 0.15, lo=0.01, hi=0.9, step=0.01, label="Masking rate"))
    values, notes = parse({"seed": ["7"]}, SPEC)   # defaults where a value is missing or bad
    query = encode(values, SPEC)                  # only what differs from the defaults

Integers are ASCII ``[+-]?[0-9]+`` (no ``٥``, no ``1_000``), numbers the same with a decimal part or
exponent; a key given twice uses its last value and says so (the URL is rewritten to that value).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

from app.core.text import md

KINDS = ("str", "int", "float", "bool", "choice")
INT = re.compile(r"[+-]?[0-9]+")
FLOAT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Param:
    name: str  # the URL key, and (scoped to its page, except shared ones) the widget's key
    kind: str  # str | int | float | bool | choice
    default: Any
    lo: float | None = None  # int and float: the allowed range, inclusive
    hi: float | None = None
    choices: tuple = ()  # choice: the allowed values
    max_len: int = 1000  # str: the longest value, in characters
    label: str = ""  # the widget's label
    help: str | None = None  # the widget's tooltip
    widget: str = ""  # "" = the kind's usual widget; or slider | number | select | radio | area | line
    step: float | None = None
    fmt: str | None = None  # slider / number format, e.g. "percent", "%.2f"
    labels: tuple[tuple[Any, str], ...] = ()  # choice: (value, what the widget shows)
    shared: bool = False  # True: one key for every page (the text a student types), else scoped to its page
    pattern: str = ""  # str: a regular expression the whole value must match ("" = any text within max_len)
    expects: str = ""  # str with a pattern: what a value looks like, as a note about a link says it

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r}")
        if self.kind == "choice" and self.default not in self.choices:
            raise ValueError(f"{self.name}: default {self.default!r} is not one of its choices")

    def shown(self, value) -> str:
        """What a choice's widget shows for ``value``."""
        return dict(self.labels).get(value, str(value))


class Spec(tuple):
    """The parameters of one page, in order; ``SPEC.seed`` is the parameter named seed."""

    def __new__(cls, *params: Param):
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate parameter names in {names}")
        return super().__new__(cls, params)

    def __getattr__(self, name: str) -> Param:
        for p in self:
            if p.name == name:
                return p
        raise AttributeError(name)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self}


TEXT_LIMIT = 1000  # characters in a text box, on every page


def text_param(default: str, label: str = "Your text", name: str = "text", shared: bool = True) -> Param:
    """The box a student types into. Its key is shared by every lesson (``text``), so a sentence typed on
    one page is there on the next; a second box (``text_b``) is its page's own."""
    return Param(
        name,
        "str",
        default,
        max_len=TEXT_LIMIT,
        label=label,
        widget="area",
        shared=shared,
        help=f"Up to {TEXT_LIMIT:,} characters; a longer paste is cut to that, with a note.",
    )


def seed_param(default: int = 0, label: str = "Seed", help: str | None = None) -> Param:
    return Param(
        "seed",
        "int",
        default,
        lo=0,
        hi=2**31 - 1,
        label=label,
        widget="number",
        help=help or "Every random draw on this page comes from this seed: the same seed, the same view.",
    )


FIGURE = "figure"  # the URL key that names a lesson's stage figure (figure_param)


def figure_param(figures: tuple[tuple[str, str], ...]) -> Param:
    """Which of a lesson's figures is its *stage figure*: the one presenter mode puts under the title, sized to the
    screen, and the one the handout prints. ``figures`` lists (name, what the widget shows) in the order of
    ``app/figures/<slug>.py``'s ``FIGURES``; the first is the lesson's usual key figure, the default (left out of
    links). A deck's view names another with ``figure=<name>``; a name the lesson does not have is a note, like
    any value a link carries that cannot be used."""
    names = tuple(name for name, _ in figures)
    return Param(
        FIGURE,
        "choice",
        names[0],
        choices=names,
        labels=tuple(figures),
        widget="select",
        label="Figure on the projector",
        help="Presenter mode shows this figure first, under the title, as large as the screen allows; "
        "the handout prints it too. The link to this view and a deck's slide keep the choice.",
    )


def _values(raw: Any) -> list[str]:
    if isinstance(raw, (list, tuple)):
        return [str(v) for v in raw]
    return [str(raw)]


def parse_one(p: Param, raw: str) -> Any:
    """The value of one parameter from one URL string, or ValueError with a short reason."""
    s = raw if p.kind == "str" else raw.strip()
    if p.kind == "str":
        if len(s) > p.max_len:
            raise ValueError(f"longer than {p.max_len:,} characters")
        if p.pattern and s and not re.fullmatch(p.pattern, s):
            raise ValueError(f"expected {p.expects or 'another form'}")
        return s
    if p.kind == "bool":
        if s.lower() in TRUE:
            return True
        if s.lower() in FALSE:
            return False
        raise ValueError("expected 1 or 0")
    if p.kind == "choice":
        if s not in p.choices:
            raise ValueError(f"expected one of {', '.join(map(str, p.choices))}")
        return s
    if p.kind == "int":
        if not INT.fullmatch(s):
            raise ValueError("expected a whole number written with the digits 0-9")
        value: float = int(s)
    else:
        if not FLOAT.fullmatch(s):
            raise ValueError("expected a number written with the digits 0-9")
        value = float(s)
        if not math.isfinite(value):
            raise ValueError("expected a finite number")
    if (p.lo is not None and value < p.lo) or (p.hi is not None and value > p.hi):
        raise ValueError(f"expected a value from {p.lo:g} to {p.hi:g}")
    return value


def ignored(name: str, raw: str, why: str) -> str:
    """The note for a link value that was not used (the value shown literally, whatever it holds)."""
    return f"Ignored {md(f'{name}={raw}')} in the link ({why}); using the default."


def parse(query: Mapping[str, Any], spec: tuple[Param, ...]) -> tuple[dict[str, Any], list[str]]:
    """(values for every parameter in spec, notes about link values that were ignored or repeated).
    ``query`` maps a key to its value or to every value it was given (a key repeated in the URL)."""
    values, notes = {}, []
    for p in spec:
        values[p.name] = p.default
        if p.name not in query:
            continue
        given = _values(query[p.name])
        if not given:
            continue
        raw = given[-1]
        if len(given) > 1:
            notes.append(
                f"{md(p.name)} appears {len(given)} times in the link ("
                + ", ".join(md(v, 20) for v in given[:4])
                + ("…" if len(given) > 4 else "")
                + "); the last one counts and the link now holds only it."
            )
        try:
            values[p.name] = parse_one(p, raw)
        except ValueError as e:
            notes.append(ignored(p.name, raw, str(e)))
    return values, notes


def unknown_keys(query: Mapping[str, Any], known: set[str]) -> list[str]:
    """Notes for keys in the link that this page does not have (then dropped from the URL)."""
    return [f"Ignored {md(k)} in the link: this page has no such setting." for k in query if k not in known]


def encode_one(p: Param, value: Any) -> str:
    if p.kind == "bool":
        return "1" if value else "0"
    if p.kind == "float":
        return f"{float(value):g}"
    return str(value)


def fits(p: Param, value: Any) -> bool:
    """Whether ``value`` is a value this parameter can hold (a carried-over session value may not be)."""
    try:
        return parse_one(p, encode_one(p, value)) == value
    except (ValueError, TypeError, AttributeError):
        return False


def encode(values: Mapping[str, Any], spec: tuple[Param, ...]) -> dict[str, str]:
    """Query parameters for the values that differ from their defaults (short, readable links)."""
    out = {}
    for p in spec:
        if p.name in values and values[p.name] != p.default:
            out[p.name] = encode_one(p, values[p.name])
    return out
