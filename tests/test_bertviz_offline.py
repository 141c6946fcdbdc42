"""app/figures/bertviz_offline.py: bertviz's views as one document that needs no network and that no token can
break out of."""

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.figures import bertviz_offline as bv

EVIL = [
    "</script><script>alert(1)</script>",
    "<!--",
    "<script>",
    "-->",
    "<img src=x onerror=alert(2)>",
    "line\u2028sep\u2029arator",
    "https://evil.example/x.js",
    "</SCRIPT >",
    "&lt;b&gt;",
    "\"'`${x}\\",
]
TOKENS = ["[CLS]", *EVIL, "[SEP]"]
# The only http(s) strings allowed: XML namespace names that d3 hands to createElementNS (never fetched).
NAMESPACES = {
    "http://www.w3.org/1999/xhtml",
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/XML/1998/namespace",
    "http://www.w3.org/2000/xmlns/",
}
EXPECTED_SCRIPTS = len(bv.LIBRARIES) + 2  # jQuery, d3, the require.js stand-in, the view


def uniform(layers, heads, length):
    return np.full((layers, heads, length, length), 1.0 / length)


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text inside each <script>."""

    def __init__(self, document):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self._in_script = [], [], False
        self.feed(document)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def params_in(document) -> dict:
    """The data the view script draws, read back as the browser's JS engine would (JSON is a JS subset)."""
    view = Elements(document).scripts[-1]
    literal = re.search(r"const params = (\{.*?\});\n", view, re.S).group(1)
    return json.loads(literal)


def assert_offline(document):
    urls = set(re.findall(r"https?://[^\s\"'<>)]*", document, re.I))
    assert urls <= NAMESPACES, f"network URLs in the document: {urls - NAMESPACES}"
    assert "//cdn" not in document.lower()
    assert "require.config" not in document and "@import" not in document and "url(" not in document
    for tag, attrs in Elements(document).tags:
        assert not {"src", "href", "srcset", "action", "data"} & set(attrs), (tag, attrs)
    assert "default-src 'none'" in document  # the browser refuses any fetch the document might try


# ----------------------------------------------------------------------------- escaping


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.text() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.none(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=12,
    )
)
def test_safe_json_reads_back_the_same_and_holds_nothing_html_can_see(obj):
    text = bv.safe_json(obj)
    assert json.loads(text) == obj
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert re.search(r"(?<!\\)/", text) is None  # every "/" is written "\/": no "</", "//" or "/*"
    assert text.isascii()


@pytest.mark.parametrize("view", bv.VIEWS)
def test_injected_tokens_cannot_leave_their_script(view):
    document = bv.render(
        view,
        uniform(2, 3, len(TOKENS)),
        TOKENS,
        sentence_b_start=4,
        layer=2,
        heads=[1, 3],
        title="</title><script>alert(3)</script>",
    )
    parsed = Elements(document)
    names = [tag for tag, _ in parsed.tags]
    assert names.count("script") == EXPECTED_SCRIPTS
    assert set(names) <= {"html", "head", "meta", "title", "style", "body", "div", "span", "select", "option", "script"}
    markup, view_script = document.split("<script>", 1)[0], parsed.scripts[-1]
    for token in EVIL:
        if any(c in token for c in "<>&/\u2028\u2029"):  # only escaped forms reach the page and the data
            assert token not in markup and token not in view_script, token
    assert "alert(3)</script>" not in document and "<!--" not in document
    # ... and the browser reads back exactly the tokens (bertviz's prettify changes none of these).
    params = params_in(document)
    assert params["attention"][0]["left_text"] == TOKENS
    assert params["attention"][1]["name"] == "Sentence A -> Sentence A"
    assert params["attention"][1]["right_text"] == TOKENS[:4]
    assert params["attention"][2]["left_text"] == TOKENS[4:]


