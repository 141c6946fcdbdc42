"""app/lessons/compare.py and app/figures/compare.py: words and pieces (app.core.text) for every variant, the word to
mask, masking in each model's terms, XLNet's masks, cost measured (parameters, memory, real timing), the guide generated
from the numbers, and run() on the bundled models — with variants left out when they cannot be loaded, and DeBERTa and
ModernBERT (built tiny from configs) predicting as masked LMs."""

from __future__ import annotations

import html
import math
import re
import statistics
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app import measure, permutation
from app.experiments import verdict
from app.lessons import compare
from app.core import text as txt
from app.figures import compare as figs
from app.core.lesson import Stop
from app.models import catalogue, loading
from tests.conftest import require_bundled

ALL = list(catalogue.CATALOGUE)
MLMS = catalogue.MASKED_LMS
TEXT = compare.DEFAULT_TEXT  # "The little girl found a red ball in the park."
BALL = 6  # "ball": one piece in every bundled vocabulary
PARK = compare.DEFAULTS.word


def need(bundled, key):
    """The bundled variant (a missing one fails)."""
    require_bundled(key)
    return bundled(key)


def available(bundled) -> dict:
    """What the page passes to run: every catalogue key -> its loaded variant, or why it could not be loaded."""
    out = {}
    for key in ALL:
        try:
            out[key] = bundled(key)
        except loading.ModelUnavailable as e:
            out[key] = str(e)
    return out


def quick_cache(step, *args):
    """Plain calls, except that the latencies are made up (the real timing is tested on its own below)."""
    if step is measure.latencies:
        models, text, _ = args
        return {
            m.variant.key: {
                "median_ms": 1.0 + i,
                "samples_ms": [1.0 + i, 2.0 + i],
                "n_tokens": len(m.tokenizer(text)["input_ids"]),
            }
            for i, m in enumerate(models)
        }
    return step(*args)


# ----------------------------------------------------------------------------- words and pieces


def test_default_words():
    words = [w for w, _, _ in txt.split_words(TEXT)]
    assert words[BALL] == "ball" and words[PARK] == "park"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_words_are_exact_spans_covering_every_non_space_character(text):
    words = txt.split_words(text)
    for w, s, e in words:
        assert text[s:e] == w and w.strip() == w and w
    assert "".join(w for w, _, _ in words) == "".join(text.split())
    assert [s for _, s, _ in words] == sorted(s for _, s, _ in words)


@pytest.mark.parametrize("key", ALL)
def test_every_piece_maps_to_the_word_it_came_from(bundled, key):
    tok = need(bundled, key).tokenizer
    tk = txt.tokenize(tok, TEXT)
    words = txt.split_words(TEXT)
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
    counts = {k: len(txt.tokenize(bundled(k).tokenizer, "unicode").pieces_of(0)) for k in ("bert", "roberta", "xlnet")}
    assert all(n >= 1 for n in counts.values())
    assert max(counts.values()) > 1  # a word none of the tiny vocabularies has whole


def test_emoji_becomes_unknown_for_wordpiece_but_bytes_for_bpe(bundled):
    bert_tok, roberta_tok = bundled("bert").tokenizer, bundled("roberta").tokenizer
    bert, roberta = txt.tokenize(bert_tok, "a 😀 ball"), txt.tokenize(roberta_tok, "a 😀 ball")
    assert [bert.pieces[i] for i in bert.pieces_of(1)] == [bert_tok.unk_token] and bert.unknown(bert_tok)
    assert roberta.unknown(roberta_tok) == [] and len(roberta.pieces_of(1)) >= 2


def test_fit_text_cuts_at_a_word_boundary_so_every_model_fits(bundled):
    toks = {k: bundled(k).tokenizer for k in ALL if catalogue.get(k).bundled_available()}
    long = " ".join([TEXT] * 40)
    fitted, note = txt.fit_text(long, toks)
    assert note and long.startswith(fitted) and len(fitted) < len(long)
    assert long[len(fitted)] == " " or not long[len(fitted)].isalnum()  # never in the middle of a word
    for tok in toks.values():
        assert len(tok(fitted)["input_ids"]) <= txt.token_limit(tok)
    assert txt.fit_text(TEXT, toks) == (TEXT, None)


def test_fit_text_cuts_inside_a_word_that_alone_is_too_long(bundled):
    toks = {k: bundled(k).tokenizer for k in ("albert", "roberta", "xlnet")}
    fitted, note = txt.fit_text("x" * 1000, toks)
    assert note and fitted and set(fitted) == {"x"}
    assert all(len(t(fitted)["input_ids"]) <= txt.token_limit(t) for t in toks.values())


