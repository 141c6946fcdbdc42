"""Every variant on one sentence: how each tokenizer cuts it, what each predicts for one hidden word, what
ELECTRA's discriminator thinks of each token, and what each costs on this machine (parameters, memory,
load time, forward latency) — measured here, not quoted from papers.

Words are app.core.text's (``split_words``, counted from 0), and every tokenizer's pieces are mapped back to
them through their character offsets (``text.tokenize``), so WordPiece (``##co``), byte-level BPE
(``Ġball``) and SentencePiece (``▁ball``) line up under the same word.

Masking a word in each model's own terms: the pieces of the chosen word (in that model's tokenizer) all
become that model's mask token at once. One piece -> one mask, as in pre-training. Several pieces -> as
many masks (the model is told how long the word is), each predicted on its own; the top-k is for the
first piece, and P(word) is the product of the pieces' probabilities (a masked LM's independent guesses,
not a joint probability). BERT, RoBERTa, ALBERT, DistilBERT, the ELECTRA generator, DeBERTa and
ModernBERT are masked LMs. XLNet needs no mask token: the word's pieces are the *last* targets of a
factorization order in which every other token comes first (``perm_mask``, ``target_mapping``), so the
first piece sees the whole sentence on both sides and later pieces also see the pieces before them (a
true chain rule).

The lesson (pages/compare.py) calls :func:`run` with every variant that could be loaded (a variant whose
checkpoint is missing is left out with a note). Each model's forward pass goes through the page's cache
(``predict``, ``replaced_probability``), computed once for the most guesses the page shows, so the
"guesses shown" slider only cuts lists; the latencies are timed once per sentence and set of models
(``measure.latencies``), not on every rerun.

Pure (no streamlit); runs on any device the models are on.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

from dataclasses import dataclass

import torch

from app import measure, mlm
from app.permutation import last_targets_masks
from app.core import text as txt
from app.core.lesson import Note, Stop, direct, inputs_from
from app.models import catalogue, device as devices
from app.core.state import Param, Spec, figure_param, text_param

ORDER = 120  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'Variants side by side'
ICON = ':material/compare_arrows:'
LINE = 'Every variant on your sentence: tokens, predictions, size, latency and memory, measured here.'


@dataclass(frozen=True)
class Defaults:
    word: int = 9  # "park", counted from 0: the trained models get it right, "ball" (6) they find harder
    top_k: int = 5
    most_top_k: int = 10  # every prediction is computed for this many guesses; the slider cuts the list
    noise: float = 0.10  # relative latency differences below this are called ties


DEFAULTS = Defaults()
DEFAULT_TEXT = "The little girl found a red ball in the park."
MODELS = tuple(catalogue.CATALOGUE)  # every variant; the ones that cannot be loaded are left out
# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = 'Variants differ in tokens, training target and cost — measure on your own hardware before choosing.'
SPEC = Spec(
    text_param(DEFAULT_TEXT, "Your sentence"),
    Param(
        "word",
        "int",
        DEFAULTS.word,
        lo=0,
        hi=999,
        widget="select",
        label="Word to mask",
        help="Every model predicts this word with it hidden (words count from 0).",
    ),
    Param(
        "top_k", "int", DEFAULTS.top_k, lo=1, hi=DEFAULTS.most_top_k, widget="slider", label="Guesses shown per model"
    ),
    figure_param(
        (
            ("cost", "What each variant costs here"),
            ("guide", "Which one should I use? (the guide)"),
            ("tokens", "How each tokenizer cuts the sentence"),
        )
    ),
)


# ----------------------------------------------------------------------------- the word to mask


# The text cut to fit every tokenizer, and the word to mask (one that some tokenizer kept a piece of), are
# app/core/text.py's ``words_to_mask`` and ``choose_masked_word``: DistilBERT's lesson chooses its word the same way.


# ----------------------------------------------------------------------------- predictions


# The word-level guess (mask every piece, top-k of the first, P(word), best fill) is app/mlm.py's WordFill:
# the same one the DeBERTa and ModernBERT lessons show.


def _word_inputs(model, tokenizer, text: str, word: int):
    """(the tokenized text, positions of word ``word``'s pieces, the model's inputs for ``text`` on its
    device); the inputs are None when the word has no pieces."""
    tk = txt.tokenize(tokenizer, text)
    where = tk.pieces_of(word)
    if not where:
        return tk, where, None
    enc = tokenizer(text, return_tensors="pt")
    return tk, where, {k: v.to(model.device) for k, v in txt.model_inputs(enc).items()}


def fill_mask(model, tokenizer, text: str, word: int, k: int = DEFAULTS.top_k) -> mlm.WordFill:
    """Mask every piece of word ``word`` with the model's mask token and predict each piece."""
    tk, where, inputs = _word_inputs(model, tokenizer, text, word)
    if not where:
        return mlm.NO_PIECE
    gold = inputs["input_ids"][0, where].tolist()
    inputs["input_ids"] = mlm.with_masks(inputs["input_ids"], where, tokenizer.mask_token_id)  # (1, T)
    return mlm.fill_word(tokenizer, mlm.probabilities_at(model, inputs, where), gold, k)  # probs (n_pieces, V)


