"""RoBERTa at toy scale: byte-level BPE, *dynamic* masking, FULL-SENTENCES packing, no NSP.

Liu et al. (2019): a fresh mask is drawn every time a sequence is fed (here: every batch), inputs
are packed with whole sentences that may cross document boundaries (separated by ``</s>``), and the
next-sentence objective is removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import RobertaConfig, RobertaForMaskedLM

from app.training import common, data

LOOP = common.LoopConfig(steps=6000)


@dataclass(frozen=True)
class Shape:
    vocab_size: int = 4096
    hidden_size: int = 192
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    intermediate_size: int = 768


def masked_lm_logits(model: RobertaForMaskedLM, ids, att, targets):
    h = model.roberta(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, H)
    return model.lm_head(h[targets])  # (n_targets, V)


def run(corpus, out: Path, work: Path, cfg: common.LoopConfig) -> None:
    work = work / "roberta"
    shape = Shape()
    train_file, valid_file = data.corpus_files(corpus)
    tok = common.cached_tokenizer(work, lambda: data.build_bpe(train_file, shape.vocab_size))

    def seqs(f, cross, limit=None):
        stories = data.encode_sentences(tok, data.read_stories(f, limit))
        return data.single_segment(tok, data.pack(stories, cfg.seq_len - 2, cross, tok.sep_token_id), cfg.seq_len)

    train = common.cached(work / "train.pt", lambda: seqs(train_file, True))
    valid = common.cached(work / "valid.pt", lambda: seqs(valid_file, False, 400_000))
    torch.manual_seed(cfg.seed)
    model = RobertaForMaskedLM(
        RobertaConfig(
            vocab_size=len(tok),
            hidden_size=shape.hidden_size,
            num_hidden_layers=shape.num_hidden_layers,
            num_attention_heads=shape.num_attention_heads,
            intermediate_size=shape.intermediate_size,
            max_position_embeddings=data.MAX_LENGTH + 2,
            type_vocab_size=1,
            pad_token_id=tok.pad_token_id,
            bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id,
        )
    )
    curves, final = common.train_dynamic_mlm("roberta", model, masked_lm_logits, tok, train, valid, cfg, work)
    baseline = common.unigram_baseline(train, valid, len(tok))
    card = common.model_card(
        name="roberta-tiny-tinystories",
        family="roberta",
        stands_in_for="FacebookAI/roberta-base",
        recipe="masked LM with dynamic masking (a fresh 15% mask with the 80/10/10 rule every batch), "
        "FULL-SENTENCES packing across documents, no NSP; byte-level BPE vocabulary of "
        f"{len(tok)} (`<s> </s> <mask>`, the mask absorbing the space before it as in roberta-base); "
        f"{shape.num_hidden_layers} layers, hidden {shape.hidden_size}",
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
    )
    curves["final"] = {**final, "baseline": baseline}
    common.save_checkpoint(model, tok, out / "roberta", curves, card)
