"""The base recipe the masked-LM stand-ins extend: BERT, RoBERTa, DeBERTa and ModernBERT are one sequence
(tokenizer → packed sequences → a seeded model → masked-LM training → held-out and cloze numbers → model card →
checkpoint) that differ in a few places, the way transformers' ``modular_*.py`` files write a variant as the
classes of another that it changes (``RobertaEmbeddings(BertEmbeddings)``). A variant's file subclasses
``MaskedLMRecipe`` and states only what differs: its tokenizer, its model, where its logits come from, whether
training sequences cross documents, how each step masks, and its card's recipe line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from app.training import common, data


@dataclass(frozen=True)
class Shape:
    """The stand-ins' common size (a variant's ``Shape`` extends it or changes a default)."""

    vocab_size: int = 4096
    hidden_size: int = 192
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    intermediate_size: int = 768


VALID_CHARS = 400_000  # the held-out text read for the final numbers


def packed_sequences(tok, corpus, work: Path, seq_len: int, cross_documents: bool = False, specials_at_end=False):
    """(train, valid) single-segment sequences ``[CLS] x [SEP]`` of whole sentences packed into ``seq_len``
    tokens, across documents in training where ``cross_documents`` says so; cached in ``work``."""
    train_file, valid_file = data.corpus_files(corpus)

    def seqs(f, cross, limit=None):
        stories = data.encode_sentences(tok, data.read_stories(f, limit))
        chunks = data.pack(stories, seq_len - 2, cross, tok.sep_token_id)
        return data.single_segment(tok, chunks, seq_len, specials_at_end=specials_at_end)

    train = common.cached(work / "train.pt", lambda: seqs(train_file, cross_documents))
    valid = common.cached(work / "valid.pt", lambda: seqs(valid_file, False, VALID_CHARS))
    return train, valid


def masked_lm_metrics(final: dict) -> dict:
    """The model card's quality rows of a masked LM."""
    return {
        "masked top-1 (15% masking)": final["top1"],
        "masked top-5 (15% masking)": final["top5"],
        "held-out targets": final["n_targets"],
        "cloze top-5 (content words)": final["cloze_top5"],
    }


class MaskedLMRecipe:
    """A masked-LM stand-in trained from scratch. A variant sets the class attributes and overrides
    ``build_tokenizer``, ``build_model``, ``logits_at`` and ``describe``; and where it differs ``prepare``,
    ``step_loss`` (dynamic masking here), ``evaluation`` and ``metrics`` (masked top-k and the cloze set here)."""

    name: str  # the work folder, the loop's name, the card's family and the folder it writes under ``out``
    stands_in_for: str  # the hub checkpoint it stands in for
    shape: Shape = Shape()
    cross_documents: bool = False  # training sequences packed across documents (RoBERTa's FULL-SENTENCES)
    specials_at_end: bool = False  # ``x <sep> <cls>``, padded on the left (XLNet)
    notes: str = ""  # the card's closing notes

    def build_tokenizer(self, train_file: Path):
        raise NotImplementedError

    def build_model(self, tok) -> nn.Module:
        raise NotImplementedError

    @staticmethod
    def logits_at(model: nn.Module, ids, att, targets) -> torch.Tensor:
        """(n_targets, V) logits at the target positions only (the vocabulary projection is the costliest layer)."""
        raise NotImplementedError

    def describe(self, tok) -> str:
        """The card's recipe line."""
        raise NotImplementedError

    def prepare(self, corpus, work: Path, cfg: common.LoopConfig):
        """(tokenizer, train sequences, valid sequences), cached in ``work`` so that a resumed run keeps them."""
        train_file, _ = data.corpus_files(corpus)
        tok = common.cached_tokenizer(work, lambda: self.build_tokenizer(train_file))
        return (tok, *packed_sequences(tok, corpus, work, cfg.seq_len, self.cross_documents, self.specials_at_end))

    def evaluation(self, tok):
        """``evaluation(model, seqs, device)``: masked top-1/top-5 and the cloze set (``common.train_masked_lm``)."""
        return common.masked_lm_evaluation(self.logits_at, tok)

    def metrics(self, final: dict) -> dict:
        """The card's quality rows."""
        return masked_lm_metrics(final)

    def step_loss(self, model: nn.Module, tok, train, cfg: common.LoopConfig, work: Path):
        """``step_loss(step, gen)`` for ``common.train_loop``."""
        return common.dynamic_mlm_step(model, self.logits_at, tok, train, cfg)

    def run(self, corpus, out: Path, work: Path, cfg: common.LoopConfig) -> None:
        work = work / self.name
        tok, train, valid = self.prepare(corpus, work, cfg)
        step_loss_of = lambda model: self.step_loss(model, tok, train, cfg, work)  # noqa: E731
        torch.manual_seed(cfg.seed)
        model = self.build_model(tok)
        curves, final = common.train_masked_lm(self.name, model, self.evaluation(tok), step_loss_of, valid, cfg, work)
        baseline = common.unigram_baseline(train, valid, len(tok))
        card = common.model_card(
            name=f"{self.name}-tiny-tinystories",
            family=self.name,
            stands_in_for=self.stands_in_for,
            recipe=self.describe(tok),
            model=model,
            cfg=cfg,
            curves=curves,
            metrics=self.metrics(final),
            baseline=baseline,
            corpus=data.corpus_files(corpus)[0].name,
            notes=self.notes,
        )
        curves["final"] = {**final, "baseline": baseline}
        common.save_checkpoint(model, tok, out / self.name, curves, card)
