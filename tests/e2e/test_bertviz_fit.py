"""bertviz's views fit their frame, in a real browser (no app server: the standalone document alone).

Issue 27: the model view (drawn 970 px wide) cut its 4th head in a student's 820-px column, and the head view
stayed a 335-px sliver on a projector's stage. app/figures/bertviz_offline.py fits both to the frame's width, in
the document's own pixels, so that a page which zooms the document (presenter mode) still fills its width.
"""

import numpy as np
import pytest

from app.figures import bertviz_offline as bv
from tests.e2e.browser import browser

pytestmark = pytest.mark.e2e
TOKENS = ["[CLS]"] + "after school the little girl found a shiny red ball under the old oak tree".split() + ["[SEP]"]


def attention(layers=4, heads=4, length=len(TOKENS)):
    weights = np.random.default_rng(0).random((layers, heads, length, length))
    return weights / weights.sum(-1, keepdims=True)


def drawn(page) -> dict:
    """The drawing's right edge and the frame's width, in CSS pixels of the window."""
    return page.evaluate("""() => {
        const svg = document.querySelector('#vis svg');
        const right = Math.max(...[...svg.querySelectorAll('rect, line, text')]\
.map(e => e.getBoundingClientRect().right));
        return {right: right, frame: window.innerWidth, svg: svg.getBoundingClientRect().width};
    }""")


def test_the_model_view_shows_every_head_in_a_students_column():
    document = bv.render("model", attention(), TOKENS)
    with browser((820, 700)) as (context, watcher):
        page = watcher.watch(context.new_page())
        page.set_content(document)
        page.wait_for_selector("#vis svg", state="attached")
        box = drawn(page)
        assert box["right"] <= box["frame"], box  # the 4th head's thumbnails end inside the frame
        assert watcher.page_errors == []


def test_the_head_view_widens_to_a_zoomed_stage():
    """As presenter mode shows it: the frame is the stage (1214 px), the document zoomed to fit its height."""
    zoomed = bv.render("head", attention(), TOKENS).replace("<head>", "<head><style>html { zoom: 1.3; }</style>", 1)
    with browser((1214, 560)) as (context, watcher):
        page = watcher.watch(context.new_page())
        page.set_content(zoomed)
        page.wait_for_selector("#vis svg line", state="attached")
        box = drawn(page)
        assert box["right"] <= box["frame"], box
        # bertviz's own 335 px, zoomed 1.3, would end at 8·1.3 + 435 px: the fitted band of lines reaches further
        assert box["right"] > 0.6 * box["frame"], box
        page.set_viewport_size({"width": 700, "height": 560})  # a narrower frame: fitted again, still inside
        page.wait_for_timeout(300)
        box = drawn(page)
        assert box["right"] <= box["frame"], box
        assert watcher.page_errors == []
