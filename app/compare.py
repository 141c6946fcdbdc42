"""Every variant on one sentence: how each tokenizer cuts it, what each predicts for one chosen word,
and what each costs on this machine (parameters, memory, load time, forward latency) — measured here,
not quoted from papers.

Words are ours, not the tokenizers': ``split_words`` cuts the text into runs of letters/digits and
single punctuation marks, each with its character span. Every tokenizer's pieces are mapped back to
those words through their character offsets, so WordPiece (``##co``), byte-level BPE (``Ġball``) and
SentencePiece (``▁ball``) line up under the same word.

Masking a word in each model's own terms: the pieces of the chosen word (in that model's tokenizer)
all become that model's mask token at once. One piece -> one mask, as in pre-training. Several pieces
-> as many masks (the model is told how long the word is), each predicted on its own; the top-k is for
the first piece, and P(word) is the product of the pieces' probabilities (a masked LM's independent
guesses, not a joint probability). XLNet needs no mask token: the word's pieces are the *last*
targets of a factorization order in which every other token comes first, so the first piece sees the
whole sentence on both sides and later pieces also see the pieces before them (a true chain rule).

Everything here is pure (no streamlit) and runs on any device the models are on.
"""

from __future__ import annotations

from app import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import re
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import torch

WORD = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Defaults:
    text: str = "The little girl found a red ball in the park."
    word: int = 9  # "park": the trained models get it right, "ball" (6) they find harder
    top_k: int = 5
    repeats: int = 9  # timed forwards per (sentence, variant); the median is reported
    warmup: int = 2  # untimed forwards first (allocations, lazy init)
    max_tokens: int = 512  # cap even when a tokenizer claims more (hub tokenizers may say 1e30)
    noise: float = 0.10  # relative latency differences below this are called ties


DEFAULTS = Defaults()


# ----------------------------------------------------------------------------- words and pieces


