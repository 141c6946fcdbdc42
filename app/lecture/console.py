"""The presenter console: a second window (the lecturer's laptop screen) beside the projector's, on the same deck.

The console shows what only the lecturer reads — the current slide's speaker note, the next slide's title and
what it will show, the time since the presentation began, the slide list — and drives the projector: → or ← in
either window moves both. The projector then shows the slide's title, its stage and its takeaway, never the note.

The two windows are two Streamlit sessions (two browser windows, perhaps two app processes behind a balancer), so
what they agree on lives in the one room store (``app.classroom.rooms``: this process, or Redis), in the projector's
room — the one *Ask the class* uses — under :data:`KEY`, as a :class:`Position`. Whoever moves writes a position one
``version`` past the one it last saw; the other window polls (a second, one small read) and follows a version newer
than its own (:func:`follow`). The deck itself (an own deck's encoded form, up to ``deck.MAX_ENCODED`` characters)
does not fit one state value (``rooms.MAX_STATE_BYTES``): it is stored in :data:`CHUNK`-character parts under
``deck-0``, ``deck-1``… and the position names it by its digest, so the console reads it once per deck.

Pure: no streamlit, no torch. The console's address carries the room's code and its secret (``key``): whoever holds
it can move the slides, as whoever holds the projector's window can.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from urllib.parse import urlencode

from app.lecture import deck

KEY = "console"  # the room-state key of the position
DECK_KEY = "deck-{}"  # the room-state keys of the deck's parts
CHUNK = 3500  # characters of the encoded deck in one part (a part's JSON stays under rooms.MAX_STATE_BYTES)
PARTS = -(-deck.MAX_ENCODED // CHUNK)  # parts of the longest deck a link holds
POLL_S = 1.0  # how often each window reads the position while a console is open: one small read
IDLE_POLL_S = 10.0  # how often a projector with no console open looks for one (a poll costs a slide change ~0.1 s)
ALIVE_KEY = "console-alive"  # the room-state key the console writes each poll: when it last looked (seconds)
ALIVE_S = 20.0  # a console heard from this recently is open: the projector polls every POLL_S
SLUG = "console"  # the console page's address: <app>/console?room=CODE&key=SECRET


@dataclass(frozen=True)
class Position:
    """Where the presentation is: slide ``slide`` (from 1) of ``total`` of the deck named by ``digest`` ("" for the
    default deck), since ``started`` (seconds since the epoch, the first slide shown), written as ``version``."""

    slide: int
    total: int
    digest: str = ""
    started: float = 0.0
    version: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data) -> "Position | None":
        """The position stored in the room, or None for anything that is not one (a damaged or foreign value)."""
        if not isinstance(data, dict):
            return None
        try:
            p = cls(
                int(data["slide"]),
                int(data["total"]),
                str(data.get("digest", "")),
                float(data.get("started", 0.0)),
                int(data.get("version", 0)),
            )
        except (KeyError, TypeError, ValueError):
            return None
        return p if 1 <= p.slide <= max(p.total, 1) <= deck.MAX_VIEWS and p.version >= 0 else None


def alive(now: float) -> dict:
    """What the console writes under :data:`ALIVE_KEY` at each poll."""
    return {"at": now}


def console_open(stored, now: float) -> bool:
    """Whether a console is open on this room: what it wrote under :data:`ALIVE_KEY` (``alive``) is at most
    ``ALIVE_S`` old. Anything else stored there (nothing, a damaged value) means none."""
    at = stored.get("at") if isinstance(stored, dict) else None
    return isinstance(at, (int, float)) and not isinstance(at, bool) and 0 <= now - at <= ALIVE_S


def digest(encoded: str) -> str:
    """A short name of an encoded deck ("" for the default deck): which deck a position is on."""
    return hashlib.sha1(encoded.encode("utf-8")).hexdigest()[:16] if encoded else ""


def parts(encoded: str) -> list[dict]:
    """The encoded deck as the room stores it: ``{"part": i, "of": n, "text": ...}`` values of at most CHUNK
    characters (none for the default deck)."""
    chunks = [encoded[i : i + CHUNK] for i in range(0, len(encoded), CHUNK)]
    return [{"part": i, "of": len(chunks), "text": c} for i, c in enumerate(chunks)]


def joined(stored: list, wanted: str) -> str | None:
    """The encoded deck from its stored parts (``parts``), or None when they are missing, out of order, or not the
    deck named ``wanted`` (a digest)."""
    if not stored or not all(isinstance(s, dict) for s in stored):
        return None
    n = stored[0].get("of")
    if (
        not isinstance(n, int)
        or len(stored) < n
        or any(s.get("part") != i or not isinstance(s.get("text"), str) for i, s in enumerate(stored[:n]))
    ):
        return None
    encoded = "".join(s["text"] for s in stored[:n])
    return encoded if digest(encoded) == wanted else None


def moved(position: Position | None, slide: int, total: int, deck_digest: str, now: float) -> Position:
    """The position after a window moved to ``slide``: one version past ``position`` (the one it last saw), the
    clock kept (started now when nothing was shown before, or the deck changed)."""
    slide = min(max(slide, 1), max(total, 1))
    if position is None or position.digest != deck_digest:
        return Position(slide, total, deck_digest, now, (position.version + 1) if position else 1)
    return Position(slide, total, deck_digest, position.started or now, position.version + 1)


def follow(seen: int | None, shown: int, stored: Position | None) -> int | None:
    """The slide a window should move to, or None to stay: a stored position newer than the version this window
    last saw (``seen``; None: it has seen none) that names another slide than the one it shows (``shown``)."""
    if stored is None or (seen is not None and stored.version <= seen) or stored.slide == shown:
        return None
    return stored.slide


def neighbours(slide: int, total: int) -> tuple[int | None, int | None]:
    """(previous, next) slide numbers, None past either end."""
    return (slide - 1 if slide > 1 else None), (slide + 1 if slide < total else None)


def clock(seconds: float) -> str:
    """Elapsed time as a lecturer reads it: 0:07, 12:05, 1:02:09."""
    s = max(int(seconds), 0)
    h, m, s = s // 3600, s % 3600 // 60, s % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def link(base: str, code: str, secret: str) -> str:
    """The console's address for room ``code`` (``base``: the app's address as the lecturer's browser reaches it)."""
    return f"{base.rstrip('/')}/{SLUG}?{urlencode({'room': code, 'key': secret})}"