def xlnet_predict(model, tokenizer, text: str, word: int, k: int = DEFAULTS.top_k) -> mlm.WordFill:
    """XLNet's guess for word ``word``: its pieces are the last targets of the factorization order."""
    tk, where, inputs = _word_inputs(model, tokenizer, text, word)
    if not where:
        return mlm.NO_PIECE
    perm_mask, target_mapping = last_targets_masks(inputs["input_ids"].shape[1], where)  # (1, T, T), (1, n, T)
    dtype = next(model.parameters()).dtype
    inputs.update(perm_mask=perm_mask.to(model.device, dtype), target_mapping=target_mapping.to(model.device, dtype))
    probs = mlm.probabilities_at(model, inputs)  # (n, V): one row per target
    return mlm.fill_word(tokenizer, probs, [tk.ids[i] for i in where], k)


def is_permutation_lm(loaded) -> bool:
    return loaded.variant.role == "permutation-lm"


def predicts(loaded) -> bool:
    """Whether the variant guesses a hidden word: the masked LMs and XLNet (not the discriminator)."""
    return loaded.variant.is_masked_lm or is_permutation_lm(loaded)


def predict(loaded, text: str, word: int, k: int = DEFAULTS.most_top_k) -> mlm.WordFill:
    """A loaded variant's guess for word ``word``: a masked LM with the word masked, XLNet with it last."""
    guess = xlnet_predict if is_permutation_lm(loaded) else fill_mask
    return guess(loaded.model, loaded.tokenizer, text, word, k)


def masking_note(pieces: dict[str, tuple[str, ...]], word: str) -> str | None:
    """Say how each model masked ``word`` when at least one tokenizer cut it into several pieces.

    pieces: model label -> the word's pieces in that model's tokenizer.
    """
    split = {label: p for label, p in pieces.items() if len(p) > 1}
    if not split:
        return None
    whole = [label for label, p in pieces.items() if len(p) == 1]
    parts = "; ".join(f"{label}: {len(p)} ({' · '.join(txt.md(x) for x in p)})" for label, p in split.items())
    return (
        f"{txt.md(word)} is one piece for {', '.join(whole) or 'no model'}, but several for {parts}. A masked LM "
        "then gets that many mask tokens at once (so it knows the word's length) and predicts each piece on its "
        "own: the guesses shown are for the first piece, *best fill* takes the likeliest piece at every position, "
        "and P(word) multiplies the pieces' probabilities. XLNet predicts the pieces left to right, each seeing "
        "the ones before it."
    )


def replaced_probability(discriminator, ids: tuple[int, ...]) -> tuple[float, ...]:
    """A loaded ELECTRA discriminator: P(token was replaced) for every token of ``ids`` (specials included).
    (T,) -> (T,)"""
    model = discriminator.model
    x = torch.tensor([list(ids)], device=model.device)  # (1, T)
    with devices.forward(model):
        logits = model(input_ids=x, attention_mask=torch.ones_like(x)).logits[0]  # (T,)
    return tuple(torch.sigmoid(logits.float()).cpu().tolist())


