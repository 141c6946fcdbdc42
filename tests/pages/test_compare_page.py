"""The side-by-side page through the router: every variant's tokens, guesses, ELECTRA's view and measured
cost on one sentence; the guide generated from the numbers; variants whose checkpoint is missing left out
with a note; bad input and URL state. Asserts what the page shows, not its wording."""

import json

import pytest

from app.lessons import compare
from app.core import text as txt
from app.models import catalogue
from tests.conftest import require_bundled, shown_text

PAGE = "pages/compare.py"
K = "compare."  # the page's widget keys are scoped to it; the text box is shared ("text")
BUILT = [k for k, v in catalogue.CATALOGUE.items() if v.bundled_available()]
MISSING = [k for k in catalogue.CATALOGUE if k not in BUILT]  # DeBERTa and ModernBERT may still be in training
LABELS = [catalogue.get(k).label for k in BUILT]
PREDICTORS = [
    catalogue.get(k).label
    for k in BUILT  # the NSP stand-in is there for its sentence head
    if catalogue.get(k).role not in ("discriminator", "nsp")
]


@pytest.fixture(autouse=True)
def _originals_built():
    require_bundled(*catalogue.CATALOGUE)


def figures(at) -> dict:
    """name -> plotly spec, for every figure the page showed through ui.show_figure (key fig-compare-<name>)."""
    out = {}
    for chart in at.get("plotly_chart"):
        for name in ("tokens", "fill-mask", "electra", "cost"):
            if f"fig-compare-{name}" in chart.proto.id:
                out[name] = json.loads(chart.proto.spec)
    return out


def cost_table(at):
    return next(d.value for d in at.dataframe if "forward, median (ms)" in d.value.columns)


def token_grid(spec: dict, n_variants: int) -> tuple[list[str], list[list], list[list[str]]]:
    """The tokenizer grid read back across its bands (app/figures/compare.py wraps a sentence into bands of words,
    each under a header row of its words): (the header cells in order, z per variant, cell texts per variant)."""
    data = spec["data"][0]
    z, text = data["z"], data["text"]
    heads, zs, texts = [], [[] for _ in range(n_variants)], [[] for _ in range(n_variants)]
    for start in range(0, len(z), n_variants + 1):
        shown = [t for t in text[start] if t]  # the band's header row: its words (the last band may be short)
        heads += shown
        for v in range(n_variants):
            zs[v] += z[start + 1 + v][: len(shown)]
            texts[v] += text[start + 1 + v][: len(shown)]
    return heads, zs, texts


def limit(bundled) -> int:
    """The fewest tokens any compared variant reads (computed from the tokenizers, not pinned)."""
    return min(txt.token_limit(bundled(k).tokenizer) for k in BUILT)


