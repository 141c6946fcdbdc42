"""What a question to the class is, and what the reveal says about the answers. Pure: no streamlit, no torch.

A :class:`Question` is made from a lesson's Result by that lesson's ``question(result)`` (its prompt and choices come
from what the model computed, never a script). Three kinds:

- ``"choice"``: tap one of ``choices``;
- ``"multi"``: tap any of ``choices`` (tokens), sent as one answer (the chosen labels, sorted, joined by ``|``);
- ``"word"``: type a free word; :func:`normalise` lower-cases and trims it, and only words in the model's
  vocabulary enter the histogram (the presenter's side filters the tally at reveal, where the tokenizer is).

``answer`` (the model's, or the right one) and ``model`` (the model's probability per choice, where it has one) are
held back: :meth:`Question.public` is what a phone sees, without them.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import asdict, dataclass

KINDS = ("choice", "multi", "word")
MAX_ANSWER_CHARS = 40  # a word, or a few token labels joined; longer answers are refused
MAX_CHOICES = 24
SEPARATOR = "|"
MAX_ROWS = 6  # rows a multi question's reveal draws: the right answers, then the most tapped


@dataclass(frozen=True)
class Question:
    lesson: str  # the lesson's slug
    prompt: str  # plain text: phones and the projector escape it
    kind: str  # "choice" | "multi" | "word"
    choices: tuple[str, ...] = ()  # labels (choice, multi); () for a word
    answer: tuple[str, ...] = ()  # the model's answer, or the right one(s): held back until the reveal
    model: tuple[tuple[str, float], ...] = ()  # the model's probability per answer where it has one
    explain: str = ""  # one sentence the reveal adds (what the model did), computed by the lesson

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        if self.kind != "word" and not 2 <= len(self.choices) <= MAX_CHOICES:
            raise ValueError(f"a {self.kind} question takes 2 to {MAX_CHOICES} choices")

    @property
    def id(self) -> str:
        """A stable name for this exact question (lesson, prompt, choices): a phone's answer names it."""
        body = json.dumps([self.lesson, self.prompt, self.kind, list(self.choices)], ensure_ascii=False)
        return hashlib.sha256(body.encode()).hexdigest()[:12]

    def public(self) -> dict:
        """What a student's phone may see before the reveal: no answer, no model probabilities."""
        return {
            "id": self.id,
            "lesson": self.lesson,
            "prompt": self.prompt,
            "kind": self.kind,
            "choices": list(self.choices),
        }

    def to_dict(self) -> dict:
        return {**asdict(self), "id": self.id}

    @classmethod
    def from_dict(cls, data: dict) -> "Question":
        return cls(
            data["lesson"],
            data["prompt"],
            data["kind"],
            tuple(data.get("choices", ())),
            tuple(data.get("answer", ())),
            tuple((str(a), float(p)) for a, p in data.get("model", ())),
            data.get("explain", ""),
        )


def normalise(question: Question | dict, value: object) -> str | None:
    """A phone's answer as it is counted, or None when it is not an answer to this question: a choice must be one
    of the choices (multi: several, any order, no repeats); a word is NFKC-normalised, lower-cased, trimmed, one
    word of letters, digits, ' or -, at most ``MAX_ANSWER_CHARS``."""
    q = question.public() if isinstance(question, Question) else question
    if not isinstance(value, str) or len(value) > MAX_ANSWER_CHARS * 8:
        return None
    if q["kind"] == "choice":
        return value if value in q["choices"] else None
    if q["kind"] == "multi":
        picked = [v for v in value.split(SEPARATOR) if v]
        if not picked or len(set(picked)) != len(picked) or any(v not in q["choices"] for v in picked):
            return None
        order = {c: i for i, c in enumerate(q["choices"])}
        return SEPARATOR.join(sorted(picked, key=order.__getitem__))
    word = unicodedata.normalize("NFKC", value).strip().lower()
    if not word or len(word) > MAX_ANSWER_CHARS or not all(ch.isalnum() or ch in "'-" for ch in word):
        return None
    return word


def reads(piece: str) -> str:
    """A vocabulary piece as a person reads it: WordPiece's ``##`` and the BPE/SentencePiece space marks dropped."""
    return piece[2:] if piece.startswith("##") else piece.lstrip("Ġ▁")


