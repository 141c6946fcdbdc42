"""app/compare.py and app/figures/compare.py: words and pieces, masking in each model's terms, XLNet's
masks, cost measured (parameters, memory, real timing), and the guide generated from the numbers."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app import compare
from app.figures import compare as figs
from app.models import catalogue

ALL = list(catalogue.CATALOGUE)
MLMS = catalogue.MASKED_LMS
TEXT = compare.DEFAULTS.text  # "The little girl found a red ball in the park."
BALL = 6  # "ball": one piece in every bundled vocabulary
PARK = compare.DEFAULTS.word


# ----------------------------------------------------------------------------- words and pieces


def test_default_words():
    words = [w for w, _, _ in compare.split_words(TEXT)]
    assert words[BALL] == "ball" and words[PARK] == "park"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_words_are_exact_spans_covering_every_non_space_character(text):
    words = compare.split_words(text)
    for w, s, e in words:
        assert text[s:e] == w and w.strip() == w and w
    assert "".join(w for w, _, _ in words) == "".join(text.split())
    assert [s for _, s, _ in words] == sorted(s for _, s, _ in words)


@pytest.mark.parametrize("key", ALL)
def test_every_piece_maps_to_the_word_it_came_from(bundled, key):
    tok = bundled(key).tokenizer
    tk = compare.tokenize(tok, TEXT)
    words = compare.split_words(TEXT)
    assert len(tk.ids) == len(tk.pieces) == len(tk.offsets) == len(tk.word_of)
    for i, w in enumerate(tk.word_of):
        if tk.special[i]:
            assert w is None
        else:
            _, ws, we = words[w]
            s, e = tk.offsets[i]
            assert ws <= s and e <= we  # the piece lies inside its word
    for j, (word, _, _) in enumerate(words):
        where = tk.pieces_of(j)
        assert where, f"{key}: no piece for {word!r}"
        assert where == list(range(where[0], where[-1] + 1))  # a word's pieces are contiguous
        joined = tok.convert_tokens_to_string([tk.pieces[i] for i in where]).replace(" ", "")
        assert joined.lower() == word.lower()


def test_tokenizers_really_differ_on_a_rare_word(bundled):
    counts = {k: len(compare.tokenize(bundled(k).tokenizer, "unicode").pieces_of(0)) for k in ("bert", "roberta", "xlnet")}
    assert all(n >= 1 for n in counts.values())
    assert max(counts.values()) > 1  # a word none of the tiny vocabularies has whole


def test_emoji_becomes_unknown_for_wordpiece_but_bytes_for_bpe(bundled):
    bert = compare.tokenize(bundled("bert").tokenizer, "a 😀 ball")
    roberta = compare.tokenize(bundled("roberta").tokenizer, "a 😀 ball")
    assert [bert.pieces[i] for i in bert.pieces_of(1)] == ["[UNK]"] and bert.unknown
    assert roberta.unknown == [] and len(roberta.pieces_of(1)) >= 2


def test_fit_text_cuts_at_a_word_boundary_so_every_model_fits(bundled):
    toks = {k: bundled(k).tokenizer for k in ALL}
    long = " ".join([TEXT] * 40)
    fitted, note = compare.fit_text(long, toks)
    assert note and "reads at most" in note
    assert long.startswith(fitted) and len(fitted) < len(long)
    assert long[len(fitted)] == " " or not long[len(fitted)].isalnum()  # never in the middle of a word
    for tok in toks.values():
        assert len(tok(fitted)["input_ids"]) <= compare.token_limit(tok)
    assert compare.fit_text(TEXT, toks) == (TEXT, None)


def test_choose_word_clamps_with_a_note():
    assert compare.choose_word(5, 3) == (3, None)
    index, note = compare.choose_word(3, 9)
    assert index == 2 and "beyond" in note
    with pytest.raises(ValueError):
        compare.choose_word(0, 0)


@given(st.text(max_size=40))
def test_md_code_is_one_inert_code_span(text):
    out = compare.md_code(text)
    assert out.startswith("`") and out.endswith("`") and out.count("`") == 2 and "\n" not in out


# ----------------------------------------------------------------------------- predictions


@pytest.mark.parametrize("key", MLMS)
def test_fill_mask_is_a_forward_with_the_word_masked(bundled, key):
    loaded = bundled(key)
    tok, model = loaded.tokenizer, loaded.model
    pred = compare.fill_mask(model, tok, TEXT, BALL, k=5)
    assert pred.n_pieces == 1  # "ball" is one piece everywhere: one mask token, as in pre-training
    enc = tok(TEXT, return_tensors="pt")
    where = compare.tokenize(tok, TEXT).pieces_of(BALL)
    x = compare.model_inputs(enc)
    gold = int(x["input_ids"][0, where[0]])
    x["input_ids"][0, where] = tok.mask_token_id
    with torch.no_grad():
        probs = torch.softmax(model(**x).logits[0, where[0]], -1)
    top = probs.topk(5)
    assert pred.top_raw == tok.convert_ids_to_tokens(top.indices.tolist())
    assert [p for _, p in pred.top] == pytest.approx(top.values.tolist(), rel=1e-5)
    assert pred.p_word == pytest.approx(float(probs[gold]), rel=1e-5)
    assert pred.rank_first == int((probs > probs[gold]).sum()) + 1


@pytest.mark.parametrize("key", ["bert", "roberta"])
def test_a_masked_word_cannot_leak_into_its_own_prediction(bundled, key):
    loaded = bundled(key)
    a = compare.fill_mask(loaded.model, loaded.tokenizer, TEXT, BALL, k=5)
    b = compare.fill_mask(loaded.model, loaded.tokenizer, TEXT.replace("ball", "cat"), BALL, k=5)
    assert a.top_raw == b.top_raw and [p for _, p in a.top] == pytest.approx([p for _, p in b.top], rel=1e-5)


def test_a_word_in_several_pieces_gets_that_many_masks(bundled):
    loaded = bundled("bert")
    text = "The girl saw a unicode sign."
    n = len(compare.tokenize(loaded.tokenizer, text).pieces_of(4))
    assert n > 1
    pred = compare.fill_mask(loaded.model, loaded.tokenizer, text, 4, k=3)
    assert pred.n_pieces == n and len(pred.pieces) == n
    assert 0 < pred.p_word < 1
    note = compare.masking_note({"BERT": pred.pieces, "RoBERTa": ["Ġsign"]}, "unicode")
    assert "several for BERT" in note and "RoBERTa" in note and "XLNet" in note
    assert compare.masking_note({"BERT": ["ball"]}, "ball") is None


def test_xlnet_masks_put_the_word_last_in_the_order():
    perm_mask, target_mapping = compare.xlnet_masks(6, [2, 3])
    m = perm_mask[0]
    context = [0, 1, 4, 5]
    assert m[:, context].sum() == 0  # everyone sees all the context
    assert m[:, 2].tolist() == [1, 1, 1, 0, 1, 1]  # target 2 is seen only by the later target 3
    assert m[:, 3].tolist() == [1, 1, 1, 1, 1, 1]  # the last target is seen by nobody
    assert target_mapping[0].tolist() == [[0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0]]


def test_xlnet_prediction_does_not_see_the_word_it_predicts(bundled):
    loaded = bundled("xlnet")
    a = compare.xlnet_predict(loaded.model, loaded.tokenizer, TEXT, BALL, k=5)
    b = compare.xlnet_predict(loaded.model, loaded.tokenizer, TEXT.replace("ball", "cat"), BALL, k=5)
    assert a.n_pieces == b.n_pieces == 1
    assert a.top_raw == b.top_raw and [p for _, p in a.top] == pytest.approx([p for _, p in b.top], rel=1e-4)
    assert 0 < a.p_word < 1 and a.rank_first >= 1


def test_discriminator_scores_every_token_and_swap_puts_in_a_real_word(bundled):
    disc = bundled("electra-discriminator")
    tk = compare.tokenize(disc.tokenizer, TEXT)
    probs = compare.replaced_probability(disc.model, disc.tokenizer, tk.ids)
    assert len(probs) == len(tk.ids) and all(0 <= p <= 1 for p in probs)
    where = tk.pieces_of(BALL)
    ids, put = compare.swap_in(disc.tokenizer, tk.ids, where, ["[SEP]", "ball", "##s", "toy", "cat"])
    assert put == "toy" and len(ids) == len(tk.ids) and ids[where[0]] == disc.tokenizer.convert_tokens_to_ids("toy")
    assert compare.swap_in(disc.tokenizer, tk.ids, where, ["ball", "[CLS]"]) is None


# ----------------------------------------------------------------------------- cost


@pytest.mark.parametrize("key", ALL)
def test_parameters_and_memory_are_counted_once_per_tensor(bundled, key):
    model = bundled(key).model
    n = compare.count_parameters(model)
    assert n == sum(p.numel() for p in {p.data_ptr(): p for p in model.parameters()}.values())
    mem = compare.memory_bytes(model)
    assert mem["parameter_bytes"] == 4 * n  # float32 on CPU
    assert mem["total_bytes"] == mem["parameter_bytes"] + mem["buffer_bytes"]


def test_parameter_count_matches_the_checkpoint_file(bundled):
    # the discriminator's embeddings are shared with the generator in memory, stored in its own file
    for key in ("bert", "distilbert", "albert", "electra-discriminator"):
        assert compare.count_parameters(bundled(key).model) == catalogue.bundled_parameter_count(catalogue.get(key))


def test_layer_count_reads_every_family(bundled):
    assert compare.layer_count(bundled("bert").model) == len(bundled("bert").model.bert.encoder.layer)
    assert compare.layer_count(bundled("distilbert").model) == len(bundled("distilbert").model.distilbert.transformer.layer)
    assert compare.layer_count(bundled("xlnet").model) == len(bundled("xlnet").model.transformer.layer)


class FakeClock:
    """Each forward takes a known time: the clock advances by the next duration when the forward runs."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_latency_is_the_clock_difference_around_each_forward():
    clock, durations, calls = FakeClock(), iter([0.5, 0.5, 0.003, 0.001, 0.002, 0.010, 0.004]), []

    def forward():
        calls.append(1)
        clock.now += next(durations)

    samples = compare.measure_latency(forward, repeats=5, warmup=2, clock=clock)
    assert len(calls) == 7  # the two warm-up calls are not timed
    assert samples == pytest.approx([3.0, 1.0, 2.0, 10.0, 4.0])


