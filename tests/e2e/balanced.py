"""A browserless session behind a load balancer (app/deploy.py's nginx): what a browser tab does there and what
tests/e2e/stclient.py's :class:`Session` does not — load the page first (nginx's affinity cookie comes with it), send
that cookie with the websocket, and, when the websocket closes (its app process died), connect again as Streamlit's
frontend does and rerun the page from its URL on whichever process nginx now picks.

Used by the replica test (tests/e2e/test_replicas.py) and the benchmark's ``class-replicas`` rows."""

from __future__ import annotations

import asyncio
import urllib.request

import websockets

from app.deploy import ROUTE_COOKIE, SERVED_BY
from tests.e2e.stclient import Session


def answered_by(header: str | None) -> str | None:
    """The app process that answered, from nginx's ``$upstream_addr`` ("a, b" when a tried first was gone)."""
    return header.split(",")[-1].strip() if header else None


def first_visit(base: str, path: str = "/") -> tuple[str, str | None]:
    """GET ``path`` through the balancer as a browser's first request: (the affinity cookie nginx set, as a Cookie
    header value, or '' with ``--affinity ip``; the app process that answered, with ``--served-by``)."""
    with urllib.request.urlopen(base.rstrip("/") + path, timeout=60) as r:
        r.read()
        cookie = next(
            (c.split(";", 1)[0] for c in r.headers.get_all("Set-Cookie") or [] if c.startswith(ROUTE_COOKIE + "=")), ""
        )
        return cookie, answered_by(r.headers.get(SERVED_BY))


class BalancedSession(Session):
    """One tab's session through the balancer, with its affinity cookie. ``served_by``: the app process that holds
    its websocket now (with ``--served-by``); ``reconnects``: how often its websocket was opened again."""

    def __init__(self, base: str, cookie: str = ""):
        super().__init__(base)
        self.cookie, self.served_by, self.reconnects = cookie, None, 0

    async def _connect(self) -> None:
        self.ws = await websockets.connect(
            self.url,
            subprotocols=["streamlit"],
            max_size=None,
            open_timeout=120,
            ping_interval=None,
            additional_headers={"Cookie": self.cookie} if self.cookie else None,
        )
        self.served_by = answered_by(self.ws.response.headers.get(SERVED_BY))

    async def __aenter__(self):
        await self._connect()
        return self

    async def rerun_or_reconnect(self, change, timeout: float = 120):
        """``change(self)`` (a coroutine: a widget change or an open); when the websocket has closed under it,
        connect again through the balancer (backing off as the frontend does), reopen the page with the query string
        it last had (its state), then ``change`` again. Returns (the run after reopening or None, the run of
        ``change``)."""
        try:
            return None, await change(self)
        except websockets.ConnectionClosed:
            pass
        for wait in (0.0, 0.5, 1.0, 2.0, 4.0):  # the app process is gone: nginx picks another once it refuses
            await asyncio.sleep(wait)
            try:
                await self._connect()
                break
            except (OSError, websockets.InvalidStatus, websockets.InvalidHandshake):
                continue
        self.reconnects += 1
        reopened = await self.open(self.page, self.query, timeout=timeout)
        return reopened, await change(self)
