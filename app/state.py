"""A page's state in the URL: declare the parameters once, parse ``st.query_params`` into values (with a
note for every malformed or stale one) and encode values back. Pure: no streamlit here.

    SPEC = (Param("text", "str", DEFAULT_TEXT, max_len=2000), Param("seed", "int", 0, lo=0, hi=2**31 - 1),
            Param("rate", "float", 0.15, lo=0.01, hi=0.9), Param("variant", "choice", "bert", choices=(...)))
    values, notes = parse(query_params, SPEC)   # defaults where a value is missing or bad
    query = encode(values, SPEC)                # only what differs from the defaults
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

KINDS = ("str", "int", "float", "bool", "choice", "ints")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: Any
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()
    max_len: int = 2000  # for str and ints

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r}")


def _first(raw: Any) -> str:
    if isinstance(raw, (list, tuple)):
        return str(raw[-1]) if raw else ""
    return str(raw)


def parse_one(p: Param, raw: Any) -> Any:
    """The value of one parameter, or ValueError with a short reason."""
    s = _first(raw).strip() if p.kind != "str" else _first(raw)
    if p.kind == "str":
        if len(s) > p.max_len:
            raise ValueError(f"longer than {p.max_len} characters")
        return s
    if p.kind == "bool":
        if s.lower() in ("1", "true", "yes", "on"):
            return True
        if s.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    if p.kind == "choice":
        if s not in p.choices:
            raise ValueError(f"expected one of {', '.join(map(str, p.choices))}")
        return s
    if p.kind == "ints":
        if len(s) > p.max_len:
            raise ValueError("too long")
        parts = s.replace(",", " ").split()
        try:
            return tuple(int(x) for x in parts)
        except ValueError:
            raise ValueError("expected whole numbers separated by spaces or commas") from None
    try:
        value = int(s) if p.kind == "int" else float(s)
    except ValueError:
        raise ValueError(f"expected a {'whole ' if p.kind == 'int' else ''}number") from None
    if p.kind == "float" and not math.isfinite(value):
        raise ValueError("expected a finite number")
    if (p.lo is not None and value < p.lo) or (p.hi is not None and value > p.hi):
        raise ValueError(f"expected a value from {p.lo:g} to {p.hi:g}")
    return value


def parse(query: Mapping[str, Any], spec: tuple[Param, ...]) -> tuple[dict[str, Any], list[str]]:
    """(values for every parameter in spec, notes about values that were ignored)."""
    values, notes = {}, []
    for p in spec:
        values[p.name] = p.default
        if p.name not in query:
            continue
        try:
            values[p.name] = parse_one(p, query[p.name])
        except ValueError as e:
            shown = _first(query[p.name])
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            notes.append(f"Ignored `{p.name}={shown}` in the link ({e}); using the default.")
    return values, notes


def encode_one(p: Param, value: Any) -> str:
    if p.kind == "bool":
        return "1" if value else "0"
    if p.kind == "ints":
        return " ".join(str(int(v)) for v in value)
    if p.kind == "float":
        return f"{float(value):g}"
    return str(value)


def encode(values: Mapping[str, Any], spec: tuple[Param, ...]) -> dict[str, str]:
    """Query parameters for the values that differ from their defaults (short, readable links)."""
    out = {}
    for p in spec:
        if p.name in values and values[p.name] != p.default:
            out[p.name] = encode_one(p, values[p.name])
    return out
