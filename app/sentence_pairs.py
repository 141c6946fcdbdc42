"""Sentence pairs for the sentence objectives (NSP, SOP): the held-out stories, the three kinds of pair made from
two consecutive segments of one story, and the content words that tell a topic. Shared by the NSP vs SOP lesson
(app/lessons/sentence_order.py, which scores the pairs with the models' heads), its figures, and the NSP stand-in's
recipe (app/training/bert_nsp.py). Pure Python.

A pair is ``(A, B)``: *in order* (B follows A, label 0); *other story* (B from another story: NSP's negative, a
topic shift, label 1); *swapped* (B, A: SOP's negative, same topic, label 1).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first, as every library module a page runs: it is light itself)

import random
import re
from dataclasses import dataclass
from pathlib import Path

from app.core import text as txt

STORIES = Path(__file__).resolve().parents[1] / "assets" / "sentence_order" / "stories.txt"
SEGMENT_SENTENCES = (2, 3)  # sentences per generated segment (A, B): uniform in this range (the lesson's default)
KINDS = ("in order", "other story", "swapped")  # a generated pair: B follows A / B from another story / B, A
KIND_LABELS = {
    "in order": "in order (A, B)",
    "other story": "B from another story (NSP's negative)",
    "swapped": "swapped (B, A): SOP's negative",
}
TASKS = {"nsp": ("in order", "other story"), "sop": ("in order", "swapped")}  # what each task tells apart
FUNCTION_WORDS = frozenset(
    "the a an and or but so then to of in on at by for with from into up out was were is are be been had has have "
    "did do does said says saw very too not no yes it its it's he she him her his hers they them their we us our "
    "you your i me my this that there these those what when where who why how all one day just also as if".split()
)


def load_stories(path: Path = STORIES) -> tuple[tuple[str, ...], ...]:
    """Each paragraph of the bundled sample as its sentences (paragraphs of at least two sentences)."""
    paragraphs = re.split(r"\n\s*\n", Path(path).read_text(encoding="utf-8"))
    stories = (tuple(txt.split_sentences(" ".join(p.split()))) for p in paragraphs)
    return tuple(s for s in stories if len(s) >= 2)


@dataclass(frozen=True)
class Pair:
    """One generated pair. label: 1 when B does not follow A (another story, or swapped), else 0."""

    kind: str  # one of KINDS
    a: str
    b: str
    label: int
    base: int  # which base pair it was made from (its in-order, other-story and swapped versions share it)


def generate_pairs(stories, n: int, seed: int, sentences: tuple[int, int] = SEGMENT_SENTENCES) -> tuple[Pair, ...]:
    """``n`` base pairs — two consecutive *segments* of one story, each of k sentences, k uniform in
    ``sentences`` (at most half the story; the papers' pairs are segments of text, not single sentences,
    and the bundled heads trained on such) — each in three versions: in order; B replaced by a segment of
    k sentences of a different story, from its second sentence on (NSP's negative: a true B is never a story's
    opening line, so an opening would give the answer away without the topic); A and B swapped (SOP's
    negative). Seeded: the same seed, the same pairs."""
    rng = random.Random(int(seed))
    lo, hi = sentences
    out = []
    for i in range(n):
        s = rng.randrange(len(stories))
        k = max(1, min(rng.randint(lo, hi), len(stories[s]) // 2))  # sentences per segment
        j = rng.randrange(len(stories[s]) - 2 * k + 1)
        a, b = " ".join(stories[s][j : j + k]), " ".join(stories[s][j + k : j + 2 * k])
        o = rng.choice([x for x in range(len(stories)) if x != s])
        ko = min(k, len(stories[o]))
        first = min(1, len(stories[o]) - ko)  # the second sentence on, where the story is long enough
        jo = first + rng.randrange(len(stories[o]) - ko - first + 1)
        c = " ".join(stories[o][jo : jo + ko])
        out += [Pair("in order", a, b, 0, i), Pair("other story", a, c, 1, i), Pair("swapped", b, a, 1, i)]
    return tuple(out)


def content_words(sentence: str) -> set[str]:
    """The sentence's content words, lowercased: letters only, function words left out."""
    return {w.lower() for w, _, _ in txt.split_words(sentence) if w.isalpha() and w.lower() not in FUNCTION_WORDS}


def shared_words(a: str, b: str) -> int:
    """How many content words two sentences share: a crude measure of "same topic"."""
    return len(content_words(a) & content_words(b))
