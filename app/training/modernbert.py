"""ModernBERT at toy scale: rotary positions, GeGLU, pre-norm without biases, alternating local and global
attention, sequences packed across documents; dynamic masked LM.

Warner et al. (2024): positions enter as rotations of queries and keys (RoPE; θ = 160,000 in global
layers, 10,000 in local ones), every third layer attends globally and the others within a sliding
window, the feed-forward is gated (GeGLU), LayerNorms and linear layers have no bias, and training
packs unpadded sequences. Conventions follow answerdotai/ModernBERT-base: a cased byte-level BPE
with ``[UNK] [CLS] [SEP] [PAD] [MASK]`` at the end of the vocabulary, ``[CLS] x [SEP]``, no token types.
Here the window is 64 tokens (32 each side) so that the bundled model's local layers are visibly
local on a 128-token input; ModernBERT-base's is 128 of 8,192.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import ModernBertConfig, ModernBertForMaskedLM

from app.training import common, data

LOOP = common.LoopConfig(steps=4000)


@dataclass(frozen=True)
class Shape:
    vocab_size: int = 4096
    hidden_size: int = 192
    num_hidden_layers: int = 4  # layers 0 and 3 global, 1 and 2 local
    num_attention_heads: int = 4
    intermediate_size: int = 512  # GeGLU: 3·H·I = 8·H² parameters, the same as BERT's 2·H·4H feed-forward
    global_attn_every_n_layers: int = 3
    local_attention: int = 64
    max_position_embeddings: int = 512  # RoPE has no position table; trained on 128-token sequences


def modernbert_config(tok, shape: Shape = Shape()) -> ModernBertConfig:
    return ModernBertConfig(
        vocab_size=len(tok),
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        global_attn_every_n_layers=shape.global_attn_every_n_layers,
        local_attention=shape.local_attention,
        max_position_embeddings=shape.max_position_embeddings,
        pad_token_id=tok.pad_token_id,
        cls_token_id=tok.cls_token_id,
        sep_token_id=tok.sep_token_id,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
    )


def masked_lm_logits(model: ModernBertForMaskedLM, ids, att, targets):
    h = model.model(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, H)
    return model.decoder(model.head(h[targets]))  # (n_targets, V)


def run(corpus, out: Path, work: Path, cfg: common.LoopConfig) -> None:
    work = work / "modernbert"
    shape = Shape()
    train_file, valid_file = data.corpus_files(corpus)
    tok = common.cached_tokenizer(
        work, lambda: data.build_modernbert(train_file, shape.vocab_size, shape.max_position_embeddings)
    )

    def seqs(f, cross, limit=None):
        stories = data.encode_sentences(tok, data.read_stories(f, limit))
        return data.single_segment(tok, data.pack(stories, cfg.seq_len - 2, cross, tok.sep_token_id), cfg.seq_len)

    train = common.cached(work / "train.pt", lambda: seqs(train_file, True))
    valid = common.cached(work / "valid.pt", lambda: seqs(valid_file, False, 400_000))
    torch.manual_seed(cfg.seed)
    model = ModernBertForMaskedLM(modernbert_config(tok, shape))
    curves, final = common.train_dynamic_mlm("modernbert", model, masked_lm_logits, tok, train, valid, cfg, work)
    baseline = common.unigram_baseline(train, valid, len(tok))
    card = common.model_card(
        name="modernbert-tiny-tinystories",
        family="modernbert",
        stands_in_for="answerdotai/ModernBERT-base",
        recipe="masked LM with dynamic masking (15%, 80/10/10), sequences packed across documents; rotary "
        f"positions (θ 160,000 global / 10,000 local), GeGLU feed-forward ({shape.intermediate_size} wide), no "
        f"biases, global attention every {shape.global_attn_every_n_layers} layers and a {shape.local_attention}-token "
        f"sliding window in the others; cased byte-level BPE vocabulary of {len(tok)} with `[CLS] [SEP] [MASK]`; "
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
        notes=f"\nTrained on 128-token sequences; it accepts up to {shape.max_position_embeddings} (RoPE has no "
        "position table), but positions past 128 were never seen in training.\n",
    )
    curves["final"] = {**final, "baseline": baseline}
    common.save_checkpoint(model, tok, out / "modernbert", curves, card)
