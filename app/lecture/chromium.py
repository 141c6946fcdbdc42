"""The system's chromium (Debian's ``chromium``, never a downloaded browser): where it is, and the flags it
runs with here — no sandbox (containers), no GPU, nothing fetched in the background. The browser tests drive
it through Playwright; the lecture handout prints to PDF with it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM = os.environ.get("BVE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def available() -> bool:
    return Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is not None
