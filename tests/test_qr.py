"""The QR code a class scans (app/lecture/qr.py): it decodes back to exactly the link, at a size for a hall, and a
loopback address is recognised (students' devices cannot reach it). Decoded with zxing-cpp."""

from __future__ import annotations

import io

import pytest
import zxingcpp
from PIL import Image

from app.lecture import qr

LINKS = [
    "http://192.168.1.20:8501/masking?strategy=static&epochs=40",
    "https://lecture.example.edu/bve/electra?temperature=2&seed=3&text=The+caf%C3%A9+%26+the+%F0%9F%99%82",
    "http://10.0.0.5:8501/compare?text=" + "Once+upon+a+time+" * 20,
]


@pytest.mark.parametrize("url", LINKS)
def test_the_png_decodes_back_to_the_link(url):
    image = Image.open(io.BytesIO(qr.png(url, 600)))
    assert 400 <= image.width <= 600 and image.width == image.height
    assert [r.text for r in zxingcpp.read_barcodes(image)] == [url]


def test_the_svg_is_inline_markup_of_the_same_code():
    svg = qr.svg(LINKS[0], 160)
    assert svg.startswith("<svg") and "<script" not in svg and 'width="' in svg


@pytest.mark.parametrize(
    "url, loopback",
    [
        ("http://localhost:8501/x", True),
        ("http://127.0.0.1:8501", True),
        ("http://[::1]:8501/", True),
        ("http://0.0.0.0:8501", True),
        ("http://app.localhost/", True),
        ("", True),
        ("http://192.168.1.20:8501", False),
        ("https://huggingface.co/spaces/a/b", False),
        ("http://10.1.2.3", False),
    ],
)
def test_loopback_addresses_are_recognised(url, loopback):
    assert qr.is_loopback(url) is loopback


def test_the_lan_guess_keeps_the_port_path_and_query():
    guess = qr.lan_address("http://127.0.0.1:8501/electra?seed=3")
    assert guess is None or (guess.endswith(":8501/electra?seed=3") and not qr.is_loopback(guess))


@pytest.mark.parametrize(
    "given",
    [
        "javascript:alert(1)",
        " JavaScript:alert(1)",
        "javascript://%0aalert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "ftp://x.org",
        "http://",
        "http://a b.org",
        "vbscript:msgbox(1)",
    ],
)
def test_an_address_students_use_must_be_http_or_https(given):
    address, problem = qr.public_address(given)
    assert address == "" and "http:// or https://" in problem


@pytest.mark.parametrize(
    "given, want",
    [
        ("", ""),
        ("  ", ""),
        ("192.168.1.20:8501", "http://192.168.1.20:8501"),
        ("localhost:8501/", "http://localhost:8501"),
        ("lecture.example", "http://lecture.example"),
        ("https://x.org/app/", "https://x.org/app"),
    ],
)
def test_a_good_address_is_kept_with_its_scheme(given, want):
    assert qr.public_address(given) == (want, None)


def test_a_link_too_long_for_a_code_is_a_sentence_not_a_crash():
    long = "http://hall.example:8501/masking?text=" + "%E5%A5%BD" * 300  # 300 CJK characters, percent-encoded
    with pytest.raises(qr.TooLong, match="too long for a QR code"):
        qr.png(long)
    with pytest.raises(qr.TooLong):
        qr.svg(long)
    assert qr.png("http://hall.example:8501/masking?text=" + "%E5%A5%BD" * 200).startswith(b"\x89PNG")


def test_the_handout_links_only_web_addresses_and_leaves_out_a_code_too_long():
    from app.lecture import handout

    assert "<a " not in handout.live_link("javascript:alert(1)") and "Not a web address" in handout.live_link(
        "javascript:alert(1)"
    )
    long = handout.live_link("http://hall.example/masking?text=" + "%E5%A5%BD" * 300)
    assert "<svg" not in long and "too long for a QR code" in long and "<a href='http://hall.example/masking?" in long
    assert "<svg" in handout.live_link("http://hall.example/masking?seed=3")


def svg_image(svg: str, pixels_per_module: int = 8) -> Image.Image:
    """The code an inline SVG from segno draws (``M x y``, then ``h n`` dark runs and ``m dx dy`` moves, a unit a
    module, lines through the middle of their row), as a black-on-white image to decode: what the HTML shows."""
    import re

    side = int(re.search(r'viewBox="0 0 (\d+) (\d+)"', svg).group(1))
    path = re.search(r'<path class="qrline"[^>]* d="([^"]+)"', svg).group(1)
    image = Image.new("L", (side, side), 255)
    x = y = 0.0
    for op, a, b in re.findall(r"([Mmh])(-?[\d.]+)(?:\s(-?[\d.]+))?", path):
        if op == "M":
            x, y = float(a), float(b)
        elif op == "m":
            x, y = x + float(a), y + float(b)
        else:
            for i in range(int(float(a))):
                image.putpixel((int(x) + i, int(y)), 0)
            x += float(a)
    return image.resize((side * pixels_per_module, side * pixels_per_module), Image.NEAREST)


@pytest.mark.parametrize("url", LINKS + ["http://hall.example:8501/compare?text=" + "Once+upon+a+time+" * 134])
def test_the_printed_svg_is_square_at_a_scannable_size_and_decodes(url):
    import re

    svg = qr.svg_print(url)
    width, height = re.search(r'style="width:([\d.]+)mm;height:([\d.]+)mm', svg).groups()
    modules = qr.make(url).symbol_size(scale=1, border=0)[0]
    assert width == height and 'viewBox="0 0 ' in svg and ' width="' not in svg  # no pixel size to stretch
    assert float(width) * modules / (modules + 2 * qr.BORDER) >= 25  # the code itself, quiet zone aside: ≥ 2.5 cm
    assert float(width) / (modules + 2 * qr.BORDER) >= 0.3  # a module a phone resolves
    assert [r.text for r in zxingcpp.read_barcodes(svg_image(svg))] == [url]