def swap_in(tokenizer, ids: tuple[int, ...], where: list[int], candidates) -> tuple[tuple[int, ...], str] | None:
    """Replace the word at positions ``where`` by the first candidate token that is a whole word,
    not special and not the original: (new ids, the token put in) or None when none qualifies."""
    ids = list(ids)
    original = [ids[i] for i in where]
    for raw in candidates:
        tid = tokenizer.convert_tokens_to_ids(raw)
        if tid is None or tid in tokenizer.all_special_ids or raw.startswith("##") or [tid] == original:
            continue
        return tuple(ids[: where[0]] + [tid] + ids[where[-1] + 1 :]), txt.piece_text(tokenizer, tid)
    return None


def swap_verdict(put: str, probs: tuple[float, ...], special: tuple[bool, ...], at: int) -> str:
    """What the discriminator did with the word swapped in at token ``at``, said from its own scores: whether it
    marks it replaced (P > 0.5) and where that score ranks among the sentence's tokens (special tokens left out).
    probs, special: (T,) for the row with the swap."""
    p = probs[at]
    others = [q for i, q in enumerate(probs) if i != at and not special[i]]
    rank = 1 + sum(q > p for q in others)  # 1 = the highest P(replaced) of the sentence
    n = len(others) + 1
    where = (
        "the sentence's only token"
        if n == 1
        else f"the highest of the sentence's {n} tokens"
        if rank == 1
        else f"the {txt.ordinal(rank)} highest of the sentence's {n} tokens"
    )
    if p > 0.5 and rank == 1:
        return f"Here it lit it up: P(replaced) = {p:.2f} for {txt.md(put)}, {where}."
    if p > 0.5:
        flagged = sum(q > 0.5 for q in others)
        return (
            f"Here it marks {txt.md(put)} replaced (P = {p:.2f}, {where}), but it marks "
            f"{txt.count(flagged, 'original token')} replaced as well."
        )
    return (
        f"Here it missed it: it scores the swapped-in {txt.md(put)} at P(replaced) = {p:.2f}, below 0.5 "
        f"({where}), so it takes the word for the original. A plausible word is the hard case: ELECTRA's "
        "generator is trained to produce exactly such swaps."
    )


# ----------------------------------------------------------------------------- cost, measured


# A loaded variant's size (parameters, memory, layers) and its forward latency, timed in turns, are
# app/measure.py's: the same measurements DistilBERT's lesson reports for its teacher and student.


# ----------------------------------------------------------------------------- the guide


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _tied(a: float, b: float, noise: float) -> bool:
    return abs(a - b) <= noise * max(a, b)


def _interval(slow: dict, fast: dict) -> dict | None:
    """How many times longer ``slow``'s forward takes than ``fast``'s, with its 95% interval, from their rounds timed
    in turns (rows' "samples_ms"; measure.ratio_interval); None when the rows hold too few rounds."""
    return measure.ratio_interval(slow.get("samples_ms") or [], fast.get("samples_ms") or [])


def _same_speed(a: dict, b: dict, noise: float) -> bool:
    """Within timing noise: the interval of their ratio contains 1 (with rounds to tell), else within ``noise``."""
    slow, fast = (a, b) if a["latency_ms"] >= b["latency_ms"] else (b, a)
    iv = _interval(slow, fast)
    return measure.clearly(iv) == "noise" if iv else _tied(a["latency_ms"], b["latency_ms"], noise)


def _times(slow: dict, fast: dict) -> tuple[float, str]:
    """(slow / fast, " (95% interval …)" or "") — the interval's ratio when there is one, else the medians'."""
    iv = _interval(slow, fast)
    if iv:
        return iv["ratio"], f" ({measure.interval_words(iv)})"
    return slow["latency_ms"] / fast["latency_ms"], ""


