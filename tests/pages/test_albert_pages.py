"""The two ALBERT lessons through the router: exact parameter counts (settings, impossible settings,
presets, the loaded model, URL state) and shared-layer activations (one block, unrolling, bad input).
Expectations come from the libraries' own run on the same inputs, and from the loaded models' configs."""

import json

import pytest

from app.lessons import albert_activations as albert, albert_params as params
from tests.conftest import app_device_label, require_bundled, shown_text

PARAMS_PAGE = "pages/albert_params.py"
ACTIVATIONS_PAGE = "pages/albert_activations.py"
P, A = "albert_params.", "albert_activations."  # the pages' widget keys are scoped to them; "text" is shared


def needs(*keys):
    require_bundled(*keys)


def figures(at) -> dict:
    """figure name (as given to ui.show_figure) -> plotly spec."""
    return {_name(chart.proto.id): json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}


def _name(element_id: str) -> str:
    for name in (
        "albert-parameters-by-part",
        "albert-parameters-vs-E",
        "albert-parameters-vs-flops",
        "albert-vs-bert-layers",
        "albert-vs-bert-cka",
        "albert-vs-bert-cosine",
        "albert-unrolled",
        "albert-vs-bert-trajectory",
    ):
        if f"fig-{name}" in element_id:
            return name
    return element_id


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def query(at, name: str):
    value = at.query_params.get(name)
    return value[-1] if isinstance(value, list) else value


def flat(rows) -> list[float]:
    return [v for row in rows for v in row]


def notes(at) -> list[str]:
    return [e.value for e in (*at.info, *at.warning)]


# ----------------------------------------------------------------------------- parameters page


def test_parameters_page_defaults_and_the_loaded_albert(app_page, bundled):
    needs("albert")
    at = app_page(PARAMS_PAGE)
    assert not at.exception
    r = params.run({"albert": bundled("albert")}, params.Inputs())
    y = r.yours
    text = shown_text(at)
    assert "where the parameters go" in at.title[0].value and "Takeaway" in text
    assert f"{y.counted:,}" in text and "11,683,584" in text and y.how in text  # ALBERT-base, whole AlbertModel on meta
    assert metric(at, "Parameters (base model)") == params.human_count(y.counted) == "11.7M"
    assert metric(at, "Your setting: GFLOPs per token") == f"{y.flops / 1e9:.3f}"
    presets = at.dataframe[2].value
    row = presets[presets["model"] == "ALBERT-xxlarge"].iloc[0]
    assert row["computed (M)"] == pytest.approx(222.6, abs=0.01) and row["published (M)"] == 235
    figs = figures(at)
    assert set(figs) == {"albert-parameters-by-part", "albert-parameters-vs-E", "albert-parameters-vs-flops"}
    bars = figs["albert-parameters-by-part"]["data"]
    assert sum(t["y"][-1] for t in bars) == 11_683_584  # the last bar: all shared, yours
    # the loaded ALBERT: counted tensor by tensor, equal to the formula from its own config
    cfg = bundled("albert").model.config
    assert metric(at, "Real count: Σ numel over unique tensors") == f"{r.loaded.real:,}"
    assert metric(at, "Formula from its config") == f"{r.loaded.formula:,}" == f"{r.loaded.real:,}"
    assert f"H = {cfg.hidden_size}" in text and f"L = {cfg.num_hidden_layers}" in text
    assert f"`{bundled('albert').shown_as}`" in text


def test_parameters_page_settings_impossible_settings_and_the_url(app_page):
    needs("albert")
    at = app_page(PARAMS_PAGE)
    # attention-only sharing: composed from modules, and said so; the URL follows
    at.selectbox(key=P + "sharing").set_value("attention").run()
    assert not at.exception
    y = params.run({}, params.Inputs(sharing="attention")).yours
    assert metric(at, "Parameters (base model)") == params.human_count(y.counted) == "63.6M"
    assert y.how in shown_text(at) and "composed" in y.how
    assert query(at, "sharing") == "attention"

    # impossible settings: the library's reasons as warnings, no traceback, the presets still shown
    for change in (dict(num_attention_heads=7), dict(embedding_size=1024), dict(num_hidden_layers=0)):
        ((name, value),) = change.items()
        at.number_input(key=P + name).set_value(value).run()
        assert not at.exception
        expected = params.problems(params.Inputs(sharing="attention", **change).arch)
        assert expected and all(any(p in w.value for w in at.warning) for p in expected), name
        assert "Released models" in shown_text(at) and "albert-parameters-vs-flops" in figures(at)
        assert "albert-parameters-by-part" not in figures(at)
        at.number_input(key=P + name).set_value(getattr(params.Arch(), name)).run()
    assert not at.warning


