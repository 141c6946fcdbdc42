"""The QR code a class scans (app/lecture/qr.py): it decodes back to exactly the link, at a size for a hall, and a
loopback address is recognised (students' devices cannot reach it). Decoded with zxing-cpp."""

from __future__ import annotations

import io

import pytest
import zxingcpp
from PIL import Image

from app.lecture import qr

LINKS = ["http://192.168.1.20:8501/masking?strategy=static&epochs=40",
         "https://lecture.example.edu/bve/electra?temperature=2&seed=3&text=The+caf%C3%A9+%26+the+%F0%9F%99%82",
         "http://10.0.0.5:8501/compare?text=" + "Once+upon+a+time+" * 20]


@pytest.mark.parametrize("url", LINKS)
def test_the_png_decodes_back_to_the_link(url):
    image = Image.open(io.BytesIO(qr.png(url, 600)))
    assert 400 <= image.width <= 600 and image.width == image.height
    assert [r.text for r in zxingcpp.read_barcodes(image)] == [url]


def test_the_svg_is_inline_markup_of_the_same_code():
    svg = qr.svg(LINKS[0], 160)
    assert svg.startswith("<svg") and "<script" not in svg and 'width="' in svg


@pytest.mark.parametrize("url, loopback", [
    ("http://localhost:8501/x", True), ("http://127.0.0.1:8501", True), ("http://[::1]:8501/", True),
    ("http://0.0.0.0:8501", True), ("http://app.localhost/", True), ("", True),
    ("http://192.168.1.20:8501", False), ("https://huggingface.co/spaces/a/b", False), ("http://10.1.2.3", False),
])
def test_loopback_addresses_are_recognised(url, loopback):
    assert qr.is_loopback(url) is loopback


def test_the_lan_guess_keeps_the_port_path_and_query():
    guess = qr.lan_address("http://127.0.0.1:8501/electra?seed=3")
    assert guess is None or (guess.endswith(":8501/electra?seed=3") and not qr.is_loopback(guess))
