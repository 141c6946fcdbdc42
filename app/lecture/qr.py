"""A QR code for a view's link, so students open on their own devices exactly what is on the projector.

segno (pure Python, no dependencies, ISO/IEC 18004) makes the code; nothing here touches the network. Error
correction level M (15% of the code may be unreadable — a projector's glare, a head in the way) at the
smallest version that holds the link, with a quiet zone of 4 modules as the standard asks.

The link must use an address the students can reach: a server the lecturer opened as ``localhost`` is
reachable only from the lecturer's own machine, so :func:`is_loopback` lets the page say so, and
:func:`lan_address` suggests the address this machine has on its network (no packet is sent).
"""

from __future__ import annotations

import ipaddress
import io
import socket
from urllib.parse import urlsplit, urlunsplit

import segno

BORDER = 4  # modules of quiet zone around the code (ISO/IEC 18004)


def make(url: str):
    return segno.make(url, error="m", micro=False)


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