def selection_guide(rows: list[dict], noise: float = DEFAULTS.noise) -> list[str]:
    """Advice that follows from the measured rows, one markdown bullet each.

    A row: {"key", "label", "params", "memory_bytes", "latency_ms", "n_tokens", "samples_ms" (the forwards timed in
    turns, when known), and for the ones that predicted the word: "rank_first", "p_word"}. "N× quicker" is said only
    when the 95% interval of the per-round ratio (measure.ratio_interval) lies above 1; otherwise the two are within
    timing noise on this machine. Rows without rounds fall back to ``noise`` (relative): a shared CPU jitters by
    about that much.
    """
    if not rows:
        return []
    out = []
    by = {r["key"]: r for r in rows}
    fast = sorted(rows, key=lambda r: r["latency_ms"])
    small = sorted(rows, key=lambda r: r["params"])
    slow = fast[-1]
    tied = [r for r in fast[1:] if _same_speed(r, fast[0], noise)]
    if tied:
        names = _names([r["label"] for r in (fast[0], *tied)])
        out.append(
            f"**Need speed?** {names} are the fastest here, within timing noise of each other "
            f"(≈{fast[0]['latency_ms']:.1f} ms a sentence); the slowest, {slow['label']}, takes "
            f"{slow['latency_ms']:.1f} ms."
        )
    else:
        ratio, interval = _times(slow, fast[0])
        out.append(
            f"**Need speed?** {fast[0]['label']} is the fastest here: {fast[0]['latency_ms']:.1f} ms a sentence, "
            f"{ratio:.1f}× quicker than {slow['label']} ({slow['latency_ms']:.1f} ms){interval}."
        )
    big = small[-1]
    out.append(
        f"**Short on memory?** {small[0]['label']} is the smallest: {small[0]['params'] / 1e6:.2f} M parameters "
        f"({small[0]['memory_bytes'] / 2**20:.1f} MiB), against {big['params'] / 1e6:.2f} M for {big['label']}."
    )
    if "bert" in by and "distilbert" in by:
        b, d = by["bert"], by["distilbert"]
        if _same_speed(b, d, noise):
            iv = _interval(*((b, d) if b["latency_ms"] >= d["latency_ms"] else (d, b)))
            speed = "about as fast as" + (
                f" (within timing noise on this machine: {measure.interval_words(iv)})" if iv else ""
            )
        elif b["latency_ms"] > d["latency_ms"]:
            ratio, interval = _times(b, d)
            speed = f"{ratio:.1f}× faster than{interval}"
        else:
            ratio, interval = _times(d, b)
            speed = f"{ratio:.1f}× slower than{interval}"
        out.append(
            f"**BERT or DistilBERT?** Here DistilBERT is {speed} BERT with "
            f"{100 * (1 - d['params'] / b['params']):.0f}% fewer parameters."
        )
    if "albert" in by and "bert" in by and by["albert"]["params"] < by["bert"]["params"]:
        out.append(_albert_line(by["albert"], by["bert"], noise))
    guessed = [r for r in rows if r.get("rank_first")]
    if guessed:
        best = sorted(guessed, key=lambda r: (r["rank_first"], -(r.get("p_word") or 0.0)))
        top = [r for r in best if r["rank_first"] == 1]
        if top:
            out.append(
                f"**Filling in a word?** On this sentence {_names([r['label'] for r in top])} put the original "
                "word first. One sentence is an anecdote, not a benchmark: try a few before you decide."
            )
        else:
            out.append(
                f"**Filling in a word?** No model put the original word first on this sentence; "
                f"{best[0]['label']} came closest (rank {best[0]['rank_first']}). One sentence is an "
                "anecdote, not a benchmark."
            )
    if "electra-discriminator" in by:
        e = by["electra-discriminator"]
        out.append(
            f"**Checking every token (is this word out of place?)** The ELECTRA discriminator scores all "
            f"{e['n_tokens']} tokens in one {e['latency_ms']:.1f} ms pass; it cannot fill in a blank."
        )
    return out


