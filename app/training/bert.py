"""BERT at toy scale: WordPiece (uncased), masked-LM with *static* masking duplicated ×10.

Devlin et al. (2019) masked each training sequence once, at preprocessing, and duplicated the data
10 times with different masks, so over 40 epochs each sequence was seen with each mask 4 times.
Here the 10 masked copies are made once, before training, and training walks through them.
NSP is dropped (RoBERTa showed it does not help); the checkpoint is a ``BertForMaskedLM``.
This model is also DistilBERT's teacher.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import BertConfig, BertForMaskedLM

from app.masking import MaskingConfig, mlm_batch
from app.training import common, data, recipe

LOOP = common.LoopConfig(steps=6000)


@dataclass(frozen=True)
class Shape(recipe.Shape):
    duplication: int = 10


def bert_config(vocab_size: int, shape: Shape = Shape()) -> BertConfig:
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=shape.hidden_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        intermediate_size=shape.intermediate_size,
        max_position_embeddings=data.MAX_LENGTH,
        pad_token_id=0,
    )


def prepare(corpus, work: Path, seq_len: int, vocabulary_of: Path | None = None):
    """Tokenizer and (train, valid) sequences, shared with DistilBERT and ELECTRA (same conventions).

    ``vocabulary_of``: a checkpoint folder (the BERT stand-in) whose tokenizer a recipe must keep because it starts
    from that checkpoint's weights. Training a WordPiece vocabulary is not reproducible across machines and library
    versions (two builds on the same corpus differed in 8 pieces and 185 ids), so rebuilding it would misalign the
    embedding rows a warm start copies."""
    train_file, _ = data.corpus_files(corpus)
    if vocabulary_of is not None:
        from transformers import AutoTokenizer

        theirs = AutoTokenizer.from_pretrained(vocabulary_of)  # loaded once: what a new work folder keeps, and
        tok = common.cached_tokenizer(work, lambda: theirs)  # what a cached one must equal
        if tok.get_vocab() != theirs.get_vocab():
            raise SystemExit(
                f"{work} holds sequences encoded with another vocabulary than {vocabulary_of}'s: "
                "delete that work folder and run again"
            )
    else:
        tok = common.cached_tokenizer(work, lambda: data.build_wordpiece(train_file, Shape.vocab_size))
    return (tok, *recipe.packed_sequences(tok, corpus, work, seq_len))


def static_masks(train, tok, copies: int, cfg: MaskingConfig, seed: int):
    """BERT's preprocessing: ``copies`` masked versions of every sequence, fixed before training."""
    gen = torch.Generator().manual_seed(seed)
    rand_ids = data.random_ids(tok)
    inputs, labels = [], []
    for _ in range(copies):
        x, y = mlm_batch(train.input_ids, train.maskable, tok.mask_token_id, rand_ids, cfg, gen)
        inputs.append(x)
        labels.append(y)
    att = train.attention_mask.repeat(copies, 1)
    return torch.cat(inputs), torch.cat(labels), att  # (copies * N, T) each


def masked_lm_logits(model: BertForMaskedLM, ids, att, targets):
    """Logits at the target positions only: the vocabulary projection is the costliest layer."""
    h = model.bert(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, H)
    return model.cls(h[targets])  # (n_targets, V)


class BertRecipe(recipe.MaskedLMRecipe):
    """The base recipe with BERT's static masking: ``shape.duplication`` masked copies made before training."""

    name = "bert"
    stands_in_for = "google/bert_uncased_L-4_H-256_A-4"
    shape = Shape()
    logits_at = staticmethod(masked_lm_logits)

    def prepare(self, corpus, work, cfg):
        return prepare(corpus, work, cfg.seq_len)

    def build_model(self, tok):
        return BertForMaskedLM(bert_config(len(tok), self.shape))

    def step_loss(self, model, tok, train, cfg, work):
        inputs, labels, att = common.cached(
            work / "static.pt", lambda: static_masks(train, tok, self.shape.duplication, MaskingConfig(), cfg.seed)
        )

        def step_loss(step, gen):
            idx = common.shuffled_batch(len(inputs), cfg.batch_size, step, cfg.seed)
            y = labels[idx].to(cfg.device)
            targets = y != -100
            logits = masked_lm_logits(model, inputs[idx].to(cfg.device), att[idx].to(cfg.device), targets)
            return torch.nn.functional.cross_entropy(logits, y[targets]), {}

        return step_loss

    def describe(self, tok):
        shape = self.shape
        return (
            f"masked LM, static masking fixed at preprocessing and duplicated ×{shape.duplication} "
            "(BERT), 15% targets with the 80/10/10 rule, no NSP; WordPiece uncased vocabulary of "
            f"{len(tok)}; {shape.num_hidden_layers} layers, hidden {shape.hidden_size}, "
            f"{shape.num_attention_heads} heads"
        )


run = BertRecipe().run