@given(st.integers(0, 300), st.data())
def test_word_window_holds_the_chosen_word(n, data):
    if n == 0:
        assert len(txt.word_window(0, 0)) == 0
        return
    chosen = data.draw(st.integers(0, n - 1))
    w = txt.word_window(n, chosen, size=24)
    assert chosen in w and len(w) == min(n, 24) and w.start >= 0 and w.stop <= n


# ----------------------------------------------------------------------------- the word to mask


def test_words_to_mask_stops_on_blank_text_and_notes_a_cut(bundled):
    tok = bundled("bert").tokenizer
    for blank in ("", "  \n\t "):
        with pytest.raises(Stop):
            txt.words_to_mask(blank, {"BERT": tok})
    fitted, words, notes = txt.words_to_mask(TEXT, {"BERT": tok})
    assert fitted == TEXT and len(words) == 11 and notes == []
    fitted, words, notes = txt.words_to_mask(" ".join([TEXT] * 40), {"BERT": tok})
    assert len(notes) == 1 and notes[0].level == "warning" and len(tok(fitted)["input_ids"]) <= txt.token_limit(tok)


def test_the_masked_word_is_clamped_and_moved_off_a_typed_special_token(bundled):
    tok = bundled("bert").tokenizer
    words = txt.split_words(TEXT)
    tk = txt.tokenize(tok, TEXT)
    assert txt.choose_masked_word(words, [tk], 6) == (6, [])
    index, notes = txt.choose_masked_word(words, [tk], 40)
    assert index == 9 and len(notes) == 1 and "park" in notes[0].text  # beyond the text: its last content word, named
    typed = f"the {tok.mask_token} ate"
    words, tk = txt.split_words(typed), txt.tokenize(tok, typed)
    index, notes = txt.choose_masked_word(words, [tk], 2)  # "MASK" inside "[MASK]": no piece of its own
    assert index in (0, 4) and tk.pieces_of(index) and f"`{tok.mask_token}`" in notes[-1].text
    only = f"{tok.mask_token} {tok.sep_token}"
    with pytest.raises(Stop):
        txt.choose_masked_word(txt.split_words(only), [txt.tokenize(tok, only)], 0)


def test_a_new_text_masks_its_nearest_content_word_never_its_full_stop(bundled):
    """Issue 26: "Word to mask" kept its index when a new sentence was typed and landed on "."."""
    tok = bundled("bert").tokenizer
    new = "A cat sat on the mat."
    words, tk = txt.split_words(new), txt.tokenize(tok, new)
    assert (
        txt.choose_masked_word(words, [tk], 9)[0] == 5
    )  # the same text (a link's word): its last content word, with a note
    assert txt.choose_masked_word(words, [tk], 9, new_text=True) == (5, [])  # "mat"
    assert txt.choose_masked_word(words, [tk], 6, new_text=True) == (5, [])
    assert txt.choose_masked_word(words, [tk], 1, new_text=True) == (1, [])  # a content word stays


def test_the_swap_caption_says_what_the_discriminator_did_with_the_word():
    special = (True, False, False, False, True)  # [CLS] a b c [SEP]
    missed = compare.swap_verdict("tree", (0.9, 0.02, 0.12, 0.3, 0.9), special, 2)
    assert "missed it" in missed and "0.12" in missed and "lit it up" not in missed and "`tree`" in missed
    assert "2nd highest of the sentence's 3 tokens" in missed  # the specials are not the sentence's tokens
    lit = compare.swap_verdict("tree", (0.0, 0.02, 0.81, 0.3, 0.0), special, 2)
    assert "lit it up" in lit and "0.81" in lit and "missed" not in lit
    crowded = compare.swap_verdict("tree", (0.0, 0.9, 0.6, 0.7, 0.0), special, 2)
    assert "marks `tree` replaced" in crowded and "2 original tokens replaced as well" in crowded
    alone = compare.swap_verdict("tree", (0.0, 0.2, 0.0), (True, False, True), 1)  # a one-word sentence
    assert "the sentence's only token" in alone and "1 tokens" not in alone and "highest" not in alone
    far = compare.swap_verdict("tree", (0.0,) + (0.9,) * 21 + (0.1, 0.0), (True,) + (False,) * 22 + (True,), 22)
    assert "22nd highest of the sentence's 22 tokens" in far  # not "22th"


# ----------------------------------------------------------------------------- predictions