def test_interleaved_timing_takes_turns():
    order = []
    samples = compare.measure_interleaved({"a": lambda: order.append("a"), "b": lambda: order.append("b")},
                                          repeats=3, warmup=1)
    assert order == ["a", "b"] * 4
    assert {k: len(v) for k, v in samples.items()} == {"a": 3, "b": 3}


def test_forward_latency_uses_the_clock_and_reports_the_median(bundled):
    ticks = iter(range(1000))
    loaded = bundled("bert")
    out = compare.forward_latency(loaded.model, loaded.tokenizer, TEXT, repeats=5, clock=lambda: next(ticks) / 1000)
    assert out["samples_ms"] == pytest.approx([1.0] * 5) and out["median_ms"] == pytest.approx(1.0)
    assert out["n_tokens"] == len(loaded.tokenizer(TEXT)["input_ids"])


def test_real_latency_is_positive_and_grows_with_the_input(bundled):
    loaded = bundled("bert")
    models = {"bert": (loaded.model, loaded.tokenizer)}
    short = compare.forward_latencies(models, "A ball.", repeats=15)["bert"]
    long = compare.forward_latencies(models, compare.fit_text(" ".join([TEXT] * 20), {"b": loaded.tokenizer})[0],
                                     repeats=15)["bert"]
    assert all(s > 0 for s in short["samples_ms"] + long["samples_ms"])
    assert long["n_tokens"] > 10 * short["n_tokens"]
    assert min(long["samples_ms"]) > min(short["samples_ms"])