def _albert_line(a: dict, b: dict, noise: float) -> str:
    """The guide's ALBERT bullet (``a``: ALBERT's row, ``b``: BERT's, ALBERT the smaller): fewer parameters, and
    faster only where the timing says so clearly."""
    iv = _interval(b, a) if b["latency_ms"] >= a["latency_ms"] else None
    faster = measure.clearly(iv) == "quicker" if iv else a["latency_ms"] < (1 - noise) * b["latency_ms"]
    if not faster:
        iv = iv or (_interval(a, b) if a["latency_ms"] > b["latency_ms"] else None)
        why = (
            ""
            if not iv
            else f" (the difference is within timing noise on this machine: {measure.interval_words(iv)})"
            if measure.clearly(iv) == "noise"
            else f" ({iv['ratio']:.1f}× the time: {measure.interval_words(iv)})"
        )
        return (
            f"**ALBERT saves memory, not time:** {b['params'] / a['params']:.1f}× fewer parameters than "
            f"BERT, yet {a['latency_ms']:.1f} ms against BERT's {b['latency_ms']:.1f} ms{why} — its "
            "shared layer still runs once per layer."
        )
    else:
        return (
            f"**ALBERT:** {b['params'] / a['params']:.1f}× fewer parameters than BERT and faster here "
            f"({a['latency_ms']:.1f} ms against {b['latency_ms']:.1f} ms, {measure.interval_words(iv)})."
            if iv
            else f"**ALBERT:** {b['params'] / a['params']:.1f}× fewer parameters than BERT and faster here "
            f"({a['latency_ms']:.1f} ms against {b['latency_ms']:.1f} ms)."
        )


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    settled: bool = True  # the server was quiet (measure.quiet): timings taken while it was busy are taken again
    new_text: bool = False  # the text changed since ``word`` was chosen: mask its nearest content word instead

    @classmethod
    def from_values(cls, values: dict, warm: dict | None = None, others: int = 0) -> "Inputs":
        """From the page's values, ``ui.warm_progress()`` and ``ui.other_pages()``."""
        return measure.timed_inputs(cls, values, warm, others)


@dataclass(frozen=True)
class Guess:
    """One variant's guess for the hidden word, cut to the guesses shown."""

    label: str
    shown_as: str  # which checkpoint (Loaded.shown_as)
    permutation: bool  # XLNet: the word predicted last in the factorization order, no mask token
    prediction: mlm.WordFill


@dataclass(frozen=True)
class Result:
    """Every variant on one sentence, as plain data. Tuples indexed like ``labels`` hold one entry per
    variant compared (in catalogue order).

    cells[v][w]: the raw pieces of word window[0] + w in variant v's tokenizer; n_tokens[v]: its token count
    with special tokens. guesses: the variants that predict a word and kept a piece of it; vanished: the ones
    that kept no piece. electra: (row name, tokens, P(replaced) per token) rows, None without the
    discriminator. costs: one dict per variant (see :func:`selection_guide`, plus "tokenizer", "shown_as",
    "source", "device", "load_s", "spread_ms", "timed": forward passes timed)."""

    words: tuple[str, ...]  # split_words(text), counted from 0
    word: int
    labels: tuple[str, ...]
    window: tuple[int, int]  # [start, stop) of the words the token grid shows
    cells: tuple[tuple[tuple[str, ...], ...], ...]
    n_tokens: tuple[int, ...]
    guesses: tuple[Guess, ...]
    vanished: tuple[str, ...]
    masking_note: str | None
    electra: tuple[tuple[str, tuple[str, ...], tuple[float, ...]], ...] | None
    electra_says: (
        str | None
    )  # markdown: what the discriminator did with the swapped-in word (swap_verdict); None without a swap
    costs: tuple[dict, ...]
    guide: tuple[str, ...]
    ties: tuple[
        tuple[str, ...], ...
    ]  # variants (labels) whose forward-time intervals overlap: not ranked (``measure.overlapping``)
    device: str
    provisional: bool  # timed while the server was busy (its warm start loading models, or other visitors' pages)
    any_bundled: bool
    notes: tuple[Note, ...]