def split_words(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for every run of word characters and every punctuation mark or symbol."""
    return [(m.group(), m.start(), m.end()) for m in WORD.finditer(text)]


def token_limit(tokenizer, cap: int = DEFAULTS.max_tokens) -> int:
    """How many tokens (special ones included) the model reads: its model_max_length, at most ``cap``."""
    n = getattr(tokenizer, "model_max_length", None) or cap
    return int(min(n, cap))


def model_inputs(enc) -> dict:
    """The tensors a model's forward takes, from a tokenizer's output (drops offsets, masks of specials)."""
    return {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}


@dataclass
class Tokenized:
    """One tokenizer's view of a text. Lists have one entry per token (T)."""

    ids: list[int]
    pieces: list[str]  # the raw vocabulary entries: "##co", "Ġball", "▁ball", "[CLS]"
    offsets: list[tuple[int, int]]  # character span of each token in the text; (0, 0) for specials
    special: list[bool]
    word_of: list[int | None]  # index into split_words(text), None for special tokens

    def pieces_of(self, word: int) -> list[int]:
        """Token positions that belong to word ``word`` (in order)."""
        return [i for i, w in enumerate(self.word_of) if w == word]

    @property
    def unknown(self) -> list[int]:
        return [i for i, p in enumerate(self.pieces) if p in ("[UNK]", "<unk>")]


def tokenize(tokenizer, text: str) -> Tokenized:
    """Tokenize with offsets and map every token to the word (of ``split_words``) it overlaps."""
    enc = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    ids = list(enc["input_ids"])
    offsets = [tuple(o) for o in enc["offset_mapping"]]
    special = [bool(s) for s in enc["special_tokens_mask"]]
    spans = [(s, e) for _, s, e in split_words(text)]
    word_of: list[int | None] = []
    for (s, e), is_special in zip(offsets, special):
        w = None
        if not is_special:
            for j, (ws, we) in enumerate(spans):
                # a zero-width piece (BPE's bare "Ġ") belongs to the word it stands in front of
                if (s < we and e > ws) or (s == e and ws <= s < we):
                    w = j
                    break
        word_of.append(w)
    return Tokenized(ids, tokenizer.convert_ids_to_tokens(ids), offsets, special, word_of)


def choose_word(n_words: int, index: int) -> tuple[int, str | None]:
    """The word index to mask in a text of ``n_words`` words, and a note when ``index`` was out of range."""
    if n_words <= 0:
        raise ValueError("there are no words to choose from")
    if 0 <= index < n_words:
        return index, None
    return n_words - 1, (f"Word {index} is beyond this text's {n_words} words (they are counted from 0): "
                         "masking the last word instead.")


def word_window(n_words: int, chosen: int, size: int = 24) -> range:
    """At most ``size`` consecutive word indices around ``chosen``, for a figure that stays readable."""
    start = min(max(chosen - size // 2, 0), max(n_words - size, 0))
    return range(start, min(start + size, n_words))


def piece_text(tokenizer, token_id: int) -> str:
    """A vocabulary entry as a person reads it: "Ġball" -> "ball", "▁The" -> "The", "##co" stays."""
    raw = tokenizer.convert_ids_to_tokens(int(token_id))
    if int(token_id) in tokenizer.all_special_ids:
        return raw
    shown = tokenizer.convert_tokens_to_string([raw]).strip()
    return shown if shown and "\ufffd" not in shown else raw


def fit_text(text: str, tokenizers: dict[str, object], cap: int = DEFAULTS.max_tokens) -> tuple[str, str | None]:
    """Cut ``text`` so that every tokenizer's encoding fits its model's limit: at a word boundary, or
    inside a word when a single word is already too long.

    Returns (text that fits, a note saying what was cut and why, or None when nothing was cut).
    """
    original = text
    worst = None
    for _ in range(6):  # one cut almost always suffices; re-check in case a cut re-merges pieces
        too_long = []
        for name, tok in tokenizers.items():
            limit = token_limit(tok, cap)
            n = len(tok(text)["input_ids"])
            if n > limit:
                enc = tok(text, return_offsets_mapping=True, truncation=True, max_length=limit)
                end = max((e for s, e in enc["offset_mapping"]), default=0)
                too_long.append((end, name, n, limit))
        if not too_long:
            break
        end, name, n, limit = min(too_long)
        worst = worst or (name, n, limit)
        kept = [w for w in split_words(text) if w[2] <= end]  # words whose every piece was kept
        text = text[: kept[-1][2]] if kept else text[: max(end - 1, 0)]
    if worst is None:
        return text, None
    name, n, limit = worst
    return text, (f"Your text is {n} tokens long for {name}, which reads at most {limit}: every model gets the same "
                  f"first {len(text)} of its {len(original)} characters ({len(split_words(text))} of "
                  f"{len(split_words(original))} words).")


# ----------------------------------------------------------------------------- predictions


@dataclass
class Prediction:
    """One model's guess for the chosen word."""

    n_pieces: int  # how many pieces the word is in this tokenizer (0: it vanished, e.g. a lone space)
    pieces: list[str]  # the word's own pieces (raw)
    top: list[tuple[str, float]]  # top-k for the first piece: (token as read, probability)
    top_raw: list[str]  # the same tokens as vocabulary entries
    p_word: float  # P(the original pieces): product over pieces
    rank_first: int  # rank of the original first piece in the first piece's distribution (1 = top)
    best_fill: str  # the most likely piece at each masked position, joined
    unknown: bool  # the word is (partly) the unknown token: its "original" is not a real word


def _summarise(tokenizer, probs: torch.Tensor, gold: list[int], pieces: list[str], k: int) -> Prediction:
    """probs: (n_pieces, V) distributions over the vocabulary, one per piece of the word."""
    top_p, top_i = probs[0].topk(min(k, probs.shape[-1]))  # (k,)
    p_gold = probs[torch.arange(len(gold)), torch.tensor(gold)]  # (n_pieces,)
    rank = int((probs[0] > probs[0, gold[0]]).sum()) + 1
    best = probs.argmax(-1).tolist()  # (n_pieces,)
    fill = tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens(best)).strip()
    return Prediction(
        n_pieces=len(gold), pieces=pieces,
        top=[(piece_text(tokenizer, i), float(p)) for p, i in zip(top_p, top_i)],
        top_raw=tokenizer.convert_ids_to_tokens(top_i.tolist()),
        p_word=float(p_gold.prod()), rank_first=rank, best_fill=fill,
        unknown=tokenizer.unk_token_id in gold,
    )


def _word_inputs(model, tokenizer, text: str, word: int):
    """(the tokenized text, positions of word ``word``'s pieces, the model's inputs for ``text`` on its
    device); the inputs are None when the word has no pieces."""
    tk = tokenize(tokenizer, text)
    where = tk.pieces_of(word)
    if not where:
        return tk, where, None
    enc = tokenizer(text, return_tensors="pt")
    return tk, where, {k: v.to(model.device) for k, v in model_inputs(enc).items()}


def fill_mask(model, tokenizer, text: str, word: int, k: int = DEFAULTS.top_k) -> Prediction:
    """Mask every piece of word ``word`` with the model's mask token and predict each piece."""
    tk, where, inputs = _word_inputs(model, tokenizer, text, word)
    if not where:
        return Prediction(0, [], [], [], float("nan"), 0, "", False)
    gold = inputs["input_ids"][0, where].tolist()
    inputs["input_ids"][0, where] = tokenizer.mask_token_id  # (1, T) with the word masked
    with torch.inference_mode():
        logits = model(**inputs).logits[0, where]  # (n_pieces, V)
    probs = torch.softmax(logits.float(), -1).cpu()
    return _summarise(tokenizer, probs, gold, [tk.pieces[i] for i in where], k)


def md_code(text: str) -> str:
    """User text as a markdown code span (inert: no links, no emphasis, no HTML)."""
    text = str(text).replace("`", "ˋ").replace("\n", " ")
    return f"`{text}`" if text.strip() else "` `"


def masking_note(pieces: dict[str, list[str]], word: str) -> str | None:
    """Say how each model masked ``word`` when at least one tokenizer cut it into several pieces.

    pieces: model label -> the word's pieces in that model's tokenizer.
    """
    split = {label: p for label, p in pieces.items() if len(p) > 1}
    if not split:
        return None
    whole = [label for label, p in pieces.items() if len(p) == 1]
    parts = "; ".join(f"{label}: {len(p)} ({' · '.join(md_code(x) for x in p)})" for label, p in split.items())
    return (f"{md_code(word)} is one piece for {', '.join(whole) or 'no model'}, but several for {parts}. A masked LM then gets "
            "that many mask tokens at once (so it knows the word's length) and predicts each piece on its own: the "
            "guesses shown are for the first piece, *best fill* takes the likeliest piece at every position, and "
            "P(word) multiplies the pieces' probabilities. XLNet predicts the pieces left to right, each seeing "
            "the ones before it.")


def xlnet_masks(length: int, targets: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """perm_mask (1, T, T) and target_mapping (1, n, T) to predict ``targets`` last, left to right.

    ``perm_mask[0, i, j] = 1``: position i may NOT see position j. Every non-target token comes first
    in the order (seen by everyone); target j is seen only by targets after it (query stream), so
    no position sees a target's content before it is predicted. ``target_mapping[0, k, targets[k]] = 1``.
    """
    perm_mask = torch.zeros(1, length, length)
    for r, j in enumerate(targets):
        perm_mask[0, :, j] = 1.0  # nobody sees target j ...
        perm_mask[0, targets[r + 1:], j] = 0.0  # ... except the targets that come after it
    target_mapping = torch.zeros(1, len(targets), length)
    target_mapping[0, torch.arange(len(targets)), torch.tensor(targets)] = 1.0
    return perm_mask, target_mapping


def xlnet_predict(model, tokenizer, text: str, word: int, k: int = DEFAULTS.top_k) -> Prediction:
    """XLNet's guess for word ``word``: its pieces are the last targets of the factorization order."""
    tk, where, inputs = _word_inputs(model, tokenizer, text, word)
    if not where:
        return Prediction(0, [], [], [], float("nan"), 0, "", False)
    perm_mask, target_mapping = xlnet_masks(inputs["input_ids"].shape[1], where)  # (1, T, T), (1, n, T)
    dtype = next(model.parameters()).dtype
    with torch.inference_mode():
        logits = model(**inputs, perm_mask=perm_mask.to(model.device, dtype),
                       target_mapping=target_mapping.to(model.device, dtype)).logits[0]  # (n, V)
    probs = torch.softmax(logits.float(), -1).cpu()
    gold = [tk.ids[i] for i in where]
    return _summarise(tokenizer, probs, gold, [tk.pieces[i] for i in where], k)


def replaced_probability(discriminator, tokenizer, ids: list[int]) -> list[float]:
    """ELECTRA's discriminator: P(token was replaced) for every token of ``ids`` (specials included)."""
    x = torch.tensor([ids], device=discriminator.device)  # (1, T)
    with torch.inference_mode():
        logits = discriminator(input_ids=x, attention_mask=torch.ones_like(x)).logits[0]  # (T,)
    return torch.sigmoid(logits.float()).cpu().tolist()


def swap_in(tokenizer, ids: list[int], where: list[int], candidates: list[str]) -> tuple[list[int], str] | None:
    """Replace the word at positions ``where`` by the first candidate token that is a whole word,
    not special and not the original: (new ids, the token put in) or None when none qualifies."""
    original = [ids[i] for i in where]
    for raw in candidates:
        tid = tokenizer.convert_tokens_to_ids(raw)
        if tid is None or tid in tokenizer.all_special_ids or raw.startswith("##") or [tid] == original:
            continue
        return ids[: where[0]] + [tid] + ids[where[-1] + 1:], piece_text(tokenizer, tid)
    return None


# ----------------------------------------------------------------------------- cost, measured


def count_parameters(model) -> int:
    """Distinct parameters: a tied weight (ELECTRA's shared embeddings, an LM head) counts once."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def memory_bytes(model) -> dict[str, int]:
    """Bytes held by the model's parameters and buffers (distinct tensors), on its device."""
    params = {id(p): p for p in model.parameters()}.values()
    buffers = {id(b): b for b in model.buffers()}.values()
    p = sum(t.numel() * t.element_size() for t in params)
    b = sum(t.numel() * t.element_size() for t in buffers)
    return {"parameter_bytes": p, "buffer_bytes": b, "total_bytes": p + b}


def layer_count(model) -> int:
    """Transformer layers, whatever the family calls them (num_hidden_layers, n_layers, n_layer)."""
    c = model.config
    for name in ("num_hidden_layers", "n_layers", "n_layer"):
        if getattr(c, name, None) is not None:
            return int(getattr(c, name))
    raise AttributeError("the config names no layer count")


def measure_interleaved(forwards: dict[str, Callable[[], object]], repeats: int = DEFAULTS.repeats,
                        warmup: int = DEFAULTS.warmup, clock: Callable[[], float] = time.perf_counter,
                        sync: Callable[[], None] | None = None) -> dict[str, list[float]]:
    """Milliseconds of ``repeats`` calls of each forward, taken in turns (a, b, c, a, b, c, ...) after
    ``warmup`` untimed rounds, so a burst of background load falls on every model alike rather than on
    whichever happened to be timed then. ``sync`` waits for the device (torch.cuda.synchronize on GPU)
    so queued kernels are counted."""
    for _ in range(warmup):
        for forward in forwards.values():
            forward()
    if sync:
        sync()
    samples: dict[str, list[float]] = {name: [] for name in forwards}
    for _ in range(repeats):
        for name, forward in forwards.items():
            t = clock()
            forward()
            if sync:
                sync()
            samples[name].append((clock() - t) * 1000.0)
    return samples


def measure_latency(forward: Callable[[], object], repeats: int = DEFAULTS.repeats, warmup: int = DEFAULTS.warmup,
                    clock: Callable[[], float] = time.perf_counter, sync: Callable[[], None] | None = None) -> list[float]:
    """Milliseconds of each of ``repeats`` calls of ``forward()`` after ``warmup`` untimed ones."""
    return measure_interleaved({"forward": forward}, repeats, warmup, clock, sync)["forward"]


def forward_latencies(models: dict[str, tuple[object, object]], text: str, repeats: int = DEFAULTS.repeats,
                      clock: Callable[[], float] = time.perf_counter) -> dict[str, dict]:
    """Time each model's plain forward pass on ``text`` under torch.inference_mode, in turns.

    models: name -> (model, tokenizer). Returns name -> {"median_ms", "samples_ms", "n_tokens"}.
    """
    forwards, n_tokens, cuda = {}, {}, False
    for name, (model, tokenizer) in models.items():
        enc = tokenizer(text, return_tensors="pt")
        inputs = {k: v.to(model.device) for k, v in model_inputs(enc).items()}
        forwards[name] = (lambda m=model, x=inputs: m(**x))
        n_tokens[name] = int(inputs["input_ids"].shape[1])
        cuda = cuda or model.device.type == "cuda"
    with torch.inference_mode():
        samples = measure_interleaved(forwards, repeats=repeats, clock=clock,
                                      sync=torch.cuda.synchronize if cuda else None)
    return {name: {"median_ms": statistics.median(s), "samples_ms": s, "n_tokens": n_tokens[name]}
            for name, s in samples.items()}


def forward_latency(model, tokenizer, text: str, repeats: int = DEFAULTS.repeats, clock=time.perf_counter) -> dict:
    """One model's forward latency on ``text``: {"median_ms", "samples_ms", "n_tokens"}."""
    return forward_latencies({"model": (model, tokenizer)}, text, repeats, clock)["model"]


# ----------------------------------------------------------------------------- the guide


def _name(row: dict) -> str:
    return row["label"]


def _names(rows: list[dict]) -> str:
    names = [_name(r) for r in rows]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _tied(a: float, b: float, noise: float) -> bool:
    return abs(a - b) <= noise * max(a, b)


def selection_guide(rows: list[dict], noise: float = DEFAULTS.noise) -> list[str]:
    """Advice that follows from the measured rows, one markdown bullet each.

    A row: {"key", "label", "params", "memory_bytes", "latency_ms", "n_tokens", and for the ones that
    predicted the word: "rank_first", "p_word"}. Differences smaller than ``noise`` (relative) are
    reported as ties, because a shared CPU jitters by about that much.
    """
    if not rows:
        return []
    out = []
    by = {r["key"]: r for r in rows}
    fast = sorted(rows, key=lambda r: r["latency_ms"])
    small = sorted(rows, key=lambda r: r["params"])
    slow = fast[-1]
    tied = [r for r in fast[1:] if _tied(r["latency_ms"], fast[0]["latency_ms"], noise)]
    if tied:
        names = _names([fast[0], *tied])
        out.append(f"**Need speed?** {names} are the fastest here, within timing noise of each other "
                   f"(≈{fast[0]['latency_ms']:.1f} ms a sentence); the slowest, {_name(slow)}, takes "
                   f"{slow['latency_ms']:.1f} ms.")
    else:
        out.append(f"**Need speed?** {_name(fast[0])} is the fastest here: {fast[0]['latency_ms']:.1f} ms a sentence, "
                   f"{slow['latency_ms'] / fast[0]['latency_ms']:.1f}× quicker than {_name(slow)} "
                   f"({slow['latency_ms']:.1f} ms).")
    big = small[-1]
    out.append(f"**Short on memory?** {_name(small[0])} is the smallest: {small[0]['params'] / 1e6:.2f} M parameters "
               f"({small[0]['memory_bytes'] / 2**20:.1f} MiB), against {big['params'] / 1e6:.2f} M for {_name(big)}.")
    if "bert" in by and "distilbert" in by:
        b, d = by["bert"], by["distilbert"]
        ratio = b["latency_ms"] / d["latency_ms"]
        speed = ("about as fast as" if _tied(b["latency_ms"], d["latency_ms"], noise)
                 else f"{ratio:.1f}× faster than" if ratio > 1 else f"{1 / ratio:.1f}× slower than")
        out.append(f"**BERT or DistilBERT?** Here DistilBERT is {speed} BERT with "
                   f"{100 * (1 - d['params'] / b['params']):.0f}% fewer parameters.")
    if "albert" in by and "bert" in by:
        a, b = by["albert"], by["bert"]
        if a["params"] < b["params"]:
            if a["latency_ms"] >= (1 - noise) * b["latency_ms"]:
                out.append(f"**ALBERT saves memory, not time:** {b['params'] / a['params']:.1f}× fewer parameters than "
                           f"BERT, yet {a['latency_ms']:.1f} ms against BERT's {b['latency_ms']:.1f} ms — its shared "
                           "layer still runs once per layer.")
            else:
                out.append(f"**ALBERT:** {b['params'] / a['params']:.1f}× fewer parameters than BERT and faster here "
                           f"({a['latency_ms']:.1f} ms against {b['latency_ms']:.1f} ms).")
    guessed = [r for r in rows if r.get("rank_first")]
    if guessed:
        best = sorted(guessed, key=lambda r: (r["rank_first"], -r.get("p_word", 0.0)))
        top = [r for r in best if r["rank_first"] == 1]
        if top:
            names = _names(top)
            out.append(f"**Filling in a word?** On this sentence {names} put the original word first. One sentence "
                       "is an anecdote, not a benchmark: try a few before you decide.")
        else:
            out.append(f"**Filling in a word?** No model put the original word first on this sentence; "
                       f"{_name(best[0])} came closest (rank {best[0]['rank_first']}). One sentence is an "
                       "anecdote, not a benchmark.")
    if "electra-discriminator" in by:
        e = by["electra-discriminator"]
        out.append(f"**Checking every token (is this word out of place?)** The ELECTRA discriminator scores all "
                   f"{e['n_tokens']} tokens in one {e['latency_ms']:.1f} ms pass; it cannot fill in a blank.")
    return out