def test_defaults_show_every_variant_side_by_side(app_page, bundled):
    at = app_page(PAGE)
    assert not at.exception
    text = shown_text(at)
    assert "Variants side by side" in text and "Takeaway" in text
    figs = figures(at)
    assert set(figs) == {"tokens", "fill-mask", "electra", "cost"}
    # tokens: one row per variant, one column per word; "ball" is one piece for everyone
    heads, z, _ = token_grid(figs["tokens"], len(LABELS))
    assert len(heads) == 11 and len(z) == len(LABELS) and all(len(row) == 11 for row in z)
    assert all(row[6] == 1 for row in z)
    # guesses: every masked LM and XLNet, top-5 each, best first
    fm = figs["fill-mask"]["data"][0]
    assert len(fm["z"]) == len(PREDICTORS) and all(len(row) == 5 for row in fm["z"])
    assert [y.replace(" (permutation)", "") for y in fm["y"]] == PREDICTORS
    assert [y for y in fm["y"] if "permutation" in y] == ["XLNet (permutation)"]
    assert all(row == sorted(row, reverse=True) for row in fm["z"])
    # ELECTRA: as written, and with the generator's guess swapped in
    assert len(figs["electra"]["data"][0]["z"]) == 2
    assert all(0 <= p <= 1 for p in figs["electra"]["data"][0]["z"][0])
    # cost: measured, positive, for every variant, each naming its checkpoint
    table = cost_table(at)
    assert list(table["variant"]) == LABELS
    assert list(table["checkpoint"]) == [bundled(k).shown_as for k in BUILT]
    assert (table["forward, median (ms)"] > 0).all() and (table["parameters (M)"] > 0).all()
    assert (table["memory (MiB)"] * 2**20 >= table["parameters (M)"] * 1e6 * 4).all()
    assert list(table["tokens"]) == [len(bundled(k).tokenizer(compare.DEFAULT_TEXT)["input_ids"]) for k in BUILT]
    assert list(figs["cost"]["data"][2]["x"]) == pytest.approx(list(table["forward, median (ms)"]))
    # the guide names the variant the table measured fastest and the one with fewest parameters
    fastest = table.sort_values("forward, median (ms)")["variant"].iloc[0]
    smallest = table.sort_values("parameters (M)")["variant"].iloc[0]
    assert "Need speed?" in text and fastest in text.split("Need speed?")[1].split("\n")[0]
    assert f"Short on memory?** {smallest} is the smallest" in text
    # a variant whose checkpoint is missing is left out, and the page says which
    left_out = [w.value for w in at.warning if "DeBERTa" in w.value or "ModernBERT" in w.value]
    assert len(left_out) == (1 if MISSING else 0)
    assert all(catalogue.get(k).label in left_out[0] for k in MISSING)


def test_url_restores_the_word_and_k_and_reruns_reuse_the_timings(app_page):
    at = app_page(PAGE, word="2", top_k="3")
    assert not at.exception
    assert at.selectbox(key=K + "word").value == 2 and at.slider(key=K + "top_k").value == 3
    assert "Guessing the hidden word: `girl`" in shown_text(at)
    assert all(len(row) == 3 for row in figures(at)["fill-mask"]["data"][0]["z"])
    before = list(cost_table(at)["forward, median (ms)"])
    at.slider(key=K + "top_k").set_value(4).run()
    assert not at.exception
    assert all(len(row) == 4 for row in figures(at)["fill-mask"]["data"][0]["z"])
    assert list(cost_table(at)["forward, median (ms)"]) == before  # timed once per sentence: not re-timed
    at.selectbox(key=K + "word").set_value(6).run()
    assert "Guessing the hidden word: `ball`" in shown_text(at)
    assert list(cost_table(at)["forward, median (ms)"]) == before  # another word, the same sentence
    assert at.query_params["word"] in (["6"], "6")


def test_malformed_and_out_of_range_word_get_notes(app_page):
    at = app_page(PAGE, word="abc")
    assert not at.exception
    assert "Ignored `word=abc`" in shown_text(at)
    assert at.selectbox(key=K + "word").value == 9
    at = app_page(PAGE, word="40")
    assert not at.exception
    assert any("40" in i.value and "11" in i.value for i in at.info)  # beyond the text's 11 words: a note
    assert at.selectbox(key=K + "word").value == 9  # its last content word, "park", not "."


def test_empty_text_asks_for_a_sentence(app_page):
    at = app_page(PAGE, text="   ")
    assert not at.exception
    assert at.warning and not at.get("plotly_chart")


def test_emoji_rtl_and_injection_are_shown_as_text(app_page):
    text = '<script>alert(1)</script> 😀 مرحبا the "ball"'
    at = app_page(PAGE, text=text, word="3")
    assert not at.exception
    notes = [i.value for i in at.info]
    assert any("😀" in n and "`[UNK]`" in n for n in notes)  # the unknown piece, named with its characters
    assert any("RoBERTa" in n and "byte-level" in n for n in notes)  # byte-level BPE never needs one
    assert not any("emoji" in n.lower() for n in notes)
    tokens = figures(at)["tokens"]
    heads, _, cells = token_grid(tokens, len(LABELS))
    assert heads[:3] == ["<b>&lt;</b>", "<b>script</b>", "<b>&gt;</b>"]
    roberta = LABELS.index("RoBERTa")
    assert any("&lt;" in cell for cell in cells[roberta])  # RoBERTa's bytes cover "<"
    shown = heads + [c for row in cells for c in row] + tokens["layout"]["yaxis"]["ticktext"]
    assert not any("<" in t.replace("<b>", "").replace("</b>", "") for t in shown)  # only our own markup is HTML
    assert "<script>" not in json.dumps(figures(at)["fill-mask"], ensure_ascii=False)