@pytest.mark.parametrize("key", MLMS)
def test_fill_mask_is_a_forward_with_the_word_masked(bundled, key):
    loaded = need(bundled, key)
    tok, model = loaded.tokenizer, loaded.model
    pred = compare.fill_mask(model, tok, TEXT, BALL, k=5)
    assert pred.n_pieces == 1  # "ball" is one piece everywhere: one mask token, as in pre-training
    enc = tok(TEXT, return_tensors="pt")
    where = txt.tokenize(tok, TEXT).pieces_of(BALL)
    x = txt.model_inputs(enc)
    gold = int(x["input_ids"][0, where[0]])
    x["input_ids"][0, where] = tok.mask_token_id
    with torch.no_grad():
        probs = torch.softmax(model(**x).logits[0, where[0]], -1)
    top = probs.topk(5)
    assert list(pred.first.pieces) == tok.convert_ids_to_tokens(top.indices.tolist())
    assert [p for _, p in pred.first.read] == pytest.approx(top.values.tolist(), rel=1e-5)
    assert pred.p_word == pytest.approx(float(probs[gold]), rel=1e-5)
    assert pred.rank == int((probs > probs[gold]).sum()) + 1
    assert pred.original == txt.piece_text(tok, gold)
    assert compare.predict(loaded, TEXT, BALL).top(5) == pred  # the cached step: most_top_k guesses, cut


@pytest.mark.parametrize("key", ["bert", "roberta"])
def test_a_masked_word_cannot_leak_into_its_own_prediction(bundled, key):
    loaded = bundled(key)
    a = compare.fill_mask(loaded.model, loaded.tokenizer, TEXT, BALL, k=5)
    b = compare.fill_mask(loaded.model, loaded.tokenizer, TEXT.replace("ball", "cat"), BALL, k=5)
    assert a.first.pieces == b.first.pieces and [p for _, p in a.first.read] == pytest.approx(
        [p for _, p in b.first.read], rel=1e-5
    )


def test_a_word_in_several_pieces_gets_that_many_masks(bundled):
    loaded = bundled("bert")
    text = "The girl saw a unicode sign."
    n = len(txt.tokenize(loaded.tokenizer, text).pieces_of(4))
    assert n > 1
    pred = compare.fill_mask(loaded.model, loaded.tokenizer, text, 4, k=3)
    assert pred.n_pieces == n and len(pred.pieces) == n
    assert 0 < pred.p_word < 1
    note = compare.masking_note({"BERT": pred.pieces, "RoBERTa": ("Ġsign",)}, "unicode")
    assert "several for BERT" in note and "RoBERTa" in note and "XLNet" in note
    assert compare.masking_note({"BERT": ("ball",)}, "ball") is None


def test_xlnet_masks_put_the_word_last_in_the_order():
    perm_mask, target_mapping = permutation.last_targets_masks(6, [2, 3])
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
    assert a.first.pieces == b.first.pieces and [p for _, p in a.first.read] == pytest.approx(
        [p for _, p in b.first.read], rel=1e-4
    )
    assert 0 < a.p_word < 1 and a.rank >= 1
    assert compare.is_permutation_lm(loaded) and compare.predict(loaded, TEXT, BALL).top(5) == a


def test_discriminator_scores_every_token_and_swap_puts_in_a_real_word(bundled):
    disc = bundled("electra-discriminator")
    tk = txt.tokenize(disc.tokenizer, TEXT)
    probs = compare.replaced_probability(disc, tk.ids)
    assert len(probs) == len(tk.ids) and all(0 <= p <= 1 for p in probs)
    assert not compare.predicts(disc)
    where = tk.pieces_of(BALL)
    ids, put = compare.swap_in(disc.tokenizer, tk.ids, where, ["[SEP]", "ball", "##s", "toy", "cat"])
    assert put == "toy" and len(ids) == len(tk.ids) and ids[where[0]] == disc.tokenizer.convert_tokens_to_ids("toy")
    assert compare.swap_in(disc.tokenizer, tk.ids, where, ["ball", "[CLS]"]) is None


# ----------------------------------------------------------------------------- cost


@pytest.mark.parametrize("key", ALL)
def test_parameters_and_memory_are_counted_once_per_tensor(bundled, key):
    loaded = need(bundled, key)
    model = loaded.model
    n = measure.count_parameters(model)
    assert n == sum(p.numel() for p in {p.data_ptr(): p for p in model.parameters()}.values())
    mem = measure.memory_bytes(model)
    assert mem["parameter_bytes"] == 4 * n  # float32 on CPU
    assert mem["total_bytes"] == mem["parameter_bytes"] + mem["buffer_bytes"]
    size = measure.size_of(loaded)
    assert (size["params"], size["memory_bytes"]) == (n, mem["total_bytes"])
    assert size["layers"] == measure.layer_count(model) and 0 < size["embedding_params"] < n