# ----------------------------------------------------------------------------- the guide


def _row(key, label, params, ms, rank=None):
    return {"key": key, "label": label, "params": params, "memory_bytes": 4 * params, "latency_ms": ms, "n_tokens": 12,
            "rank_first": rank, "p_word": 0.1 if rank else None}


def test_guide_follows_the_numbers():
    rows = [_row("bert", "BERT", 4_000_000, 10.0, rank=2), _row("distilbert", "DistilBERT", 3_000_000, 5.0, rank=1),
            _row("albert", "ALBERT", 1_000_000, 10.5, rank=7),
            _row("electra-discriminator", "ELECTRA discriminator", 4_000_000, 20.0)]
    text = "\n".join(compare.selection_guide(rows))
    assert "DistilBERT is the fastest here: 5.0 ms" in text and "4.0× quicker than ELECTRA discriminator" in text
    assert "ALBERT is the smallest: 1.00 M" in text
    assert "DistilBERT is 2.0× faster than BERT with 25% fewer parameters" in text
    assert "ALBERT saves memory, not time" in text
    assert "DistilBERT put the original word first" in text
    # swap the timings: the words follow
    rows[0]["latency_ms"], rows[1]["latency_ms"] = 5.0, 10.0
    text = "\n".join(compare.selection_guide(rows))
    assert "BERT is the fastest here" in text and "DistilBERT is 2.0× slower than BERT" in text