def test_a_released_models_sizes_in_one_click(app_page):
    needs("albert")
    at = app_page(PARAMS_PAGE)
    at.selectbox(key=P + "preset").set_value("BERT-large").run()
    next(b for b in at.button if b.label == "Use its sizes").click().run()
    assert not at.exception
    for name, value in params.preset_values("BERT-large").items():
        widget = (
            at.toggle(key=P + name)
            if name == "factorized"
            else (at.selectbox(key=P + name) if name == "sharing" else at.number_input(key=P + name))
        )
        assert widget.value == value, name
    assert metric(at, "Parameters (base model)") == params.human_count(params.count_preset(params.preset("BERT-large")))
    assert query(at, "hidden_size") == "1024" and query(at, "factorized") == "0"
    assert "preset" not in at.query_params  # the sizes go in the link, not the picker


def sizes_shown(at) -> dict:
    """The page's size settings as its widgets show them, by name."""
    return {
        name: (
            at.toggle(key=P + name)
            if name == "factorized"
            else at.selectbox(key=P + name)
            if name == "sharing"
            else at.number_input(key=P + name)
        ).value
        for name in params.ARCH_FIELDS
    }


def test_the_preset_picker_names_the_model_whose_sizes_are_shown(app_page):
    """It opened on "BERT-base" above ALBERT-base's sizes (issue 27): it names the model the sizes are, on a
    fresh page and on a link with another model's sizes; picking a model shows its sizes at once."""
    needs("albert")
    at = app_page(PARAMS_PAGE)
    assert not at.exception
    assert at.selectbox(key=P + "preset").value == params.DEFAULT_PRESET
    assert sizes_shown(at) == params.preset_values(params.DEFAULT_PRESET)
    assert "✅" not in shown_text(at) and "agrees with" in shown_text(at)  # the check mark is an icon, not an emoji
    link = {k: str(int(v)) if isinstance(v, bool) else str(v) for k, v in params.preset_values("BERT-base").items()}
    at = app_page(PARAMS_PAGE, **link)
    assert at.selectbox(key=P + "preset").value == "BERT-base"
    at.selectbox(key=P + "preset").set_value("ALBERT-large").run()
    assert not at.exception
    assert sizes_shown(at) == params.preset_values("ALBERT-large")


def test_parameters_page_restores_from_the_url_and_notes_bad_values(app_page):
    needs("albert")
    at = app_page(
        PARAMS_PAGE, sharing="ffn", embedding_size="768", num_hidden_layers="abc", seq_len="128", factorized="maybe"
    )
    assert not at.exception
    assert at.selectbox(key=P + "sharing").value == "ffn"
    assert at.number_input(key=P + "embedding_size").value == 768
    assert at.number_input(key=P + "seq_len").value == 128
    assert at.number_input(key=P + "num_hidden_layers").value == 12 and at.toggle(key=P + "factorized").value is True
    text = shown_text(at)
    assert "Ignored `num_hidden_layers=abc`" in text and "Ignored `factorized=maybe`" in text
    y = params.run({}, params.Inputs(sharing="ffn", embedding_size=768, seq_len=128)).yours
    assert f"{y.counted:,}" in text and y.counted == 57_708_288  # Table 4: E = 768, FFN shared
    assert metric(at, "Your setting: GFLOPs per token") == f"{y.flops / 1e9:.3f}"


# ----------------------------------------------------------------------------- activations page


def expected(bundled, **inputs) -> albert.Result:
    """What the library computes for the same inputs: the page must show exactly this."""
    return albert.run({k: bundled(k) for k in albert.MODELS}, albert.Inputs(**inputs))


