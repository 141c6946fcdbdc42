"""Text in, text out: the one place that splits words, tokenizes and aligns pieces to words, and escapes
what a user typed before it is shown.

Words are ours, not the tokenizers': :func:`split_words` cuts a text into runs of letters/digits and
single punctuation marks, each with its character span. :func:`tokenize` maps every tokenizer's pieces
back to those words through their character offsets, so WordPiece (``##co``), byte-level BPE
(``Ġball``) and SentencePiece (``▁ball``) line up under the same word, and word ``i`` means the same
word on every page (counted from 0).

Escaping (any value a user controls: typed text, URL values, pieces of it):
- :func:`md` writes it into Streamlit markdown as an inert code span: no link, image, colour, LaTeX,
  emphasis or HTML can come out of it, and invisible format characters (bidi overrides, zero-width
  joiners: Unicode category Cf) are shown as ``⟨U+202E⟩`` instead of reordering the sentence around it;
- :func:`plain` writes it into markdown as plain prose (a link label, a caption): punctuation escaped;
- :func:`html` escapes it for HTML and plotly text, once: quotes become numeric references (``&#34;``),
  which plotly decodes like a browser (plotly knows only a few named entities and shows ``&quot;`` as is).

The guard every lesson opens with, :func:`require_text`, stops a run on an empty box in one wording.
The word a lesson hides from several tokenizers at once: :func:`words_to_mask` cuts the text so that every
one of them fits, :func:`choose_masked_word` picks a word that at least one of them kept a piece of. When the
text changes under a chosen word, :func:`word_for_new_text` moves it to the nearest content word.

Pure: no streamlit.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first, as every library module a page runs: it is light itself)

import re
import unicodedata
from dataclasses import dataclass

from app.core.lesson import Note, Stop

WORD = re.compile(r"\w+|[^\w\s]")
_INVISIBLE = re.compile(r"[\u0000-\u001f\u007f-\u009f]")  # control characters (newlines, tabs, ...)


# ----------------------------------------------------------------------------- numbers in prose


def count(n: int, noun: str, plural: str | None = None) -> str:
    """ "1 word", "3 words" ("1 child", "2 children" with ``plural``): a sentence's count agrees with its number."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 22nd, 101st."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# ----------------------------------------------------------------------------- escaping


def visible(value: object) -> str:
    """``value`` as a string whose every character shows: format characters (category Cf: bidi overrides,
    zero-width joiners, soft hyphens) become ``⟨U+XXXX⟩``, control characters (newlines, tabs) a space."""
    s = _INVISIBLE.sub(" ", str(value))
    return "".join(f"⟨U+{ord(c):04X}⟩" if unicodedata.category(c) == "Cf" else c for c in s)


def md(value: object, max_chars: int | None = 60) -> str:
    """A user value as a markdown code span that nothing inside can close or break out of.

    A code span ends only at a backtick run as long as its opening one, so backticks inside become the
    look-alike ``ˋ``; no character inside a code span is markup (links, images, ``:red[...]``, ``$...$``,
    HTML and entities stay literal). Long values are cut to ``max_chars`` with an ellipsis.
    """
    s = visible(value).replace("`", "ˋ")
    if max_chars is not None and len(s) > max_chars:
        s = s[: max_chars - 1] + "…"
    return f"`{s}`" if s.strip() else "` `"


_MD_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_AUTOLINK = re.compile(r"(\\:\\/\\/|\\@)")  # "://" and "@", once escaped: a word joiner goes after them
_WWW = re.compile(r"(?i)\b(w)(ww\\\.)")  # "www.", once escaped: a word joiner goes inside it