def test_parameter_count_matches_the_checkpoint_file(bundled):
    # the discriminator's embeddings are shared with the generator in memory, stored in its own file
    for key in ("bert", "distilbert", "albert", "electra-discriminator"):
        assert measure.count_parameters(bundled(key).model) == catalogue.bundled_parameter_count(catalogue.get(key))


def test_layer_count_reads_every_family(bundled):
    assert measure.layer_count(bundled("bert").model) == len(bundled("bert").model.bert.encoder.layer)
    assert measure.layer_count(bundled("distilbert").model) == len(
        bundled("distilbert").model.distilbert.transformer.layer
    )
    assert measure.layer_count(bundled("xlnet").model) == len(bundled("xlnet").model.transformer.layer)


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

    samples = measure.measure_interleaved({"f": forward}, repeats=5, warmup=2, clock=clock)["f"]
    assert len(calls) == 7  # the two warm-up calls are not timed
    assert samples == pytest.approx([3.0, 1.0, 2.0, 10.0, 4.0])


def test_timing_stops_at_its_budget_after_the_least_rounds_and_small_models_get_every_round():
    clock = FakeClock()

    def slow():  # a base-size forward on a CPU: 0.6 s
        clock.now += 0.6

    def fast():
        clock.now += 0.002

    assert (
        len(measure.measure_interleaved({"f": slow}, repeats=9, warmup=0, clock=clock, budget_ms=1500, least=3)["f"])
        == 3
    )  # 1.8 s after 3 rounds: stop
    assert len(measure.measure_interleaved({"f": fast}, repeats=9, warmup=0, clock=clock, budget_ms=1500)["f"]) == 9
    assert len(measure.measure_interleaved({"f": slow}, repeats=9, warmup=0, clock=clock)["f"]) == 9  # no budget


def test_a_slow_warm_up_round_is_enough_and_a_fast_one_is_repeated():
    clock, calls = FakeClock(), []

    def slow():  # 0.6 s: more than a third of the 1.5 s budget
        calls.append("slow")
        clock.now += 0.6

    def fast():
        calls.append("fast")
        clock.now += 0.002

    measure.measure_interleaved({"f": slow}, repeats=9, warmup=2, clock=clock, budget_ms=1500, least=2)
    assert len(calls) == 1 + 3  # one warm-up, then rounds until 1.5 s were timed (0.6, 1.2, 1.8)
    calls.clear()
    measure.measure_interleaved({"f": fast}, repeats=9, warmup=2, clock=clock, budget_ms=1500)
    assert len(calls) == 2 + 9
    calls.clear()
    measure.measure_interleaved({"f": slow}, repeats=3, warmup=2, clock=clock)  # no budget: every warm-up round
    assert len(calls) == 2 + 3


def test_interleaved_timing_takes_turns():
    order = []
    samples = measure.measure_interleaved(
        {"a": lambda: order.append("a"), "b": lambda: order.append("b")}, repeats=3, warmup=1
    )
    assert order == ["a", "b"] * 4
    assert {k: len(v) for k, v in samples.items()} == {"a": 3, "b": 3}


def test_forward_latency_uses_the_clock_and_reports_the_median(bundled):
    ticks = iter(range(1000))
    loaded = bundled("bert")
    out = measure.forward_latencies(
        {"bert": (loaded.model, loaded.tokenizer)}, TEXT, repeats=5, clock=lambda: next(ticks) / 1000
    )["bert"]
    assert out["samples_ms"] == pytest.approx([1.0] * 5) and out["median_ms"] == pytest.approx(1.0)
    assert out["n_tokens"] == len(loaded.tokenizer(TEXT)["input_ids"])


def test_real_latency_samples_are_taken_for_the_sentence_as_tokenized(bundled):
    """Timings themselves are benchmarks (scripts/benchmark.py), not test assertions: here only what is timed."""
    loaded = bundled("bert")
    models = {"bert": (loaded.model, loaded.tokenizer)}
    short = measure.forward_latencies(models, "A ball.", repeats=5)["bert"]
    long = measure.forward_latencies(
        models, txt.fit_text(" ".join([TEXT] * 20), {"b": loaded.tokenizer})[0], repeats=5
    )["bert"]
    assert all(s > 0 for s in short["samples_ms"] + long["samples_ms"])
    assert len(short["samples_ms"]) == len(long["samples_ms"]) == 5
    assert long["n_tokens"] > 10 * short["n_tokens"] == 10 * len(loaded.tokenizer("A ball.")["input_ids"])