def test_guide_calls_small_differences_ties():
    rows = [_row("bert", "BERT", 4_000_000, 10.0), _row("distilbert", "DistilBERT", 3_000_000, 9.5)]
    text = "\n".join(compare.selection_guide(rows))
    assert "DistilBERT and BERT are the fastest here, within timing noise" in text and "about as fast as" in text
    assert compare.selection_guide([]) == []


# ----------------------------------------------------------------------------- figures


def test_token_grid_figure_counts_pieces_and_escapes_tokens():
    fig = figs.token_grid_figure(["BERT", "RoBERTa"], ["<b>", "ball"], [[["<", "b", ">"], ["ball"]], [["<b>"], ["Ġball"]]],
                                 [5, 4], chosen=1)
    assert list(map(list, fig.data[0].z)) == [[3, 1], [1, 1]]
    assert fig.data[0].text[1][0] == "&lt;b&gt;" and fig.data[0].text[0][0] == "&lt; · b · &gt;"
    assert fig.layout.xaxis.ticktext[0] == "&lt;b&gt;"
    assert "word 0 <b>&lt;b&gt;</b>" in fig.data[0].hovertext[0][0]  # our markup around the escaped token
    assert "<b>[ball]</b>" in fig.layout.xaxis.ticktext[1]


def test_fill_mask_and_cost_figures_carry_the_numbers():
    fig = figs.fill_mask_figure(["BERT", "XLNet"], [[("toy", 0.5), ("ball", 0.2)], [("ball", 0.4)]], ["ball", "ball"])
    assert list(fig.data[0].z[0]) == [0.5, 0.2] and list(fig.data[0].z[1]) == [0.4, None]
    assert "original word" in fig.data[0].hovertext[0][1]
    cost = figs.cost_figure(["A", "B"], [2_000_000, 1_000_000], [8 * 2**20, 4 * 2**20], [3.0, 1.5], "CPU")
    assert list(cost.data[0].y) == [2.0, 1.0] and list(cost.data[1].y) == [8.0, 4.0] and list(cost.data[2].y) == [3.0, 1.5]


def test_discriminator_figure_pads_rows_of_different_lengths():
    fig = figs.discriminator_figure([("as written", ["a", "b", "c"], [0.1, 0.2, 0.3]), ("swapped", ["a", "x"], [0.1, 0.9])])
    assert list(fig.data[0].z[1]) == [0.1, 0.9, None]
    assert math.isclose(fig.data[0].z[0][2], 0.3)


# ----------------------------------------------------------------------------- quality (trained checkpoints)


@pytest.mark.trained
@pytest.mark.parametrize("key", ["bert", "roberta", "distilbert"])
def test_trained_masked_lms_rank_the_obvious_word_high(bundled, key):
    loaded = bundled(key)
    pred = compare.fill_mask(loaded.model, loaded.tokenizer, TEXT, PARK, k=5)  # "... in the [park]."
    assert pred.rank_first <= 3


@given(st.integers(0, 300), st.data())
def test_word_window_holds_the_chosen_word(n, data):
    if n == 0:
        assert len(compare.word_window(0, 0)) == 0
        return
    chosen = data.draw(st.integers(0, n - 1))
    w = compare.word_window(n, chosen, size=24)
    assert chosen in w and len(w) == min(n, 24) and w.start >= 0 and w.stop <= n


def test_fit_text_cuts_inside_a_word_that_alone_is_too_long(bundled):
    toks = {k: bundled(k).tokenizer for k in ("albert", "roberta", "xlnet")}
    fitted, note = compare.fit_text("x" * 1000, toks)
    assert note and fitted and set(fitted) == {"x"}
    assert all(len(t(fitted)["input_ids"]) <= compare.token_limit(t) for t in toks.values())
