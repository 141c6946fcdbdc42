"""Every QR code in the HTML handout decodes at 1x screen scale (issue 51): the handout opened in chromium at a
device scale factor of 1 (a laptop's screen, a screenshot of it), each code's element captured as drawn and decoded.
Links of growing length give codes of 33 to 97 modules (the default deck's slides 2 and 9 made 61 and 77, which did
not decode at the printed module size, 1.7 px); a loopback link gets the handout's warning at its top."""

from __future__ import annotations

import io

import pytest

from app.lecture import handout, qr
from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.e2e
BASE = "http://lecture-hall.example:8501"


def links() -> list[str]:
    return [f"{BASE}/masking?text=" + "a" * n for n in (20, 120, 220, 330, 480)]


def section(i: int, url: str) -> handout.Section:
    return handout.Section(i, f"Slide {i}", "", "Masking lab", url, None, "", problem="(no figure in this test)")


@pytest.mark.parametrize("base", [BASE, "http://127.0.0.1:8501"], ids=["public", "loopback"])
def test_every_code_in_the_html_handout_decodes_at_1x(tmp_path, base):
    import zxingcpp
    from PIL import Image
    from playwright.sync_api import sync_playwright

    urls = [u.replace(BASE, base) for u in links()]
    sizes = [qr.make(u).symbol_size(scale=1, border=0)[0] for u in urls]
    assert min(sizes) <= 41 and max(sizes) >= 77, sizes  # small and large codes, the failing sizes among them
    path = tmp_path / "handout.html"
    path.write_text(
        handout.document([section(i, u) for i, u in enumerate(urls, 1)], "Codes", plotly_js=""), encoding="utf-8"
    )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 720}, device_scale_factor=1).new_page()
            page.goto(path.as_uri())
            codes = page.locator("svg.qr")
            assert codes.count() == len(urls)
            for i, url in enumerate(urls):
                box = codes.nth(i).bounding_box()
                modules = sizes[i] + 2 * qr.BORDER
                assert box["width"] / modules >= qr.SCREEN_MODULE_PX - 0.01, (url, box)  # whole pixels a module
                image = Image.open(io.BytesIO(codes.nth(i).screenshot())).convert("L")
                assert [r.text for r in zxingcpp.read_barcodes(image)] == [url], (i, sizes[i], box)
            warning = page.locator(".local")
            assert (warning.count() == 1) == (base != BASE)
            if base != BASE:
                assert "127.0.0.1" in warning.inner_text() and "point at this computer" in warning.inner_text()
        finally:
            browser.close()