def test_latencies_are_keyed_by_variant_and_the_warm_start_flag_only_keys_the_cache(bundled):
    pair = (bundled("bert"), bundled("distilbert"))
    out = measure.latencies(pair, "A ball.", False)
    assert set(out) == {"bert", "distilbert"} and all(v["median_ms"] > 0 for v in out.values())
    assert measure.warm_done(None) and not measure.warm_done({"done": [], "total": 9, "seconds": None})
    assert measure.warm_done({"done": ALL, "total": 9, "seconds": 4.2})
    assert compare.Inputs.from_values({"text": "x", "word": 1, "top_k": 2}, {"seconds": None}).settled is False


def test_timings_taken_while_other_pages_compute_are_provisional_and_short(bundled, monkeypatch):
    """A class opening the server at once: the side-by-side timing is a short look (the fewest rounds an interval
    needs) while other visitors' pages compute, and keyed apart from the quiet one, which is the full timing."""
    values = {"text": "x", "word": 1, "top_k": 2}
    assert compare.Inputs.from_values(values, None, 0).settled is True
    assert compare.Inputs.from_values(values, None, 3).settled is False
    assert compare.Inputs.from_values(values, {"done": ALL, "total": 9, "seconds": 4.2}, 1).settled is False
    assert measure.quiet(None) and not measure.quiet(None, 1) and not measure.quiet({"seconds": None})
    seen = []
    real = measure.measure_interleaved
    monkeypatch.setattr(measure, "measure_interleaved", lambda *a, **kw: seen.append(kw) or real(*a, **kw))
    pair = (bundled("bert"), bundled("distilbert"))
    busy = measure.latencies(pair, "A ball.", False)
    calm = measure.latencies(pair, "A ball.", True)
    assert seen[0]["least"] == seen[0]["repeats"] == measure.MIN_ROUNDS and seen[0].get("budget_ms") is None
    assert seen[1]["least"] == measure.DEFAULTS.least and seen[1]["budget_ms"] == measure.DEFAULTS.budget_ms
    assert seen[0]["warmup"] == 1 < seen[1]["warmup"] == measure.DEFAULTS.warmup
    assert all(len(v["samples_ms"]) >= measure.MIN_ROUNDS for v in busy.values())
    assert all(len(v["samples_ms"]) >= measure.DEFAULTS.least for v in calm.values())


# ----------------------------------------------------------------------------- the guide


def _row(key, label, params, ms, rank=None):
    return {
        "key": key,
        "label": label,
        "params": params,
        "memory_bytes": 4 * params,
        "latency_ms": ms,
        "n_tokens": 12,
        "rank_first": rank,
        "p_word": 0.1 if rank else None,
    }


def test_guide_follows_the_numbers():
    rows = [
        _row("bert", "BERT", 4_000_000, 10.0, rank=2),
        _row("distilbert", "DistilBERT", 3_000_000, 5.0, rank=1),
        _row("albert", "ALBERT", 1_000_000, 10.5, rank=7),
        _row("electra-discriminator", "ELECTRA discriminator", 4_000_000, 20.0),
    ]
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


# ----------------------------------------------------------------------------- run: the page's one sequence


@pytest.fixture(scope="module")
def models(bundled):
    return available(bundled)


def test_run_on_the_bundled_models(models):
    r = compare.run(models, compare.Inputs(), quick_cache)
    loaded = {k: m for k, m in models.items() if not isinstance(m, str)}
    assert r.labels == tuple(m.variant.label for m in loaded.values())  # catalogue order
    assert r.words[r.word] == "park" and r.window == (0, 11)
    assert r.n_tokens == tuple(len(m.tokenizer(TEXT)["input_ids"]) for m in loaded.values())
    assert all(len(row) == 11 and all(row) for row in r.cells)  # every word has pieces for every variant
    predictors = [m for m in loaded.values() if m.variant.role not in ("discriminator", "nsp")]  # no word guesses
    assert [g.label for g in r.guesses] == [m.variant.label for m in predictors] and r.vanished == ()
    assert [g.permutation for g in r.guesses] == [m.variant.family == "xlnet" for m in predictors]
    assert all(len(g.prediction.first.read) == compare.DEFAULTS.top_k for g in r.guesses)
    assert all(g.shown_as == loaded[k].shown_as for g, k in zip(r.guesses, [m.variant.key for m in predictors]))
    assert r.masking_note is None  # "park" is one piece everywhere
    assert (
        len(r.electra) == 2 and r.electra[0][1] == txt.tokenize(loaded["electra-discriminator"].tokenizer, TEXT).pieces
    )
    assert [c["key"] for c in r.costs] == list(loaded) and r.guide and r.any_bundled and not r.provisional
    missing = [k for k, m in models.items() if isinstance(m, str)]
    left_out = [n for n in r.notes if n.text.startswith("Left out")]
    assert len(left_out) == (1 if missing else 0)
    assert all(catalogue.get(k).label in left_out[0].text for k in missing)