def test_a_test_like_ours_catches_bertvizs_own_output():
    """bertviz's html_action='return' output lets the token out; the same check flags it."""
    import torch
    from bertviz import head_view  # requirements.txt pins it: missing is a failure, not a skip

    tokens = ["[CLS]", "</script><script>alert(1)</script>", "[SEP]"]
    original = head_view([torch.full((1, 1, 3, 3), 1 / 3)], tokens, html_action="return").data
    assert [t for t, _ in Elements(original).tags].count("script") > 2  # its 2 scripts, plus the token's
    assert "cdnjs.cloudflare.com" in original
    ours = bv.render("head", uniform(1, 1, 3), tokens)
    assert [t for t, _ in Elements(ours).tags].count("script") == EXPECTED_SCRIPTS


# ----------------------------------------------------------------------------- offline


@pytest.mark.parametrize("view", bv.VIEWS)
@pytest.mark.parametrize("pair", [False, True])
def test_the_document_references_no_network_url(view, pair):
    tokens = ["[CLS]", "the", "ball", "[SEP]", "https://cdnjs.cloudflare.com/x.js", "//cdn.example", "[SEP]"]
    document = bv.render(view, uniform(3, 2, len(tokens)), tokens, 4 if pair else None)
    assert_offline(document)
    assert [t for t, _ in Elements(document).tags].count("script") == EXPECTED_SCRIPTS
    assert "function requirejs(" in document and "d3 v5.16.0" in document and "jQuery v2.2.4" in document
    assert params_in(document)["attention"][0]["left_text"][4] == "https://cdnjs.cloudflare.com/x.js"


def test_vendored_files_are_the_recorded_ones():
    readme = (bv.VENDOR_DIR / "README.md").read_text()
    names = [name for name, _ in bv.LIBRARIES] + list(bv.VIEW_SCRIPTS.values())
    for name in names:
        digest = hashlib.sha256((bv.VENDOR_DIR / name).read_bytes()).hexdigest()
        assert f"`{name}`" in readme and digest in readme, name
    for name in ("LICENSE-d3.txt", "LICENSE-jquery.txt", "LICENSE-bertviz.txt"):
        assert (bv.VENDOR_DIR / name).exists()


def test_vendored_bertviz_scripts_match_the_installed_package():
    import importlib.util

    spec = importlib.util.find_spec("bertviz")
    assert spec is not None, "bertviz is not installed (requirements.txt pins it)"
    package = Path(next(iter(spec.submodule_search_locations)))
    for view, name in bv.VIEW_SCRIPTS.items():
        assert (package / f"{view}_view.js").read_bytes() == (bv.VENDOR_DIR / name).read_bytes()


def test_a_changed_view_script_is_refused(monkeypatch):
    monkeypatch.setattr(bv, "_vendored", lambda name: "requirejs(['d3'], function (d3) { const p = PYTHON_PARAMS; });")
    with pytest.raises(ValueError, match="not the bertviz 1.4.1 script"):
        bv.view_script("head", {})
    monkeypatch.setattr(bv, "_vendored", lambda name: "var x = '</script>';")
    with pytest.raises(ValueError, match="cannot be inlined"):
        bv.library_script("x.js")


# ----------------------------------------------------------------------------- params


def test_params_follow_bertviz_with_layers_and_heads_from_one():
    att = np.random.default_rng(1).dirichlet(np.ones(5), size=(3, 4, 5))  # (3, 4, 5, 5)
    tokens = ["<s>", "Ġred", "▁ball", "</s>", "x"]
    head = bv.view_params("head", att, tokens, layer=3, heads=[2, 4])
    assert head["include_layers"] == [1, 2, 3] and head["layer"] == 3 and head["heads"] == [1, 3]
    assert len(head["attention"]) == 1 and head["attention"][0]["name"] is None
    assert head["attention"][0]["left_text"] == ["<s>", " red", " ball", "</s>", "x"]
    np.testing.assert_allclose(np.array(head["attention"][0]["attn"]), att, atol=0.5 * 10**-bv.DECIMALS)
    model = bv.view_params("model", att, tokens, sentence_b_start=2)
    assert model["include_heads"] == [1, 2, 3, 4] and model["total_heads"] == 4 and model["display_mode"] == "light"
    shapes = [np.array(d["attn"]).shape for d in model["attention"]]
    assert shapes == [(3, 4, 5, 5), (3, 4, 2, 2), (3, 4, 3, 3), (3, 4, 2, 3), (3, 4, 3, 2)]
    with pytest.raises(ValueError):
        bv.view_params("head", att, tokens, layer=4)
    with pytest.raises(ValueError):
        bv.view_params("head", att, tokens, heads=[5])
    with pytest.raises(ValueError):
        bv.view_params("head", att, tokens[:4])
    with pytest.raises(ValueError):
        bv.view_params("neuron", att, tokens)