def join_pieces(pieces) -> str:
    """Pieces as a line of text: a WordPiece continuation (``##``) joins its word, a BPE/SentencePiece space mark
    starts one, and every other piece is a word of its own."""
    out = ""
    for p in pieces:
        if p.startswith("##"):
            out += p[2:]
        elif p.startswith(("Ġ", "▁")):
            out += " " + p[1:]
        else:
            out += ("" if not out or p in ".,!?;:'" else " ") + p
    return out.strip()


def unique_labels(words) -> tuple[str, ...]:
    """Labels a phone can tap, one per word: a repeated word gets its place, "the", "the (2)"."""
    seen: dict[str, int] = {}
    out = []
    for w in words:
        seen[w] = seen.get(w, 0) + 1
        out.append(w if seen[w] == 1 else f"{w} ({seen[w]})")
    return tuple(out)


def window(n: int, around: int, size: int = MAX_CHOICES - 1) -> range:
    """At most ``size`` consecutive indices of ``range(n)`` that hold ``around`` (a phone shows that many tokens)."""
    start = min(max(around - size // 2, 0), max(n - size, 0))
    return range(start, min(start + size, n))


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def reveal(question: Question, tally: dict[str, int], in_vocabulary=None) -> dict:
    """What the projector and the phones show on *Reveal*, computed from the hall's ``tally`` ({answer: count}):
    ``rows`` [{label, count, share (of those who answered), model (its probability, or None), answer (True: it is
    the model's answer, or the right one)}] — what the phones' page draws too —
    ``answered`` (answers counted), ``left_out`` (free words not in the model's vocabulary, by ``in_vocabulary``:
    they do not enter the histogram), and one ``sentence`` that says it."""
    tally = {a: int(n) for a, n in tally.items() if int(n) > 0}
    left_out = 0
    if question.kind == "word" and in_vocabulary is not None:
        kept = {a: n for a, n in tally.items() if in_vocabulary(a)}
        left_out = sum(tally.values()) - sum(kept.values())
        tally = kept
    answered = sum(tally.values())
    model = dict(question.model)
    right = set(question.answer)
    if question.kind == "multi":  # each choice: the share of answers that tapped it; on a projector the rows
        every = {c: sum(n for a, n in tally.items() if c in a.split(SEPARATOR)) for c in question.choices}
        shown = [c for c in question.choices if every[c] or c in right or (model.get(c) or 0) >= 0.5]
        shown = sorted(shown, key=lambda c: (c not in right, -every[c]))[:MAX_ROWS]  # that tell: at most MAX_ROWS
        counts = {c: every[c] for c in question.choices if c in shown}
    elif question.kind == "choice":
        counts = {c: tally.get(c, 0) for c in question.choices}
    else:
        counts = dict(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))[:12])
        for a in (*question.answer, *model):
            counts.setdefault(a, 0)
    rows = [
        {
            "label": a,
            "count": n,
            "share": n / answered if answered else 0.0,
            "model": model.get(a),
            "answer": a in right,
        }
        for a, n in counts.items()
    ]
    return {
        "rows": rows,
        "answered": answered,
        "left_out": left_out,
        "sentence": _sentence(question, rows, answered, left_out),
    }


def _sentence(question: Question, rows: list[dict], answered: int, left_out: int) -> str:
    said = []
    if not answered:
        said.append("Nobody answered" + (f" with a word the model knows ({left_out} did not)" if left_out else ""))
    else:
        top = max(rows, key=lambda r: (r["count"], r["answer"]))
        verb = "tapped" if question.kind == "multi" else "chose" if question.kind == "choice" else "wrote"
        said.append(f"{_pct(top['share'])} of you {verb} {top['label']}")
    with_p = sorted((r for r in rows if r["model"] is not None), key=lambda r: -r["model"])
    if with_p and question.kind != "multi":
        said.append("the model put " + ", ".join(f"{_pct(r['model'])} on {r['label']}" for r in with_p[:2]))
    elif question.answer:
        said.append("the answer: " + ", ".join(question.answer))
    text = "; ".join(said) + "."
    if left_out and answered:
        text += f" {left_out} answer{'s' if left_out != 1 else ''} not in the model's vocabulary left out."
    return text + (f" {question.explain}" if question.explain else "")