def test_activations_page_defaults(app_page, bundled):
    needs("albert", "bert")
    at = app_page(ACTIVATIONS_PAGE)
    assert not at.exception
    r = expected(bundled)
    layers = bundled("albert").model.config.num_hidden_layers
    text = shown_text(at)
    assert "one block, applied L times" in at.title[0].value and "Takeaway" in text
    assert metric(at, "ALBERT: layer modules") == "1"
    assert metric(at, "…called in one forward pass") == str(layers)
    assert metric(at, "…distinct weight storages used") == "1"
    assert metric(at, "BERT: layer modules") == str(bundled("bert").model.config.num_hidden_layers)
    assert f"largest difference {r.unrolled.check:.1e}" in text and r.unrolled.check < 1e-5
    assert bundled("albert").shown_as in text and bundled("bert").shown_as in text
    figs = figures(at)
    assert set(figs) == {"albert-vs-bert-layers", "albert-vs-bert-cka", "albert-unrolled", "albert-vs-bert-trajectory"}
    heat = figs["albert-vs-bert-cka"]["data"][0]["z"]
    assert flat(heat) == pytest.approx(flat(r.albert.similarity.tolist()), abs=1e-6) and len(heat) == layers + 1
    assert "%{z:.6f}" in figs["albert-vs-bert-cka"]["data"][0]["hovertemplate"]
    unrolled = figs["albert-unrolled"]["data"][0]["y"]
    assert len(unrolled) == albert.DEFAULTS.repeat * layers
    assert unrolled == pytest.approx(r.unrolled.steps["l2"].tolist(), rel=1e-5)
    # words count from 0: word 2 is "girl", and the path follows its first piece in both models
    assert at.selectbox(key=A + "word").value == 2 and r.words[2] == "girl"
    assert at.selectbox(key=A + "word").options[0] == "0 · The"
    titles = " ".join(a["text"] for a in figs["albert-vs-bert-trajectory"]["layout"]["annotations"])
    assert r.albert.tokens[r.albert.piece] in titles and r.bert.tokens[r.bert.piece] in titles

    at.radio(key=A + "measure").set_value("cosine").run()
    at.slider(key=A + "repeat").set_value(1).run()
    at.selectbox(key=A + "word").set_value(0).run()
    assert not at.exception
    figs = figures(at)
    assert "albert-vs-bert-cosine" in figs and "albert-vs-bert-cka" not in figs
    assert len(figs["albert-unrolled"]["data"][0]["y"]) == layers
    r = expected(bundled, word=0, measure="cosine", repeat=1)
    assert flat(figs["albert-vs-bert-cosine"]["data"][1]["z"]) == pytest.approx(
        flat(r.bert.similarity.tolist()), abs=1e-6
    )
    titles = " ".join(a["text"] for a in figs["albert-vs-bert-trajectory"]["layout"]["annotations"])
    assert r.albert.tokens[r.albert.piece] in titles
    assert query(at, "measure") == "cosine" and query(at, "repeat") == "1" and query(at, "word") == "0"


def test_activations_page_link_with_bad_values(app_page, bundled):
    needs("albert", "bert")
    at = app_page(ACTIVATIONS_PAGE, word="40", measure="euclid", repeat="2")
    assert not at.exception
    text = shown_text(at)
    assert "Ignored `measure=euclid`" in text and at.radio(key=A + "measure").value == "cka"
    assert at.slider(key=A + "repeat").value == 2
    n_words = len(expected(bundled).words)
    assert (
        at.selectbox(key=A + "word").value == n_words - 2
    )  # beyond the text: its last content word ("park"), with a note
    assert any("40" in i.value for i in at.info)


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_an_empty_text_asks_for_a_sentence(app_page, text):
    needs("albert", "bert")
    at = app_page(ACTIVATIONS_PAGE)
    at.text_area(key="text").set_value(text).run()
    assert not at.exception
    assert at.warning and not at.get("plotly_chart")
    assert app_device_label() in " ".join(m.value for m in at.sidebar.markdown)  # the badge is still drawn


def test_emoji_cjk_and_rtl_text_names_the_unknown_token(app_page, bundled):
    needs("albert", "bert")
    at = app_page(ACTIVATIONS_PAGE)
    text = "猫が好き 🐱 שלום <unk>"
    at.text_area(key="text").set_value(text).run()
    assert not at.exception and figures(at)
    shown = notes(at)
    for key in albert.MODELS:
        tok = bundled(key).tokenizer
        if tok.unk_token_id in tok(text)["input_ids"]:
            assert any(f"`{tok.unk_token}`" in s for s in shown), tok.unk_token
    assert not any("&lt;" in s for s in shown)


def test_a_long_text_is_cut_to_each_models_limit(app_page, bundled):
    needs("albert", "bert")
    at = app_page(ACTIVATIONS_PAGE)
    text = " ".join(["the little girl found a red ball"] * 60)
    at.text_area(key="text").set_value(text).run()
    assert not at.exception
    r = expected(bundled, text=text)
    for view in (r.albert, r.bert):
        assert any(w.value.startswith(view.name) and str(len(view.tokens)) in w.value for w in at.warning)
    heat = figures(at)["albert-vs-bert-cka"]["data"][0]["z"]
    assert flat(heat) == pytest.approx(flat(r.albert.similarity.tolist()), abs=1e-6)


def test_follow_the_word_moves_to_a_content_word_of_a_new_sentence(app_page):
    """Issue 26: "Follow the word" kept its index when a new sentence was typed and could land on "."."""
    needs("albert", "bert")
    at = app_page(ACTIVATIONS_PAGE, word="6")  # "ball"
    at.text_area(key="text").set_value("A cat sat on the mat.").run()  # 6 would be "."
    assert not at.exception and at.selectbox(key=A + "word").value == 5  # "mat"
    at.selectbox(key=A + "word").set_value(6).run()  # chosen by hand in this text: kept
    assert at.selectbox(key=A + "word").value == 6