def test_long_inputs_send_fewer_layers():
    # Everything fits: all layers. 12 layers x 12 heads x 128^2 does not: the head view gets the chosen layer,
    # the model view the layers from the chosen one on that fit in the budget.
    assert bv.fit_layers("model", 4, 4, 40, True, 2) == [1, 2, 3, 4]
    assert bv.fit_layers("head", 12, 12, 128, False, 5) == [5]
    model = bv.fit_layers("model", 12, 12, 128, False, 5)
    assert model[0] == 5 and len(model) * 12 * 128 * 128 <= bv.MAX_WEIGHTS
    assert bv.fit_layers("model", 12, 12, 128, True, 12) == [11, 12]  # a pair sends twice as much; ends at the top
    assert bv.fit_layers("model", 2, 12, 400, True, 2) == [2]  # at least one layer
    att = np.random.default_rng(2).dirichlet(np.ones(4), size=(3, 2, 4))  # (3, 2, 4, 4)
    params = bv.view_params("model", att, list("abcd"), include_layers=[3, 2])
    assert params["include_layers"] == [2, 3]
    np.testing.assert_array_equal(params["attention"][0]["attn"], att[1:])
    document = bv.render("head", att, list("abcd"), layer=3, include_layers=[3])
    assert params_in(document)["include_layers"] == [3] and params_in(document)["layer"] == 3
    with pytest.raises(ValueError):
        bv.view_params("head", att, list("abcd"), layer=1, include_layers=[3])
    with pytest.raises(ValueError):
        bv.view_params("model", att, list("abcd"), include_layers=[4])


def test_height_grows_with_the_input():
    assert bv.height_hint("head", 4, 4, 40) > bv.height_hint("head", 4, 4, 10) > 0
    assert bv.height_hint("model", 12, 12, 40) > bv.height_hint("model", 2, 4, 10) > 0


def test_the_title_is_one_escaped_line_whose_invisible_characters_show():
    document = bv.render("head", uniform(1, 1, 3), ["a", "b", "c"], title="<b>x</b>\nnext \u202eevil")
    title = re.search(r"<title>(.*?)</title>", document, re.S).group(1)
    assert title == "bertviz head view · &lt;b&gt;x&lt;/b&gt; next ⟨U+202E⟩evil"


# ----------------------------------------------------------------------------- a real browser


@pytest.mark.e2e
def test_views_draw_in_a_browser_without_network_or_script_from_tokens(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("Debian's chromium is not installed")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        try:
            for view in bv.VIEWS:
                path = tmp_path / f"{view}.html"
                path.write_text(bv.render(view, uniform(2, 3, len(TOKENS)), TOKENS, 4), encoding="utf-8")
                page = browser.new_page()
                requests, errors, dialogs = [], [], []
                page.on("request", lambda r: requests.append(r.url))
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                page.goto(path.as_uri())
                page.wait_for_selector("#vis svg line", state="attached", timeout=10_000)
                page.wait_for_timeout(300)
                assert [u for u in requests if not u.startswith("file:")] == []
                assert errors == [] and dialogs == []
                if view == "head":
                    drawn = page.eval_on_selector_all("#vis svg text", "els => els.map(e => e.textContent)")
                    assert drawn[: len(TOKENS)] == TOKENS  # shown as text, exactly
                page.close()
        finally:
            browser.close()