def test_typed_special_tokens_are_named_and_only_special_tokens_stop(app_page):
    at = app_page(PAGE, text="The [MASK] ate the cake.", word="2")
    assert not at.exception
    assert any("`[MASK]`" in i.value for i in at.info)
    assert at.selectbox(key=K + "word").value == 2  # RoBERTa and XLNet read "[MASK]" as text: "MASK" has pieces there
    assert any("BERT" in w.value for w in at.warning)  # BERT reads it as its mask token: no piece of the word
    at = app_page(PAGE, text="[MASK] [SEP] <mask> </s> <sep>")
    assert not at.exception


def test_long_text_is_cut_for_every_model_with_a_note(app_page, bundled):
    at = app_page(PAGE, text=" ".join(["The little girl found a red ball in the park."] * 21))
    assert not at.exception
    cap = limit(bundled)
    assert any(f"reads at most {cap}" in w.value for w in at.warning)
    table = cost_table(at)
    assert (table["tokens"] <= cap).all() and (table["tokens"] > cap - 30).any()


def test_a_split_word_is_explained(app_page):
    at = app_page(PAGE, text="The girl saw a unicode sign.", word="4")
    assert not at.exception
    fm = figures(at)["fill-mask"]["data"][0]
    assert len(fm["z"]) == len(PREDICTORS)
    assert any("`unicode`" in i.value and "several for" in i.value for i in at.info)


def test_values_left_by_other_lessons_do_not_leak_but_the_text_follows(app_page):
    at = app_page()  # another page first (home), as if the values were left there
    at.session_state["distillation.top_k"] = 15  # the distillation lesson allows up to 20
    at.session_state["distillation.word"] = 2
    at.session_state["text"] = "A cat sat on the mat."
    at.switch_page(PAGE).run()
    assert not at.exception
    # the default word (9, "park" of the default sentence) means nothing in this text: its nearest content word,
    # "mat" (5), not the full stop (6) the old index landed on (issue 26)
    assert at.slider(key=K + "top_k").value == 5 and at.selectbox(key=K + "word").value == 5
    assert at.text_area(key="text").value == "A cat sat on the mat."


def test_typing_a_new_sentence_masks_a_content_word_and_the_swap_caption_follows_the_scores(app_page, bundled):
    at = app_page(PAGE, word="9")  # "park"
    at.text_area(key="text").set_value("A cat sat on the mat.").run()  # word 9 is beyond it; 6 would be "."
    assert not at.exception
    assert at.selectbox(key=K + "word").value == 5  # "mat", the nearest content word (issue 26)
    assert "Guessing the hidden word: `mat`" in shown_text(at)
    at.selectbox(key=K + "word").set_value(6).run()  # chosen by hand in the same text: "." it is
    assert at.selectbox(key=K + "word").value == 6
    # the caption under the swapped-in word says what the discriminator's own score shows
    at.selectbox(key=K + "word").set_value(5).run()
    r = compare.run({k: bundled(k) for k in compare.MODELS}, compare.Inputs(text="A cat sat on the mat.", word=5))
    caption = " ".join(c.value for c in at.caption if "discriminator" in c.value)
    assert r.electra_says and r.electra_says in caption and "should light it up" not in caption
    at_swap = txt.tokenize(bundled("electra-discriminator").tokenizer, "A cat sat on the mat.").pieces_of(5)[0]
    p = r.electra[1][2][at_swap]  # P(replaced) of the swapped-in word
    assert ("missed it" in caption) == (p <= 0.5) and (f"{p:.2f}" in caption)