def test_run_caches_the_forward_passes_apart_from_the_guesses_shown(models):
    calls = {}

    def recording(step, *args):
        calls.setdefault(top_k, []).append((step.__name__, args))
        return quick_cache(step, *args)

    for top_k in (2, 7):
        r = compare.run(models, compare.Inputs(top_k=top_k), recording)
        assert all(len(g.prediction.first.read) == top_k for g in r.guesses)
    assert calls[2] == calls[7]  # the slider changes no cached step's arguments: nothing is recomputed
    steps = {name for name, _ in calls[2]}
    assert steps == {"predict", "replaced_probability", "latencies", "size_of"}


def test_run_leaves_out_what_cannot_be_loaded_and_stops_when_nothing_can(models):
    some = {
        k: (m if k in ("bert", "xlnet") else f"{catalogue.get(k).label}: no bundled checkpoint")
        for k, m in models.items()
    }
    r = compare.run(some, compare.Inputs(), quick_cache)
    assert r.labels == ("BERT", "XLNet") and [g.label for g in r.guesses] == ["BERT", "XLNet"] and r.electra is None
    assert "ALBERT" in r.notes[0].text and r.notes[0].level == "warning"
    with pytest.raises(Stop):
        compare.run({k: "gone" for k in ALL}, compare.Inputs(), quick_cache)
    with pytest.raises(Stop):
        compare.run(models, compare.Inputs(text="  "), quick_cache)


def test_run_names_typed_special_tokens_and_unknown_pieces(models):
    r = compare.run(models, compare.Inputs(text="The [MASK] ate 😀 cake.", word=2), quick_cache)
    shown = " ".join(n.text for n in r.notes)
    assert "`[MASK]`" in shown and "`😀`" in shown and "emoji" not in shown.lower()
    assert any("RoBERTa" in n.text and "byte-level" in n.text for n in r.notes)  # never an unknown piece
    assert r.word == 2  # RoBERTa reads "[MASK]" as plain text: the word "MASK" has its pieces there
    wordpiece = [g for g in r.guesses if g.label == "BERT"]
    assert wordpiece == [] and "BERT" in r.vanished  # BERT reads it as its special token: nothing of the word to mask


def test_deberta_and_modernbert_guess_as_masked_lms(bundled):
    """The new variants, built tiny from configs with the byte-level BPE tokenizer their recipes also use."""
    from transformers import DebertaConfig, DebertaForMaskedLM, ModernBertConfig, ModernBertForMaskedLM

    tok = bundled("roberta").tokenizer
    torch.manual_seed(0)
    deberta = DebertaForMaskedLM(
        DebertaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=128,
            relative_attention=True,
            max_relative_positions=-1,
            pos_att_type=["c2p", "p2c"],
            position_biased_input=False,
            type_vocab_size=0,
            legacy=False,
            pad_token_id=tok.pad_token_id,
        )
    ).eval()
    config = ModernBertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        global_attn_every_n_layers=2,
        local_attention=16,
        max_position_embeddings=128,
        pad_token_id=tok.pad_token_id,
        cls_token_id=tok.cls_token_id,
        sep_token_id=tok.sep_token_id,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
    )
    config._attn_implementation = "eager"
    modernbert = ModernBertForMaskedLM(config).eval()
    tiny = {
        key: loading.Loaded(catalogue.get(key), model, tok, "bundled", f"tiny {key}", "cpu", "float32", 0.0)
        for key, model in (("deberta", deberta), ("modernbert", modernbert))
    }
    r = compare.run({"bert": bundled("bert"), **tiny}, compare.Inputs(word=BALL, top_k=3), quick_cache)
    assert r.labels == ("BERT", "DeBERTa", "ModernBERT")
    assert [(g.label, g.permutation, g.prediction.n_pieces) for g in r.guesses] == [
        ("BERT", False, 1),
        ("DeBERTa", False, 1),
        ("ModernBERT", False, 1),
    ]
    assert all(len(g.prediction.first.read) == 3 and 0 < g.prediction.p_word < 1 for g in r.guesses)
    for key, loaded in tiny.items():
        assert compare.predicts(loaded) and not compare.is_permutation_lm(loaded)
        assert measure.size_of(loaded)["layers"] == 2


