"""Cloze quality: does a model fill a blanked *content word* (noun, verb, adjective) with a word that fits?

Held-out top-k on random 15% masks mostly scores ``the . and``; a lesson needs a model that proposes
"ball" for "The little girl found a red ___ in the park." Each cloze item is one sentence with one
blank (``___``) and the list of words that make it a sensible sentence. A model *hits* an item when
one of its top-k guesses for the blank, read as a word (``Ġball`` -> ``ball``, ``▁Ball`` -> ``ball``),
is one of those words.

How each family is asked, in its own terms (the same way a student would ask it):
- masked LMs: the blank becomes the tokenizer's own mask string (``[MASK]``, ``<mask>``), typed in the
  plain text, and the logits at that single mask position are read (what ``pipeline("fill-mask")`` does);
- XLNet (no mask token in pre-training): the blank is the only target of the factorization order,
  every other token visible to it (``perm_mask[:, :, t] = 1``, ``target_mapping`` one-hot at t).

The project's own set is ``tests/data/cloze.jsonl`` (written for this project in the TinyStories
register, never taken from the corpus). Pure: no streamlit.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # before torch: a page that imports this module first (or a script) gets the imports in one thread

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch

from app.models import device as devices
from app.models.catalogue import REPO_ROOT
from app.permutation import last_targets_masks

BLANK = "___"
DEFAULT_SET = REPO_ROOT / "tests" / "data" / "cloze.jsonl"


@dataclass(frozen=True)
class Item:
    text: str  # one sentence with exactly one BLANK
    answers: tuple[str, ...]  # lower-case words that fit the blank
    pos: str  # noun | verb | adj

    @property
    def filled(self) -> str:
        """The sentence with its first answer in the blank: a whole story sentence."""
        return self.text.replace(BLANK, self.answers[0])


def load_items(path: str | Path = DEFAULT_SET) -> list[Item]:
    items = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row["text"].count(BLANK) != 1:
                raise ValueError(f"a cloze item needs exactly one {BLANK}: {row['text']!r}")
            items.append(Item(row["text"], tuple(a.lower() for a in row["answers"]), row.get("pos", "")))
    return items


def as_word(tokenizer, token_id: int) -> str:
    """A vocabulary entry read as a lower-case word: "Ġball", "▁Ball", "ball" -> "ball"; "##s" stays "##s"."""
    raw = tokenizer.convert_ids_to_tokens(int(token_id))
    if raw is None or raw.startswith("##"):
        return raw or ""
    return tokenizer.convert_tokens_to_string([raw]).strip().lower()


def blank_logits(model, tokenizer, text: str, permutation: bool) -> torch.Tensor:
    """(V,) logits for the blank of ``text`` (which holds one BLANK)."""
    masked = text.replace(BLANK, tokenizer.mask_token)
    enc = tokenizer(masked, return_tensors="pt")
    ids = enc["input_ids"]  # (1, T)
    where = (ids[0] == tokenizer.mask_token_id).nonzero().flatten()
    if len(where) != 1:
        raise ValueError(
            f"expected one mask piece in {masked!r}, got {len(where)}: {tokenizer.convert_ids_to_tokens(ids[0])}"
        )
    t = int(where[0])
    inputs = {k: v.to(model.device) for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    with devices.forward(model):
        if permutation:
            dtype = next(model.parameters()).dtype
            perm_mask, target_mapping = last_targets_masks(ids.shape[1], [t])  # (1, T, T), (1, 1, T): the one target
            return (
                model(
                    **inputs,
                    perm_mask=perm_mask.to(model.device, dtype),
                    target_mapping=target_mapping.to(model.device, dtype),
                )
                .logits[0, 0]
                .float()
                .cpu()
            )
        out = model(**inputs)
        logits = (
            out.logits if hasattr(out, "logits") else out.prediction_logits
        )  # *ForPreTraining: MLM + a sentence head
        return logits[0, t].float().cpu()


@dataclass
class Result:
    k: int
    hits: int
    total: int
    by_pos: dict[str, tuple[int, int]] = field(default_factory=dict)  # pos -> (hits, total)
    misses: list[tuple[str, list[str]]] = field(default_factory=list)  # (text, top-k words) of every miss

    @property
    def rate(self) -> float:
        return self.hits / max(self.total, 1)

    def as_dict(self) -> dict:
        return {
            "k": self.k,
            "hits": self.hits,
            "total": self.total,
            "rate": self.rate,
            "by_pos": {p: h / max(n, 1) for p, (h, n) in self.by_pos.items()},
        }


def evaluate(model, tokenizer, items: list[Item], k: int = 5, permutation: bool = False) -> Result:
    """Top-k hit rate of ``model`` on ``items``: an item is a hit when a top-k guess is an answer."""
    res = Result(k, 0, 0)
    for item in items:
        top = blank_logits(model, tokenizer, item.text, permutation).topk(k).indices.tolist()
        words = [as_word(tokenizer, i) for i in top]
        hit = any(w in item.answers for w in words)
        res.hits += hit
        res.total += 1
        h, n = res.by_pos.get(item.pos, (0, 0))
        res.by_pos[item.pos] = (h + hit, n + 1)
        if not hit:
            res.misses.append((item.text, words))
    return res
