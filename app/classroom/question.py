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
        return {"id": self.id, "lesson": self.lesson, "prompt": self.prompt, "kind": self.kind,
                "choices": list(self.choices)}

    def to_dict(self) -> dict:
        return {**asdict(self), "id": self.id}

    @classmethod
    def from_dict(cls, data: dict) -> "Question":
        return cls(data["lesson"], data["prompt"], data["kind"], tuple(data.get("choices", ())),
                   tuple(data.get("answer", ())), tuple((str(a), float(p)) for a, p in data.get("model", ())),
                   data.get("explain", ""))


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