# ----------------------------------------------------------------------------- figures


def guess(label: str, read: list, original: str) -> SimpleNamespace:
    """One variant's guess as fill_mask_figure reads it from a Result: its top (token, P) pairs and the original."""
    return SimpleNamespace(
        label=label, permutation=False, prediction=SimpleNamespace(first=SimpleNamespace(read=read), original=original)
    )


def test_token_grid_figure_counts_pieces_and_escapes_tokens():
    fig = figs.token_grid_figure(
        SimpleNamespace(
            labels=["BERT", "RoBERTa"],
            words=("<b>", "ball"),
            window=(0, 2),
            word=1,
            cells=[[["<", "b", ">"], ["ball"]], [["<b>"], ["Ġball"]]],
            n_tokens=[5, 4],
        )
    )
    assert list(map(list, fig.data[0].z)) == [[None, None], [3, 1], [1, 1]]  # a header row of words, then the variants
    assert fig.data[0].text[2][0] == "&lt;b&gt;" and fig.data[0].text[1][0] == "&lt; · b · &gt;"
    assert list(fig.data[0].text[0]) == [
        "<b>&lt;b&gt;</b>",
        "<b>[ball]</b>",
    ]  # the words, escaped; the masked one marked
    assert "word 0 <b>&lt;b&gt;</b>" in fig.data[0].hovertext[1][0]  # our markup around the escaped token
    assert list(fig.layout.yaxis.ticktext) == ["words 0–1", "BERT (5)", "RoBERTa (4)"]


# a real sentence a student types: 22 words, cut very differently by the three kinds of tokenizer
LONG = "After school the little girl found a shiny red ball under the old oak tree in the park and carried it home ."


def long_grid():
    words = LONG.split()
    cells = [
        [[w.lower()] if len(w) < 6 else [w.lower()[:3], "##" + w.lower()[3:]] for w in words],
        [["Ġ" + w] for w in words],
        [["▁" + w.lower()] for w in words],
    ]
    return figs.token_grid_figure(
        SimpleNamespace(
            labels=["BERT", "RoBERTa", "ELECTRA discriminator"],
            words=tuple(words),
            window=(0, len(words)),
            word=9,
            cells=cells,
            n_tokens=[26, 25, 25],
        )
    )


def test_token_grid_wraps_a_long_sentence_so_every_cell_fits_its_text():
    """22 words in one row of 24-px cells overlapped one another and the header (issue 27): the grid wraps into
    bands, and every cell is as wide as its longest text needs, within the plot area a 1280-px window leaves."""
    fig, words = long_grid(), LONG.split()
    heat = fig.data[0]
    per_band = len(heat.x)
    assert per_band < len(words)
    shown = [html.unescape(re.sub(r"</?b>", "", t)) for row in heat.text for t in row if t]  # as the browser draws it
    assert per_band * figs.cell_width(shown) <= figs.GRID_WIDTH + 1e-9
    # every word appears once, in order, in the header rows (one every 1 + variants rows)
    headers = [t for row in heat.text[::4] for t in row if t]
    assert [h.removeprefix("<b>").removesuffix("</b>").strip("[]") for h in headers] == words
    assert "<b>[ball]</b>" in headers
    assert fig.layout.xaxis.visible is False  # no rotated tick labels running into the title
    assert fig.layout.height >= 60 + figs.GRID_ROW_PX * len(heat.z)


def test_words_per_band_balances_the_bands():
    assert figs.words_per_band(["x" * 5], 22, width=9 * figs.cell_width(["x" * 5])) == 8  # 8 + 7 + 7, not 9 + 9 + 4
    assert figs.words_per_band(["x"], 3) == 3
    assert figs.words_per_band(["x" * 500], 4) == 1  # one word a band, however long


def test_fill_mask_and_cost_figures_carry_the_numbers():
    fig = figs.fill_mask_figure(
        SimpleNamespace(
            guesses=[guess("BERT", [("toy", 0.5), ("ball", 0.2)], "ball"), guess("XLNet", [("ball", 0.4)], "ball")]
        )
    )
    assert list(fig.data[0].z[0]) == [0.5, 0.2] and list(fig.data[0].z[1]) == [0.4, None]
    assert "original word" in fig.data[0].hovertext[0][1]
    cost = figs.cost_figure(["A", "B"], [2_000_000, 1_000_000], [8 * 2**20, 4 * 2**20], [3.0, 1.5], "CPU")
    assert (
        list(cost.data[0].x) == [2.0, 1.0] and list(cost.data[1].x) == [8.0, 4.0] and list(cost.data[2].x) == [3.0, 1.5]
    )


