"""A QR code for a view's link, so students open on their own devices exactly what is on the projector.

segno (pure Python, no dependencies, ISO/IEC 18004) makes the code; nothing here touches the network. Error
correction level M (15% of the code may be unreadable — a projector's glare, a head in the way) at the
smallest version that holds the link, with a quiet zone of 4 modules as the standard asks.

The link must use an address the students can reach: a server the lecturer opened as ``localhost`` is
reachable only from the lecturer's own machine, so :func:`is_loopback` lets the page say so, and
:func:`lan_address` suggests the address this machine has on its network (no packet is sent). An address
typed in the sidebar or set in ``BVE_PUBLIC_URL`` goes through :func:`public_address`: http(s) only, so a
``javascript:`` address never reaches a code or a handout's link.

A code holds at most 2331 bytes at level M (version 40): a slide whose link is longer (a long text typed
in the box, in CJK or accented letters, is 2–3 bytes a character in the link) raises :class:`TooLong`, and
the caller leaves that code out with its sentence and shows the rest.
"""

from __future__ import annotations

import ipaddress
import io
import re
import socket
from urllib.parse import urlsplit, urlunsplit

import segno

SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:(?!\d)", re.I)  # "javascript:", "data:"; not "localhost:8501"
BORDER = 4  # modules of quiet zone around the code (ISO/IEC 18004)


MAX_BYTES = 2331  # the largest byte payload at error correction M (version 40)


class TooLong(ValueError):
    """A link too long for any QR code: its message is the sentence a page or handout shows instead."""


def make(url: str):
    try:
        return segno.make(url, error="m", micro=False)
    except segno.DataOverflowError:
        raise TooLong(
            f"This view's link is {len(url.encode())} bytes, too long for a QR code (at most "
            f"{MAX_BYTES}): shorten the text on the slide, or share the link itself."
        ) from None


def png(url: str, pixels: int = 600) -> bytes:
    """The code as a PNG about ``pixels`` wide (whole pixels per module, black on white)."""
    code = make(url)
    width = code.symbol_size(scale=1, border=BORDER)[0]
    out = io.BytesIO()
    code.save(out, kind="png", scale=max(2, pixels // width), border=BORDER, dark="#000", light="#fff")
    return out.getvalue()


def svg(url: str, pixels: int = 160) -> str:
    """The code as an inline SVG element about ``pixels`` wide (for the handout)."""
    code = make(url)
    width = code.symbol_size(scale=1, border=BORDER)[0]
    return code.svg_inline(scale=max(1, pixels // width), border=BORDER, dark="#000", light="#fff", omitsize=False)


# printed codes (the handout): the code itself (its quiet zone aside) at least 2.6 cm a side, and a module of at
# least 0.45 mm, which a phone scans from a desk; a longer link has more modules, so its code grows (a 300-byte
# link: 69 modules + the quiet zone, 3.5 cm) up to a size that still leaves the page its figure
PRINT_SYMBOL_MM, PRINT_MODULE_MM, PRINT_MOST_MM = 26.0, 0.45, 60.0


def print_size_mm(url: str) -> float:
    """The printed side of the code for ``url`` in millimetres, quiet zone included: modules of 0.45 mm or
    more, the code without its quiet zone at least 2.6 cm; at most 6 cm in all (version 40's 177 modules:
    0.32 mm each)."""
    code = make(url)
    modules = code.symbol_size(scale=1, border=0)[0]
    module = max(PRINT_MODULE_MM, PRINT_SYMBOL_MM / modules)
    return round(min(PRINT_MOST_MM, module * (modules + 2 * BORDER)), 1)


#: on a screen at 1x (the HTML handout opened in a browser, a screenshot of it) a module of the printed size is
#: 1.7 px — a code of 61 or 77 modules did not decode; a module is at least this many whole CSS pixels there
SCREEN_MODULE_PX = 3


def screen_size_px(url: str) -> int:
    """The least side of the code for ``url`` on a screen, in CSS pixels, quiet zone included: whole
    ``SCREEN_MODULE_PX`` pixels a module."""
    return make(url).symbol_size(scale=1, border=BORDER)[0] * SCREEN_MODULE_PX


def svg_print(url: str, title: str = "") -> str:
    """The code as an inline SVG for print: one unit a module (a viewBox, no pixel size) and its printed
    size in millimetres as its style, the same width and height, so no layout can stretch it out of square.
    Its least size on a screen rides along as ``--screen`` (``screen_size_px``): the handout's screen style
    draws it at the larger of the two, so every code decodes at 1x."""
    side = f"{print_size_mm(url)}mm"
    svg = make(url).svg_inline(
        scale=1, border=BORDER, dark="#000", light="#fff", omitsize=True, svgclass="qr", title=title or None
    )
    return svg.replace(
        "<svg ",
        f'<svg style="width:{side};height:{side};min-width:{side};flex:none;'
        f'--print:{side};--screen:{screen_size_px(url)}px" ',
        1,
    )


def public_address(given: str) -> tuple[str, str | None]:
    """(address, problem) for the address students use as typed or configured: "" and None when none is
    given; an address without a scheme gets http://; anything but an http(s) address with a host is refused
    ("" and the sentence that says why), so no other scheme (``javascript:``, ``data:``, ``file:``) reaches a
    QR code or a link."""
    given = (given or "").strip()
    if not given:
        return "", None
    if "://" not in given and not SCHEME.match(given):  # "192.168.1.20:8501", "localhost:8501", "example.org"
        given = "http://" + given
    parts = urlsplit(given)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or any(c.isspace() for c in given):
        return "", (
            "The address students use must be an http:// or https:// address of this app "
            "(e.g. http://192.168.1.20:8501); this one was ignored."
        )
    return given.rstrip("/"), None


def host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def is_loopback(url: str) -> bool:
    """Whether the link points at the machine that opens it (localhost, 127.x, ::1, 0.0.0.0): a student's
    phone would look for the server on itself."""
    name = host(url)
    if name in ("localhost", "") or name.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def lan_address(url: str) -> str | None:
    """``url`` with its host replaced by this machine's address on its local network, or None when there is
    none. Finds the interface a route would use by connecting a UDP socket, which sends nothing."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            ip = s.getsockname()[0]
    except OSError:
        return None
    if ipaddress.ip_address(ip).is_loopback:
        return None
    parts = urlsplit(url)
    netloc = ip + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme or "http", netloc, parts.path, parts.query, parts.fragment))
