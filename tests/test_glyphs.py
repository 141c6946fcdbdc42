"""Every character the app writes can be drawn without an emoji font.

Debian's Chromium on a lecture-hall PC has DejaVu and the app's own fonts, not Noto Color Emoji: a ✅ there is an
empty box (issue 27). Status marks are Material icons (``:material/check_circle:``) or text marks that DejaVu has
(✓ ✗ ★ ⬇); this test reads the source of everything that draws (pages, figures, ui, lecture, lessons' texts) and
refuses characters whose default presentation is an emoji.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    [
        ROOT / "streamlit_app.py",
        *ROOT.glob("pages/*.py"),
        *ROOT.glob("app/figures/*.py"),
        *ROOT.glob("app/ui/*.py"),
        *ROOT.glob("app/lecture/*.py"),
        *ROOT.glob("app/lessons/*.py"),
    ]
)

# Unicode's Emoji_Presentation=Yes (emoji-data.txt, Unicode 15), below U+1F000; everything from U+1F000 up is
# pictographic too. U+FE0F asks for the emoji form of the character before it.
EMOJI_BELOW_1F000 = {
    0x231A,
    0x231B,
    0x23E9,
    0x23EA,
    0x23EB,
    0x23EC,
    0x23F0,
    0x23F3,
    0x25FD,
    0x25FE,
    0x2614,
    0x2615,
    *range(0x2648, 0x2654),
    0x267F,
    0x2693,
    0x26A1,
    0x26AA,
    0x26AB,
    0x26BD,
    0x26BE,
    0x26C4,
    0x26C5,
    0x26CE,
    0x26D4,
    0x26EA,
    0x26F2,
    0x26F3,
    0x26F5,
    0x26FA,
    0x26FD,
    0x2705,
    0x270A,
    0x270B,
    0x2728,
    0x274C,
    0x274E,
    0x2753,
    0x2754,
    0x2755,
    0x2757,
    0x2795,
    0x2796,
    0x2797,
    0x27B0,
    0x27BF,
    0x2B1B,
    0x2B1C,
    0x2B50,
    0x2B55,
    0xFE0F,
}


def emoji(ch: str) -> bool:
    return ord(ch) in EMOJI_BELOW_1F000 or 0x1F000 <= ord(ch) <= 0x1FAFF


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_emoji_a_font_without_emoji_draws_as_a_box(path):
    found = [
        (n, line.strip()[:80])
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(emoji(ch) for ch in line)
    ]
    assert found == [], f"{path.relative_to(ROOT)}: use a :material/...: icon or a DejaVu mark instead: {found}"
