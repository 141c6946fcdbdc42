"""DeBERTa at toy scale: disentangled attention with relative positions only, dynamic masked LM.

He et al. (2020): every token carries two vectors, its content and its *relative* position to each
other token; the attention score of i -> j is the sum of content->content, content->position and
position->content terms, scaled by 1/sqrt(3d). No absolute position enters the encoder
(``position_biased_input=False``); the paper's *enhanced mask decoder* adds absolute positions just
before the MLM head — transformers implements no such decoder (DebertaForMaskedLM puts its head on the
last layer), so this stand-in is trained exactly as transformers runs it. Conventions follow
microsoft/deberta-base (v1): GPT-2 style byte-level BPE with ``[CLS] [SEP] [MASK]``, no token types,
relative distances up to the model's length (``max_relative_positions=-1``), and the MLM head named
``lm_predictions.lm_head`` (``legacy=False``, the layout of the original checkpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import DebertaConfig, DebertaForMaskedLM

from app.training import common, data

LOOP = common.LoopConfig(steps=3000, precision="fp32")  # bf16 autocast overflows DeBERTa's masked_fill (float32 min)


@dataclass(frozen=True)
class Shape:
    vocab_size: int = 4096
    hidden_size: int = 192
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    intermediate_size: int = 768


def deberta_config(tok, shape: Shape = Shape()) -> DebertaConfig:
    return DebertaConfig(
        vocab_size=len(tok),
        hidden_size=shape.hidden_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        intermediate_size=shape.intermediate_size,
        max_position_embeddings=data.MAX_LENGTH,
        relative_attention=True,
        max_relative_positions=-1,
        pos_att_type=["c2p", "p2c"],
        position_biased_input=False,
        type_vocab_size=0,
        layer_norm_eps=1e-7,
        legacy=False,
        pad_token_id=tok.pad_token_id,
    )


def masked_lm_logits(model: DebertaForMaskedLM, ids, att, targets):
    h = model.deberta(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, H)
    return model.lm_predictions(h[targets], model.deberta.embeddings.word_embeddings)  # (n_targets, V)


def run(corpus, out: Path, work: Path, cfg: common.LoopConfig) -> None:
    work = work / "deberta"
    shape = Shape()
    train_file, valid_file = data.corpus_files(corpus)
    tok = common.cached_tokenizer(work, lambda: data.build_deberta(train_file, shape.vocab_size))

    def seqs(f, limit=None):
        stories = data.encode_sentences(tok, data.read_stories(f, limit))
        return data.single_segment(tok, data.pack(stories, cfg.seq_len - 2, False), cfg.seq_len)

    train = common.cached(work / "train.pt", lambda: seqs(train_file))
    valid = common.cached(work / "valid.pt", lambda: seqs(valid_file, 400_000))
    torch.manual_seed(cfg.seed)
    model = DebertaForMaskedLM(deberta_config(tok, shape))
    curves, final = common.train_dynamic_mlm("deberta", model, masked_lm_logits, tok, train, valid, cfg, work)
    baseline = common.unigram_baseline(train, valid, len(tok))
    card = common.model_card(
        name="deberta-tiny-tinystories",
        family="deberta",
        stands_in_for="microsoft/deberta-base",
        recipe="masked LM with dynamic masking (15%, 80/10/10); disentangled attention (c2p + p2c, relative "
        f"distances up to {data.MAX_LENGTH}), no absolute positions in the encoder, no enhanced mask decoder "
        f"(transformers has none); GPT-2 style byte-level BPE vocabulary of {len(tok)}, cased, `[CLS] [SEP] [MASK]`; "
        f"{shape.num_hidden_layers} layers, hidden {shape.hidden_size}, {shape.num_attention_heads} heads",
        model=model,
        cfg=cfg,
        curves=curves,
        metrics={
            "masked top-1 (15% masking)": final["top1"],
            "masked top-5 (15% masking)": final["top5"],
            "held-out targets": final["n_targets"],
            "cloze top-5 (content words)": final["cloze_top5"],
        },
        baseline=baseline,
        corpus=train_file.name,
        notes="\nThe masked-LM head is `lm_predictions.lm_head` (`legacy=False` in config.json), as in "
        "microsoft/deberta-base, whose hub config does not say so: load that checkpoint with "
        "`DebertaForMaskedLM.from_pretrained('microsoft/deberta-base', legacy=False)` or its head is left random.\n",
    )
    curves["final"] = {**final, "baseline": baseline}
    common.save_checkpoint(model, tok, out / "deberta", curves, card)
