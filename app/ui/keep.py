"""What this browser keeps for a lecturer between visits: their own deck and the address students use.

Streamlit keeps a session's state only as long as its tab: a view opened by pasting its address (a new session)
used to start a new deck ("Added as slide 1" each time), and the address typed in the sidebar was lost on reload
(links fell back to 127.0.0.1). Both now live in the browser's ``localStorage`` too, under :data:`DECK` and
:data:`ADDRESS`, through a small script in the page (a Streamlit component, no iframe), like the width sensor.

- A new session whose link names no deck (and no slide) gets the deck this browser kept; a session with an own deck
  (a link's, or one it builds) writes it; *Back to the default deck* clears it.
- A session whose address box is empty gets the address this browser kept; a typed one is written.

Once per page load the script reports what is kept, only when something is (so a first visit costs no extra run);
from then on (or at once, when nothing was kept) the session's values are written on every run. Values from the browser
are checked as a link's are: the deck is decoded (``app.lecture.deck.decode``), the address goes through
``app.lecture.qr.public_address``.
"""

from __future__ import annotations

import streamlit as st

from app.lecture import deck
from app.ui import url

DECK = "bve.deck"  # localStorage keys
ADDRESS = "bve.public_url"
SYNCED = "_kept_synced"  # session state: this session has read what the browser keeps (it writes from now on)
OPENED_WITH_DECK = "_kept_link_deck"  # session state: the link that opened this session named a deck or a slide
KEY = "bve-keep"

_KEEP_JS = f"""
export default function (component) {{
  const {{ setStateValue, data }} = component;
  const read = (k) => {{ try {{ return window.localStorage.getItem(k) || ''; }} catch (e) {{ return ''; }} }};
  const write = (k, v) => {{ try {{ if (v) window.localStorage.setItem(k, v); else window.localStorage.removeItem(k);
                               }} catch (e) {{}} }};
  const kept = {{ deck: read('{DECK}'), address: read('{ADDRESS}') }};
  // once per page load (a Streamlit session): report what is kept, or, when nothing is, keep this session's
  if (data.synced || window.__bveKeep === 'writing') {{
    window.__bveKeep = 'writing'; write('{DECK}', data.deck); write('{ADDRESS}', data.address);
  }} else if (window.__bveKeep !== 'reported') {{
    if (kept.deck || kept.address) {{ window.__bveKeep = 'reported'; setStateValue('kept', kept); }}
    else {{ window.__bveKeep = 'writing'; write('{DECK}', data.deck); write('{ADDRESS}', data.address); }}
  }}
}}
"""

_component = None


def restore(kept, address_key: str) -> list[str]:
    """Adopt what the browser kept (``kept``: {"deck", "address"}) where this session has nothing of its own; the
    notes say what came back. Call before the address box is drawn and before the deck is followed."""
    from app.lecture import qr

    notes = []
    if not isinstance(kept, dict):
        return notes
    stored = kept.get("deck")
    if (
        isinstance(stored, str)
        and stored
        and not st.session_state.get("deck")
        and not st.session_state.get(OPENED_WITH_DECK)
    ):
        views, _ = deck.decode(stored, spec_of=None)
        if views:
            st.session_state["deck"] = deck.encode(views)
            notes.append(f"Your deck of {len(views)} slides, kept in this browser, is back (Lecture mode).")
    address = kept.get("address")
    if isinstance(address, str) and address and not st.session_state.get(address_key):
        given, problem = qr.public_address(address[:500])
        if given and problem is None:
            st.session_state[address_key] = given
    return notes


def keep(where, address_key: str) -> None:
    """Mount the script that keeps the deck and the address in this browser (once per run, in the sidebar, before
    the address box)."""
    global _component
    if OPENED_WITH_DECK not in st.session_state:
        raw = url.raw_query()
        st.session_state[OPENED_WITH_DECK] = "deck" in raw or "slide" in raw
    try:
        if _component is None:
            _component = st.components.v2.component("bve_keep", js=_KEEP_JS)
        synced = bool(st.session_state.get(SYNCED))
        with where:
            result = _component(
                key=KEY,
                data={
                    "synced": synced,
                    "deck": st.session_state.get("deck", "") or "",
                    "address": st.session_state.get(address_key, "") or "",
                },
                default={"kept": None},
                on_kept_change=lambda: None,
                height=0,
            )
    except Exception:  # noqa: BLE001 — no component runtime (a scripted client): nothing kept, nothing lost
        return
    kept = getattr(result, "kept", None) if result is not None else None
    if not synced and isinstance(kept, dict):
        st.session_state[SYNCED] = True
        for note in restore(kept, address_key):
            st.toast(note, icon=":material/playlist_play:")