def test_discriminator_figure_pads_rows_of_different_lengths():
    fig = figs.discriminator_figure(
        [("as written", ["a", "b", "c"], [0.1, 0.2, 0.3]), ("swapped", ["a", "x"], [0.1, 0.9])]
    )
    assert list(fig.data[0].z[1]) == [0.1, 0.9, None]
    assert math.isclose(fig.data[0].z[0][2], 0.3)


# ----------------------------------------------------------------------------- quality (trained checkpoints)


@pytest.mark.trained
@pytest.mark.parametrize("key", ["bert", "roberta", "distilbert"])
def test_trained_masked_lms_rank_the_obvious_word_high(bundled, key):
    loaded = bundled(key)
    pred = compare.fill_mask(loaded.model, loaded.tokenizer, TEXT, PARK, k=5)  # "... in the [park]."
    assert pred.rank <= 3


def test_a_ratio_of_timings_gets_an_interval_from_the_rounds_taken_in_turns():
    iv = measure.ratio_interval([10.0, 11.0, 10.5, 10.2, 9.9], [5.0, 5.2, 5.1, 4.9, 5.0])
    logs = [math.log(a / b) for a, b in zip([10.0, 11.0, 10.5, 10.2, 9.9], [5.0, 5.2, 5.1, 4.9, 5.0])]
    half = verdict.t_critical(4) * statistics.stdev(logs) / math.sqrt(5)
    assert iv["n"] == 5 and iv["ratio"] == pytest.approx(math.exp(statistics.fmean(logs)))
    assert (iv["low"], iv["high"]) == pytest.approx((iv["ratio"] / math.exp(half), iv["ratio"] * math.exp(half)))
    assert measure.clearly(iv) == "quicker" and measure.interval_words(iv).endswith("5 rounds in turns")
    assert measure.ratio_interval([10.0, 11.0], [5.0, 5.0]) is None  # two rounds: no interval
    assert measure.clearly(measure.ratio_interval([10.0, 8.0, 12.0], [9.0, 11.0, 10.0])) == "noise"
    assert measure.DEFAULTS.least >= measure.MIN_ROUNDS  # the budget stops no sooner than an interval needs


def test_the_guide_concludes_n_times_quicker_only_when_the_interval_supports_it():
    def row(key, label, params, samples):
        r = _row(key, label, params, statistics.median(samples))
        return {**r, "samples_ms": tuple(samples)}

    noisy = [
        row("bert", "BERT", 4_000_000, [115.0, 240.0, 100.0]),  # two passes once told "2×"; here: noise
        row("albert", "ALBERT", 1_000_000, [243.6, 110.0, 260.0]),
    ]
    text = "\n".join(compare.selection_guide(noisy))
    assert "quicker" not in text and "within timing noise" in text
    assert "ALBERT saves memory, not time" in text and "within timing noise on this machine: 95% interval" in text
    clear = [
        row("bert", "BERT", 4_000_000, [100.0, 104.0, 98.0, 101.0, 99.0]),
        row("distilbert", "DistilBERT", 3_000_000, [50.0, 51.0, 49.0, 50.5, 49.5]),
    ]
    text = "\n".join(compare.selection_guide(clear))
    assert "DistilBERT is the fastest here" in text and "× quicker than BERT" in text and "5 rounds in turns" in text
    assert "DistilBERT is 2.0× faster than (95% interval" in text


def test_on_a_phone_the_guesses_keep_three_ranks_and_the_discriminator_turns_a_quarter():
    fig = figs.fill_mask_figure(
        SimpleNamespace(guesses=[guess("BERT", [("toy", 0.5), ("ball", 0.2), ("cat", 0.1), ("dog", 0.05)], "ball")]),
        phone=True,
    )
    assert list(fig.data[0].x) == ["rank 1", "rank 2", "rank 3"] and "(the first 3 on a phone)" in fig.layout.title.text
    rows = [
        ("as written", ["a", "b", "c"], [0.1, 0.2, 0.3]),
        ("park → sky (generator's guess)", ["a", "x"], [0.1, 0.9]),
    ]
    fig = figs.discriminator_figure(rows, phone=True)
    assert list(fig.data[0].y) == [0, 1, 2] and fig.data[0].x[1] == "park → sky<br>(generator&#39;s<br>guess)"
    assert [list(r) for r in fig.data[0].text] == [["a", "a"], ["b", "x"], ["c", ""]]
    assert fig.data[0].z[1][1] == 0.9 and fig.data[0].z[2][1] is None