def plain(value: object, max_chars: int | None = None) -> str:
    """A user value as plain markdown text, for a place that shows markdown as a line of prose (a link's
    label, a progress bar's text): every ASCII punctuation character is backslash-escaped (CommonMark reads
    ``\\c`` as the character itself), so no link, image, emphasis, ``:red[...]``, ``$...$``, emoji code or
    HTML can form, and format characters show as ``⟨U+XXXX⟩`` (:func:`visible`). GitHub-flavoured markdown
    still links a bare address through those escapes, so a word joiner (U+2060, invisible) follows every
    ``://`` and ``@`` and splits every ``www.`` (checked in Chromium: no link forms). Where a whole caption of user text
    is shown, prefer an escaped HTML block (``ui.user_caption``), which shows the text exactly. Cut to ``max_chars``
    with an ellipsis."""
    s = visible(value)
    if max_chars is not None and len(s) > max_chars:
        s = s[: max_chars - 1] + "…"
    escaped = _MD_PUNCTUATION.sub(r"\\\1", s)
    return _WWW.sub("\\1\u2060\\2", _AUTOLINK.sub("\\1\u2060", escaped))


def html(value: object) -> str:
    """A user value escaped for HTML (plotly hover text and labels, bertviz payloads), exactly once: ``&``,
    ``<``, ``>`` as named entities, quotes as numeric references (``"`` -> ``&#34;``, ``'`` -> ``&#39;``).
    Plotly decodes numeric references and only a handful of named ones (not ``&quot;``, which it would show
    literally); a browser decodes both."""
    s = visible(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace('"', "&#34;").replace("'", "&#39;")


# ----------------------------------------------------------------------------- words


def split_words(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for every run of word characters and every punctuation mark or symbol."""
    return [(m.group(), m.start(), m.end()) for m in WORD.finditer(text)]


def choose_word(n_words: int, index: int, words=None) -> tuple[int, str | None]:
    """The word to use in a text of ``n_words`` words, and a note when ``index`` is out of range
    (words are counted from 0): then the last word, or, given the text's ``words`` (strings, or
    :func:`split_words` triples), its last content word (:func:`is_content_word`), so that a link's
    ``word=99`` lands on "park" rather than on the full stop. Raises ValueError when there is no word at all."""
    if n_words <= 0:
        raise ValueError("there are no words to choose from")
    if 0 <= index < n_words:
        return index, None
    last = n_words - 1
    if words is not None:
        names = [w if isinstance(w, str) else w[0] for w in words][:n_words]
        j = word_for_new_text([(w, 0, 0) for w in names], last)  # the content word nearest the end
        if j != last:
            return j, (
                f"Word {index} is beyond this text's {count(n_words, 'word')} (they are counted from 0): "
                f"using its last word, {md(names[j])}, instead."
            )
    return last, (
        f"Word {index} is beyond this text's {count(n_words, 'word')} (they are counted from 0): "
        f"using {'its only' if n_words == 1 else 'the last'} word instead."
    )


def is_content_word(word: str) -> bool:
    """True for a word with a letter in it ("park", "don", "3rd"); False for punctuation, symbols, numbers."""
    return any(c.isalpha() for c in word)


def word_for_new_text(words: list[tuple[str, int, int]], index: int, among=None) -> int:
    """The word to use when the text has changed under a chosen word index: the content word
    (:func:`is_content_word`) nearest to ``index`` (clamped to the text; the earlier one on a tie), among
    ``among`` (word indices, default all). ``index`` itself when it is such a word; the clamped index when
    there is none. The one rule every lesson with a word to pick follows, so a new sentence never lands on
    its full stop."""
    if not words:
        raise ValueError("there are no words to choose from")
    index = min(max(int(index), 0), len(words) - 1)
    pool = [j for j in (range(len(words)) if among is None else among) if is_content_word(words[j][0])]
    return min(pool, key=lambda j: (abs(j - index), j)) if pool else index


def word_window(n_words: int, chosen: int, size: int = 24) -> range:
    """At most ``size`` consecutive word indices around ``chosen``, for a figure that stays readable."""
    start = min(max(chosen - size // 2, 0), max(n_words - size, 0))
    return range(start, min(start + size, n_words))


def unusual_characters(text: str) -> str:
    """The distinct characters of ``text`` outside Latin, punctuation and common symbols, in order
    (what an English-only vocabulary is likely to lack)."""
    seen: list[str] = []
    for ch in text:
        if ch.isspace() or ch in seen:
            continue
        if ord(ch) < 0x250 or unicodedata.category(ch) in ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"):
            continue
        seen.append(ch)
    return "".join(seen)


# ----------------------------------------------------------------------------- pieces


@dataclass(frozen=True)
class Tokenized:
    """One tokenizer's view of a text. Tuples have one entry per token (T), special tokens included.

    special[i]: the tokenizer added it ([CLS], <s>, <sep>) or the text typed one of its control tokens
    ("[MASK]" written out): never a target, never a word. word_of[i]: the index into split_words(text)
    of the word token i overlaps, None for special tokens.
    """

    ids: tuple[int, ...]
    pieces: tuple[str, ...]  # the raw vocabulary entries: "##co", "Ġball", "▁ball", "[CLS]"
    offsets: tuple[tuple[int, int], ...]  # character span of each token in the text; (0, 0) for specials
    special: tuple[bool, ...]
    word_of: tuple[int | None, ...]
    typed_special: tuple[str, ...]  # control tokens typed in the text, as the tokenizer read them
    n_full: int  # tokens of the whole text (specials included) before the cap
    cap: int  # the most tokens kept: max_tokens, or the tokenizer's own limit when lower

    @property
    def truncated(self) -> bool:
        return self.n_full > len(self.ids)

    def pieces_of(self, word: int) -> list[int]:
        """Token positions that belong to word ``word`` (in order)."""
        return [i for i, w in enumerate(self.word_of) if w == word]

    def unknown(self, tokenizer) -> list[int]:
        """Positions that are the unknown token."""
        unk = getattr(tokenizer, "unk_token_id", None)
        return [i for i, t in enumerate(self.ids) if unk is not None and t == unk]


def token_limit(tokenizer, cap: int = 512) -> int:
    """How many tokens (special ones included) the model reads: its model_max_length, at most ``cap``
    (hub tokenizers may claim 1e30)."""
    n = getattr(tokenizer, "model_max_length", None) or cap
    return int(min(n, cap))


def tokenize(
    tokenizer, text: str, max_tokens: int | None = None, text_pair: str | None = None, add_special_tokens: bool = True
) -> Tokenized:
    """Tokenize ``text`` (and ``text_pair``) in the family's own format, keeping at most ``max_tokens``
    tokens (and never more than the tokenizer's limit), and map every token to the word it overlaps."""
    pair = (text, text_pair) if text_pair else (text,)
    limit = token_limit(tokenizer, max_tokens or 10**6)
    n_full = len(tokenizer(*pair, add_special_tokens=add_special_tokens, verbose=False)["input_ids"])
    enc = tokenizer(
        *pair,
        add_special_tokens=add_special_tokens,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        truncation=True,
        max_length=limit,
        verbose=False,
    )
    ids = tuple(int(i) for i in enc["input_ids"])
    added = [bool(s) for s in enc.get("special_tokens_mask", [0] * len(ids))]
    control = set(tokenizer.all_special_ids) - {getattr(tokenizer, "unk_token_id", None)}
    typed = [not a and i in control for i, a in zip(ids, added)]  # "[MASK]" written in the text
    special = tuple(a or t for a, t in zip(added, typed))
    try:  # which text each token came from: offsets count in its own text
        seq = enc.sequence_ids()
    except (AttributeError, ValueError):
        seq = [0] * len(ids)
    offsets = tuple(
        (0, 0) if s else _trimmed(pair[q or 0], int(a), int(b))
        for (a, b), s, q in zip(enc["offset_mapping"], special, seq)
    )
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
    pieces = tuple(tokenizer.convert_ids_to_tokens(list(ids)))
    return Tokenized(
        ids, pieces, offsets, special, tuple(word_of), tuple(p for p, t in zip(pieces, typed) if t), n_full, limit
    )


def _trimmed(text: str, s: int, e: int) -> tuple[int, int]:
    """A piece's span without the space a byte-level BPE piece ("Ġlittle") carries in front: tokenizers
    built without ``trim_offsets`` (DeBERTa's, ModernBERT's) count it, RoBERTa's does not. A piece that is
    nothing but a space (a bare "Ġ" before a typed special token) keeps its span and so belongs to no word."""
    start = s
    while s < e and text[s].isspace():
        s += 1
    return (start, e) if s == e else (s, e)  # a piece that is only a space stays the space: no word's


def model_inputs(enc) -> dict:
    """The tensors a model's forward takes, from a tokenizer's output (drops offsets, masks of specials)."""
    return {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'A-Z])|(?<=[.!?][\"'])\s+")


def split_sentences(text: str) -> list[str]:
    """A story's sentences: split after . ! ? (and a closing quote) before a capital or a quote."""
    return [s.strip() for s in SENTENCE_END.split(text.strip()) if s.strip()]


def piece_text(tokenizer, token_id: int) -> str:
    """A vocabulary entry as a person reads it: "Ġball" -> "ball", "▁The" -> "The", "##co" stays."""
    raw = tokenizer.convert_ids_to_tokens(int(token_id))
    if int(token_id) in tokenizer.all_special_ids:
        return raw
    shown = tokenizer.convert_tokens_to_string([raw]).strip()
    return shown if shown and "\ufffd" not in shown else raw


def fit_text(text: str, tokenizers: dict[str, object], cap: int = 512) -> tuple[str, str | None]:
    """Cut ``text`` so that every tokenizer's encoding fits its model's limit: at a word boundary, or
    inside a word when a single word is already too long.

    Returns (text that fits, a note saying what was cut and why, or None when nothing was cut).
    """
    original = text
    worst = None
    while True:  # one cut almost always suffices; re-check in case a cut re-merges pieces
        too_long = []
        for name, tok in tokenizers.items():
            limit = token_limit(tok, cap)
            n = len(tok(text, verbose=False)["input_ids"])
            if n > limit:
                enc = tok(text, return_offsets_mapping=True, truncation=True, max_length=limit)
                end = max((e for s, e in enc["offset_mapping"]), default=0)
                too_long.append((end, name, n, limit))
        if not too_long:
            break
        end, name, n, limit = min(too_long)
        worst = worst or (name, n, limit)
        kept = [w for w in split_words(text) if w[2] <= end]  # words whose every piece was kept
        cut = text[: kept[-1][2]] if kept else text[: max(end - 1, 0)]
        if cut == text:  # a byte-level BPE kept some bytes of a character (好 is 3 pieces): drop the word whole
            cut = text[: kept[-2][2]] if len(kept) > 1 else text[: max(len(text) - 1, 0)]
        if not cut:
            text = cut
            break
        text = cut
    if worst is None:
        return text, None
    name, n, limit = worst
    return text, (
        f"Your text is {n} tokens long for {name}, which reads at most {limit}: every model gets the same "
        f"first {len(text)} of its {len(original)} characters ({kept_words(text, original)})."
    )


def kept_words(cut: str, original: str) -> str:
    """What a text cut to its start keeps, in words: "the first 3 of its 10 words", "the first of its 10 words",
    "the first 3 of its 10 words and the start of the 4th", "the start of its only word" (a cut inside a word)."""
    whole, kept = split_words(original), split_words(cut)
    n_whole = sum(1 for a, b in zip(kept, whole) if a == b)  # same word, same span: kept whole
    if n_whole == 0:
        return f"the start of its {'only' if len(whole) == 1 else 'first'} word"
    first = "the first" if n_whole == 1 else f"the first {n_whole}"
    tail = "" if len(kept) == n_whole else f" and the start of the {ordinal(n_whole + 1)}"
    return f"{first} of its {count(len(whole), 'word')}{tail}"


# ----------------------------------------------------------------------------- the word to mask


def words_to_mask(
    text: str, tokenizers: dict[str, object], example: str | None = None
) -> tuple[str, list[tuple[str, int, int]], list[Note]]:
    """(the text cut so that every tokenizer's encoding fits its model, its words, a note when it was cut).
    ``tokenizers``: the model's name as the note says it -> its tokenizer. Stops when there is no word
    (an empty box: :func:`require_text`, naming ``example``)."""
    require_text(text, example)
    fitted, cut = fit_text(text, tokenizers)
    words = split_words(fitted)
    if not words:
        raise Stop("There is no word in this text to mask: type a sentence with some letters in it.")
    return fitted, words, [Note(cut, "warning")] if cut else []


def choose_masked_word(
    words: list[tuple[str, int, int]], tks: list[Tokenized], asked: int, new_text: bool = False
) -> tuple[int, list[Note]]:
    """The word to mask: ``asked`` when the text has it and at least one tokenizer kept a piece of it; else
    the last word, or the nearest word with a piece, each with a note saying why. ``new_text``: the text
    changed since ``asked`` was chosen (typed, or another lesson's sentence), so ``asked`` means nothing in
    it: the nearest content word with a piece is masked instead (:func:`word_for_new_text`), without a note.
    Stops when no word has a piece (the text is nothing but special tokens typed in it)."""
    maskable = [j for j in range(len(words)) if any(tk.pieces_of(j) for tk in tks)]
    if new_text and words:
        asked = word_for_new_text(words, int(asked), maskable)
    index, why = choose_word(len(words), int(asked), words)
    notes = [Note(why)] if why else []
    typed = list(dict.fromkeys(t for tk in tks for t in tk.typed_special))
    typed_md = ", ".join(md(t) for t in typed)
    if not maskable:
        raise Stop(
            f"No word of this text is a word piece: it holds only special tokens typed in it ({typed_md}), "
            "which are never masked. Type a sentence."
        )
    if index not in maskable:
        near = min(maskable, key=lambda j: (abs(j - index), j))
        cause = (
            f"it is part of a special token typed in the text ({typed_md})"
            if typed
            else "no tokenizer kept a piece of it"
        )
        notes.append(
            Note(
                f"Word {index}, {md(words[index][0])}, has no word piece of its own: {cause}. "
                f"Masking word {near}, {md(words[near][0])}, instead."
            )
        )
        index = near
    return index, notes


# ----------------------------------------------------------------------------- what to tell the user


def require_text(text: str, example: str | None = None, what: str = "a sentence") -> str:
    """``text`` itself when it holds anything but whitespace; else raise :class:`~app.core.lesson.Stop` asking for
    ``what``, naming ``example`` (the lesson's own sentence, escaped) when given. The one empty-box guard."""
    if text.strip():
        return text
    hint = f", for example {md(example, None)}" if example else ""
    # an example that ends a sentence ends this one: no second full stop after it ("…mom.`.")
    end = "" if example and example.rstrip().endswith((".", "!", "?", "…")) else "."
    raise Stop(f"Type {what} to start: the box is empty or only whitespace{hint}{end}")


def input_notes(tk: Tokenized, tokenizer, text: str, who: str) -> list[str]:
    """Markdown notes about what a tokenizer did with a user's text, naming the real cause: control tokens
    typed in the text (by name), and pieces the vocabulary lacks (with the characters they stand for)."""
    notes = []
    if tk.typed_special:
        names = ", ".join(md(t) for t in dict.fromkeys(tk.typed_special))
        notes.append(
            f"Your text types {names}, which {who}'s tokenizer reads as its own special token"
            f"{'s' if len(set(tk.typed_special)) > 1 else ''}, not as words: "
            "it stays special and is never a target or a word."
        )
    frag = [
        i
        for i, (p, s) in enumerate(zip(tk.pieces, tk.special))
        if not s and "\ufffd" in tokenizer.convert_tokens_to_string([p])
    ]
    if frag:  # a byte-level BPE has no unknown token: it spells a character it lacks byte by byte
        chars = "".join(dict.fromkeys(text[a:b] for a, b in (tk.offsets[i] for i in frag) if b > a))
        notes.append(
            f"{len(frag)} piece(s) are single bytes of {md(chars, 40)}: {who}'s vocabulary has no piece for "
            "those characters, so it spells them byte by byte and the model sees fragments, not characters "
            "it knows."
        )
    unknown = tk.unknown(tokenizer)
    if unknown:
        chars = "".join(dict.fromkeys(text[s:e] for s, e in (tk.offsets[i] for i in unknown) if e > s))
        shown = f" for {md(chars, 40)}" if chars.strip() else ""
        notes.append(
            f"{len(unknown)} piece(s) became {md(tokenizer.unk_token)}{shown}: {who}'s vocabulary has no piece "
            "for those characters, so the model sees one shared unknown vector there."
        )
    return notes


def human_count(n: float) -> str:
    """12,345,678 -> '12.3M'."""
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            return f"{n / div:.1f}{unit}" if n / div < 100 else f"{n / div:.0f}{unit}"
    return f"{n:.0f}"
