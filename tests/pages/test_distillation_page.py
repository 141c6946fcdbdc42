"""The distillation page through the router: soft targets at T, the temperature sweep, the recipe's three
loss terms for the input, the measured size and speed of the pair; bad input and URL state. Asserts what the
page shows (values, figure data) against the library's own run, not its wording."""

import json

import pytest

from app.lessons import distillation
from app.core import text as txt
from tests.conftest import require_bundled, shown_text

PAGE = "pages/distillation.py"
# The page's numbers are compared with library runs on the CPU (the bundled fixture), so the page runs there too:
# on a GPU host the default device is CUDA, whose kernels differ from the CPU's by ~3e-6 relative.
CPU = {"device": "cpu"}
K = "distillation."  # the page's widget keys are scoped to it; the text box is shared ("text")


@pytest.fixture(autouse=True)
def _pair_built():
    require_bundled(*distillation.MODELS)


def figures(at) -> dict:
    out = {}
    for chart in at.get("plotly_chart"):
        for name in ("soft-targets", "temperature", "kl-per-token", "claims"):
            if f"fig-distillation-{name}" in chart.proto.id:
                out[name] = json.loads(chart.proto.spec)
    return out


def table(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def expected(bundled, **inputs) -> distillation.Result:
    """What the library computes for the same inputs (timings aside): the page must show exactly this."""
    return distillation.run({k: bundled(k) for k in distillation.MODELS}, distillation.Inputs(**inputs))


def test_defaults_show_soft_targets_terms_and_measurements(app_page, bundled):
    at = app_page(PAGE, **CPU)
    assert not at.exception
    r = expected(bundled)
    text = shown_text(at)
    assert "DistilBERT: distillation" in text and "Takeaway" in text
    figs = figures(at)
    assert set(figs) == {"soft-targets", "temperature", "kl-per-token", "claims"}
    bars = figs["soft-targets"]["data"]
    assert len(bars) == 4 and len(bars[0]["y"]) == len(r.soft.tokens) >= 8  # the teacher's top 8 (+ the student's)
    # the bars: each token's share of the shown tokens' probability; hover: its probability over the vocabulary
    assert bars[0]["customdata"] == pytest.approx(list(r.soft.teacher_1))
    assert bars[3]["customdata"] == pytest.approx(list(r.soft.student_t))
    assert bars[0]["y"] == pytest.approx([p / sum(r.soft.teacher_1) for p in r.soft.teacher_1])
    # at T = 2 the teacher's top token loses probability: flatter than T = 1
    assert max(bars[1]["y"]) < max(bars[0]["y"]) and max(bars[3]["y"]) < max(bars[2]["y"])
    sweep = figs["temperature"]["data"]
    assert all(b >= a - 1e-6 for a, b in zip(sweep[0]["y"], sweep[0]["y"][1:]))  # entropy rises with T
    assert figs["kl-per-token"]["data"][0]["y"] == pytest.approx(list(r.kl_per_token), abs=1e-9)
    # the loss table: three terms and their weighted total (α = 5, 2, 1 at T = 2)
    terms = table(at, "weighted, T = 2")
    assert len(terms) == 4
    kl, mlm, cos = terms["at T = 2 (recipe)"][:3]
    assert [kl, mlm, cos] == pytest.approx([r.terms_recipe[k] for k in ("kl", "mlm", "cos")])
    assert terms["weighted, T = 2"].iloc[3] == pytest.approx(5 * kl + 2 * mlm + cos, rel=1e-6)
    # the pair, measured: half the layers, fewer parameters, positive latencies; each row names its checkpoint
    size = table(at, "layers").set_index("model")
    teacher, student = size.loc["teacher (BERT)"], size.loc["student (DistilBERT)"]
    assert student["layers"] * 2 == teacher["layers"] and student["parameters"] < teacher["parameters"]
    assert teacher["checkpoint"] == bundled("bert").shown_as and student["checkpoint"] == bundled("distilbert").shown_as
    latency = next(c for c in size.columns if c.startswith("encoder, "))
    whole = "with MLM head (ms)"
    assert teacher[latency] > 0 and student[latency] > 0
    assert teacher[whole] > teacher[latency] and student[whole] > student[latency]  # the head costs time in both
    caption = next(c.value for c in at.caption if c.value.startswith("Student / teacher"))
    assert f"encoder time {student[latency] / teacher[latency]:.2f}" in caption
    assert f"with the masked-LM head {student[whole] / teacher[whole]:.2f}" in caption
    assert "40% smaller, 60% faster, 97%" in text
    assert list(figs["claims"]["data"][0]["y"]) == pytest.approx([40, 60, 97])
    assert at.selectbox(key=K + "word").value == r.word and f"Soft targets for {txt.md(r.words[r.word])}" in text


def test_temperature_slider_url_round_trip_and_timings_kept(app_page):
    at = app_page(PAGE, **CPU, temperature="4.5", top_k="5", word="6")
    assert not at.exception
    assert at.slider(key=K + "temperature").value == 4.5 and at.slider(key=K + "top_k").value == 5
    assert at.selectbox(key=K + "word").value == 6 and "Soft targets for `ball`" in shown_text(at)
    assert "at your T = 4.5" in table(at, "weighted, T = 2").columns
    hot = max(figures(at)["soft-targets"]["data"][1]["y"])
    timed = list(table(at, "layers").filter(like="encoder, ").iloc[:, 0])
    at.slider(key=K + "temperature").set_value(1.0).run()
    assert not at.exception
    cold = max(figures(at)["soft-targets"]["data"][1]["y"])
    assert cold > hot  # a lower temperature: a sharper teacher
    assert list(table(at, "layers").filter(like="encoder, ").iloc[:, 0]) == timed  # timed once per sentence
    assert at.query_params["temperature"] in (["1"], "1")
    at.selectbox(key=K + "word").set_value(2).run()
    assert not at.exception and "Soft targets for `girl`" in shown_text(at)
    assert at.query_params["word"] in (["2"], "2")


def test_bad_values_in_the_link_get_notes(app_page):
    at = app_page(PAGE, **CPU, temperature="99", word="x")
    assert not at.exception
    text = shown_text(at)
    assert "Ignored `temperature=99`" in text and "Ignored `word=x`" in text
    assert at.slider(key=K + "temperature").value == 2.0 and at.selectbox(key=K + "word").value == 9
    far = app_page(PAGE, **CPU, word="40")
    assert not far.exception and far.info
    assert far.selectbox(key=K + "word").value == 9  # the default sentence's last content word, "park", not "."


def test_empty_long_and_strange_input(app_page, bundled):
    at = app_page(PAGE, **CPU, text="\n  \n")
    assert not at.exception
    assert at.warning and not at.get("plotly_chart")
    long = " ".join(["The little girl found a red ball in the park."] * 21)
    at = app_page(PAGE, **CPU, text=long)
    assert not at.exception
    limit = txt.token_limit(bundled("distilbert").tokenizer)
    assert len(bundled("distilbert").tokenizer(long)["input_ids"]) > limit
    assert any(str(limit) in w.value for w in at.warning)  # cut to what the models read, and said so
    assert len(figures(at)["kl-per-token"]["data"][0]["y"]) <= limit
    at = app_page(PAGE, **CPU, text="</script><img src=x onerror=alert(1)> 😀 שלום", word="0")
    assert not at.exception
    spec = json.dumps(figures(at), ensure_ascii=False)
    assert "<img" not in spec and "</script>" not in spec
    assert any("😀" in i.value for i in at.info)  # the unknown pieces, named by their characters
    at = app_page(PAGE, **CPU, text="[MASK] [SEP]")
    assert not at.exception and at.warning and not at.get("plotly_chart")  # nothing but special tokens
    at = app_page(PAGE, **CPU, text="好" * 400)
    assert not at.exception


def test_values_left_by_other_lessons_do_not_leak_but_the_text_follows(app_page):
    at = app_page()  # another page first (home), as if the values were left there
    at.session_state["electra.temperature"] = 0.1  # another lesson's temperature goes down to 0.1
    at.session_state["compare.top_k"] = 1
    at.session_state["text"] = "A cat sat on the mat."
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.slider(key=K + "temperature").value == 2.0 and at.slider(key=K + "top_k").value == 8
    assert at.text_area(key="text").value == "A cat sat on the mat."  # a valid sentence follows the student
    # the default word 9 ("park" of the default sentence) means nothing in this text: its nearest content word,
    # "mat" (5), not the full stop (6) the old index landed on (issue 26)
    assert at.selectbox(key=K + "word").value == 5


def test_the_loss_table_shows_a_dash_not_none_and_says_why(app_page):
    """Issue 26: the total row's unweighted cell showed a literal "None"."""
    import pyarrow as pa

    at = app_page(PAGE, **CPU)
    terms = table(at, "weighted, T = 2")
    assert terms["at T = 2 (recipe)"].isna().iloc[3]  # the data: no number there (the terms are not summed unweighted)
    frame = next(d for d in at.dataframe if "weighted, T = 2" in d.value.columns)
    shown = pa.ipc.open_stream(frame.proto.arrow_data.styler.display_values).read_all().to_pandas()  # cells as shown
    cells = [str(v) for v in shown.to_numpy().ravel()]
    assert "None" not in cells and "nan" not in cells and shown.iloc[3].tolist().count("—") == 1
    assert any("**—**" in c.value and "only after weighting" in c.value for c in at.caption)


def test_typing_a_new_sentence_masks_a_content_word(app_page):
    """Issue 26: "Word to mask" kept its index for a new sentence and landed on "." ("Soft targets for .")."""
    at = app_page(PAGE, **CPU)
    at.text_area(key="text").set_value("A cat sat on the mat.").run()
    assert not at.exception
    assert at.selectbox(key=K + "word").value == 5 and "Soft targets for `mat`" in shown_text(at)
    at.text_area(key="text").set_value("Hi , you .").run()  # word 5 is beyond it: the nearest content word, "you"
    assert at.selectbox(key=K + "word").value == 2


def test_at_t_1_the_bars_are_not_named_twice_and_changes_are_in_percentage_points(app_page):
    at = app_page(PAGE, **CPU, temperature="4.5")
    deltas = [m.proto.delta for m in at.metric if "vs T = 1" in m.proto.delta]
    assert len(deltas) == 2 and all(d.endswith("percentage points vs T = 1") and "%" not in d for d in deltas)
    assert any(c.value.startswith("Pale bars: T = 1; solid bars: T = 4.5.") for c in at.caption)
    at.slider(key=K + "temperature").set_value(1.0).run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "solid bars: T = 1" not in captions and "At T = 1 the pale (T = 1) and solid bars are the same" in captions
    assert not [m for m in at.metric if "vs T = 1" in m.proto.delta]  # nothing to compare at T = 1