def tokenizer_notes(tks: dict[str, txt.Tokenized], models: dict, text: str) -> list[Note]:
    """What the tokenizers did with the text (typed special tokens, unknown pieces), one note for each group
    of variants that read it the same way, and which variants never need an unknown piece."""
    groups: dict[tuple, list[str]] = {}
    for key, tk in tks.items():
        groups.setdefault((tk.ids, tk.typed_special, models[key].tokenizer.unk_token), []).append(key)
    notes = []
    for keys in groups.values():
        who = _names([models[k].variant.label for k in keys])
        notes += [Note(n) for n in txt.input_notes(tks[keys[0]], models[keys[0]].tokenizer, text, who)]
    unknown = [k for k, tk in tks.items() if tk.unknown(models[k].tokenizer)]
    as_bytes = [
        models[k].variant.label
        for k in tks
        if k not in unknown and models[k].variant.tokenizer_kind.startswith("byte-level")
    ]
    if unknown and as_bytes:
        notes.append(
            Note(
                f"{_names(as_bytes)} never need{'s' if len(as_bytes) == 1 else ''} an unknown piece: a "
                "byte-level BPE reads any text as bytes, so every character has pieces."
            )
        )
    return notes


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Every variant on the sentence: tokens, guesses for the hidden word, the ELECTRA discriminator, costs.

    ``models`` maps catalogue keys to loaded variants, or to the reason (a str) a variant could not be
    loaded: it is left out with a note. Forward passes and timings go through ``cache``; predictions are
    computed for ``most_top_k`` guesses, so ``top_k`` only cuts them."""
    missing = {k: m for k, m in models.items() if isinstance(m, str)}
    models = {k: m for k, m in models.items() if not isinstance(m, str)}
    notes = (
        [
            Note(
                "Left out, because they could not be loaded: "
                + "; ".join(f"{catalogue.get(k).label} ({txt.md(why, 120)})" for k, why in missing.items())
                + ".",
                "warning",
            )
        ]
        if missing
        else []
    )
    if not models:
        raise Stop("No variant could be loaded, so there is nothing to compare.", "error")
    notes += [Note(m.notice) for m in models.values() if m.notice]

    fitted, words, cut = txt.words_to_mask(
        inputs.text, {m.variant.label: m.tokenizer for m in models.values()}, DEFAULT_TEXT
    )
    notes += cut
    tks = {k: txt.tokenize(m.tokenizer, fitted) for k, m in models.items()}  # (T,) each, nothing cut: the text fits
    notes += tokenizer_notes(tks, models, fitted)
    word, chosen = txt.choose_masked_word(words, list(tks.values()), inputs.word, inputs.new_text)
    notes += chosen

    preds = {k: cache(predict, m, fitted, word) for k, m in models.items() if predicts(m)}
    guesses = tuple(
        Guess(m.variant.label, m.shown_as, is_permutation_lm(m), preds[k].top(inputs.top_k))
        for k, m in models.items()
        if k in preds and preds[k].n_pieces
    )
    vanished = tuple(models[k].variant.label for k, p in preds.items() if not p.n_pieces)

    electra = electra_says = None
    if "electra-discriminator" in models:
        disc = models["electra-discriminator"]
        dtk = tks["electra-discriminator"]
        electra = [("as written", dtk.pieces, cache(replaced_probability, disc, dtk.ids))]
        where = dtk.pieces_of(word)
        gen = preds.get("electra-generator")
        swapped = swap_in(disc.tokenizer, dtk.ids, where, gen.first.pieces) if gen and gen.n_pieces and where else None
        if swapped:
            ids, put = swapped
            probs = cache(replaced_probability, disc, ids)  # (T,)
            electra.append(
                (
                    f"{words[word][0]} → {put} (generator's guess)",
                    tuple(disc.tokenizer.convert_ids_to_tokens(list(ids))),
                    probs,
                )
            )
            specials = set(disc.tokenizer.all_special_ids)
            electra_says = swap_verdict(put, probs, tuple(i in specials for i in ids), where[0])
        electra = tuple(electra)

    timed = cache(measure.latencies, tuple(models.values()), fitted, bool(inputs.settled))
    costs = _costs(models, preds, timed, cache)
    ties = measure.overlapping(
        {
            c["label"]: {"median": c["latency_ms"], "low": c["latency_low_ms"], "high": c["latency_high_ms"]}
            for c in costs
        }
    )

    window = txt.word_window(len(words), word)
    return Result(
        words=tuple(w for w, _, _ in words),
        word=word,
        labels=tuple(m.variant.label for m in models.values()),
        window=(window.start, window.stop),
        cells=tuple(tuple(tuple(tk.pieces[i] for i in tk.pieces_of(j)) for j in window) for tk in tks.values()),
        n_tokens=tuple(len(tk.ids) for tk in tks.values()),
        guesses=guesses,
        vanished=vanished,
        masking_note=masking_note({g.label: g.prediction.pieces for g in guesses}, words[word][0]),
        electra=electra,
        electra_says=electra_says,
        costs=tuple(costs),
        guide=tuple(selection_guide(costs)),
        ties=tuple(tuple(g) for g in ties),
        device=next(iter(models.values())).device,
        provisional=not inputs.settled,
        any_bundled=any(m.is_bundled for m in models.values()),
        notes=tuple(notes),
    )


def _costs(models: dict, preds: dict, timed: dict, cache) -> list[dict]:
    """One row a variant for the cost table and the guide: sizes, the forward times timed in turns with the median's
    interval, and how it ranked the hidden word."""
    costs = []
    for k, m in models.items():
        size, lat, p = cache(measure.size_of, m), timed[m.variant.key], preds.get(k)
        costs.append(
            {
                "key": k,
                "label": m.variant.label,
                "tokenizer": m.variant.tokenizer_kind,
                "shown_as": m.shown_as,
                "source": m.source,
                "device": f"{m.device} · {m.dtype}",
                "n_tokens": lat["n_tokens"],
                "params": size["params"],
                "memory_bytes": size["memory_bytes"],
                "load_s": m.load_seconds,
                "latency_ms": lat["median_ms"],
                "spread_ms": max(lat["samples_ms"]) - min(lat["samples_ms"]),
                "timed": len(lat["samples_ms"]),
                "samples_ms": tuple(lat["samples_ms"]),
                "rank_first": p.rank if p and p.n_pieces else None,
                "p_word": p.p_word if p and p.n_pieces else None,
            }
        )
        iv = measure.median_interval(lat["samples_ms"])  # the median's interval, from the rounds timed in turns
        costs[-1].update(latency_low_ms=iv["low"], latency_high_ms=iv["high"], latency_coverage=iv["coverage"])
    return costs


# ----------------------------------------------------------------------------- ask the class


def question(result: Result):
    """ "Which word goes in the blank?" on the sentence every variant read: the choices are the variants' first
    guesses and the word that was there (alphabetical); the model's answer is BERT's first guess (the first variant
    that guessed), and the reveal says what each variant guessed."""
    from app.classroom.question import Question, reads

    guesses = [g for g in result.guesses if g.prediction.pieces and not g.prediction.unknown]
    if not guesses or not 0 <= result.word < len(result.words):
        return None
    first = guesses[0].prediction
    words = {reads(w).strip(): float(p) for w, p in zip(first.first.words, first.first.probabilities)}
    choices = {w for g in guesses if (w := reads(g.prediction.first.words[0]).strip()).isalpha()}
    original = result.words[result.word]
    choices.add(original)
    for w in words:  # up to four: the first variant's next guesses
        if len(choices) >= 4:
            break
        if w.isalpha():
            choices.add(w)
    if len(choices) < 2:
        return None
    text = " ".join("____" if i == result.word else w for i, w in enumerate(result.words))
    said = "; ".join(f"{g.label}: {reads(g.prediction.first.words[0]).strip()}" for g in guesses)
    top = reads(first.first.words[0]).strip()
    return Question(
        "compare",
        f"Which word goes in the blank? {text}",
        "choice",
        tuple(sorted(choices, key=str.lower)),
        (top,),
        tuple((c, words[c]) for c in sorted(choices) if c in words),
        f"The word there was {original}. First guesses: {said}.",
    )
