"""ELECTRA at toy scale: a small generator and a discriminator sharing token embeddings, trained jointly
on replaced-token detection (λ = 50) with replacements sampled from the generator.

Clark et al. (2020): the generator is a masked LM; at the masked positions a token is *sampled* from
it, and the discriminator labels every token of the corrupted sequence as original or replaced (a
sampled token equal to the original counts as original). Loss = MLM(generator) + λ · BCE(discriminator).
Embeddings (token, position, type) are one module shared by both.

Sizes mirror the released pair this stands in for: google/electra-small-generator has the *same*
width as google/electra-small-discriminator (hidden 256, FFN 1024, 4 heads — "the generator size is 1
for the ELECTRA-Small model", google-research/electra#39), although the paper's Figure 3 found ¼–½
best; here both are the BERT stand-in's shape. A full-size generator proposes plausible words, so its
fakes are hard to spot: the discriminator needs more steps for the same ROC-AUC than against a tiny one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining, ElectraTokenizer

from app.electra import roc_auc, sample_replacements
from app.masking import MaskingConfig, mlm_batch
from app.training import bert, common, data

LOOP = common.LoopConfig(steps=2500)


@dataclass(frozen=True)
class Shape:
    embedding_size: int = 192
    hidden_size: int = 192
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    intermediate_size: int = 768
    generator_hidden_size: int = 192  # = the discriminator's, as in the released ELECTRA-Small pair
    generator_heads: int = 4
    generator_intermediate_size: int = 768
    rtd_weight: float = 50.0  # λ
    init_from_bert: bool = True  # start the discriminator (and so the shared embeddings) from the bundled BERT


def configs(vocab_size: int, shape: Shape = Shape()) -> tuple[ElectraConfig, ElectraConfig]:
    common_args = dict(vocab_size=vocab_size, embedding_size=shape.embedding_size, num_hidden_layers=shape.num_hidden_layers,
                       max_position_embeddings=data.MAX_LENGTH, pad_token_id=0)
    gen = ElectraConfig(hidden_size=shape.generator_hidden_size, num_attention_heads=shape.generator_heads,
                        intermediate_size=shape.generator_intermediate_size, **common_args)
    disc = ElectraConfig(hidden_size=shape.hidden_size, num_attention_heads=shape.num_attention_heads,
                         intermediate_size=shape.intermediate_size, **common_args)
    return gen, disc


def tie_embeddings(generator: ElectraForMaskedLM, discriminator: ElectraForPreTraining) -> None:
    """Make the generator use the discriminator's embedding module (one set of weights)."""
    generator.electra.embeddings = discriminator.electra.embeddings
    generator.generator_lm_head.weight = discriminator.electra.embeddings.word_embeddings.weight


def init_discriminator_from_bert(discriminator: ElectraForPreTraining, bert_dir: Path) -> None:
    """Start the discriminator from the bundled BERT (identical module layout, same vocabulary): its
    embeddings — which the generator shares — and its encoder. The discriminator's one-logit head and the
    whole generator encoder start from scratch, so the generator learns jointly, as in the paper.

    At toy scale and CPU budgets, a discriminator trained from scratch sits for thousands of steps on the
    plateau where it predicts "original" everywhere (AUC ≈ 0.54 after 1,300 steps here): its only signal
    is one bit per token. Starting it from a model that knows the language lets replaced-token detection
    itself be learned in the steps we can afford. The generator must NOT start trained too: a generator
    that is already good from step 0 gives the discriminator its hardest fakes at once (its AUC crept from
    0.68 to 0.72 in 750 steps that way), while one learning beside it gives the paper's curriculum —
    random tokens first, plausible words later."""
    from transformers import BertForMaskedLM

    bert = BertForMaskedLM.from_pretrained(bert_dir)
    missing, _ = discriminator.electra.embeddings.load_state_dict(bert.bert.embeddings.state_dict(), strict=False)
    assert not [k for k in missing if "position_ids" not in k], missing
    discriminator.electra.encoder.load_state_dict(bert.bert.encoder.state_dict())


def generator_logits(gen: ElectraForMaskedLM, ids, att, targets):
    h = gen.electra(input_ids=ids, attention_mask=att).last_hidden_state  # (B, T, Hg)
    return gen.generator_lm_head(gen.generator_predictions(h[targets]))  # (n, V)


def corrupt_with_generator(generator, ids, att, maskable, tok, rand_ids, gen, cfg=MaskingConfig()):
    """(generator MLM loss, corrupted ids (B, T), replaced labels (B, T) float), the last two on the model's
    device. Masks and samples are drawn on the CPU (``gen`` is a CPU generator), so a run is the same anywhere."""
    dev = next(generator.parameters()).device
    special = torch.tensor(tok.all_special_ids)
    masked, labels = mlm_batch(ids, maskable, tok.mask_token_id, rand_ids, cfg, gen)
    targets = labels != -100
    g_logits = generator_logits(generator, masked.to(dev), att.to(dev), targets.to(dev))  # (n, V)
    g_loss = torch.nn.functional.cross_entropy(g_logits, labels[targets].to(dev))
    corrupted = ids.clone()
    corrupted[targets] = sample_replacements(g_logits.detach().float().cpu(), special, gen)
    return g_loss, corrupted.to(dev), (corrupted != ids).float().to(dev)


def run(corpus, out: Path, work: Path, cfg: common.LoopConfig) -> None:
    shape = Shape()
    # same WordPiece conventions (and the same vocabulary) as the BERT stand-in
    tok, train, valid = bert.prepare(corpus, work / "bert", cfg.seq_len)
    tok = ElectraTokenizer(vocab=tok.get_vocab(), do_lower_case=True, model_max_length=data.MAX_LENGTH)
    warm = shape.init_from_bert and (out / "bert" / "config.json").exists()
    work = work / ("electra-disc-from-bert" if warm else "electra")
    torch.manual_seed(cfg.seed)
    gcfg, dcfg = configs(len(tok), shape)
    generator, discriminator = ElectraForMaskedLM(gcfg), ElectraForPreTraining(dcfg)
    if warm:
        init_discriminator_from_bert(discriminator, out / "bert")
    tie_embeddings(generator, discriminator)
    generator.to(cfg.device)
    discriminator.to(cfg.device)
    both = torch.nn.ModuleDict({"generator": generator, "discriminator": discriminator})
    rand_ids = data.random_ids(tok)
    eval_set = valid.subset(slice(0, 256))

    def step_loss(step, gen):
        idx = common.shuffled_batch(len(train), cfg.batch_size, step, cfg.seed)
        att = train.attention_mask[idx]
        g_loss, corrupted, replaced = corrupt_with_generator(generator, train.input_ids[idx], att, train.maskable[idx],
                                                             tok, rand_ids, gen)
        att = att.to(cfg.device)
        d_logits = discriminator(input_ids=corrupted, attention_mask=att).logits  # (B, T)
        real = att.bool()
        d_loss = torch.nn.functional.binary_cross_entropy_with_logits(d_logits[real], replaced[real])
        return g_loss + shape.rtd_weight * d_loss, {"gen_loss": float(g_loss), "disc_loss": float(d_loss)}

    def detection(subset, seed=99):
        gen = torch.Generator().manual_seed(seed)
        scores, labels, words, n_fakes = [], [], 0, 0
        for s in range(0, len(subset), 128):
            part = subset.subset(slice(s, s + 128))
            _, corrupted, replaced = corrupt_with_generator(generator, part.input_ids, part.attention_mask, part.maskable, tok, rand_ids, gen)
            att = part.attention_mask.to(corrupted.device)
            d = torch.sigmoid(discriminator(input_ids=corrupted, attention_mask=att).logits.float()).cpu()
            keep = part.maskable  # content tokens (special tokens are never replaced)
            scores.append(d[keep])
            labels.append(replaced.cpu()[keep])
            fakes = corrupted.cpu()[replaced.cpu().bool()]
            words += sum(w.isalpha() for w in tok.convert_ids_to_tokens(fakes.tolist()))
            n_fakes += len(fakes)
        scores, labels = torch.cat(scores), torch.cat(labels)
        pred = scores > 0.5
        tp = float((pred & labels.bool()).sum())
        return {"auc": roc_auc(scores, labels), "precision": tp / max(1.0, float(pred.sum())),
                "recall": tp / max(1.0, float(labels.sum())), "replaced_share": float(labels.mean()),
                "fakes_that_are_words": words / max(n_fakes, 1)}

    def evaluate():
        g = common.masked_topk(lambda i, a, t: generator_logits(generator, i, a, t), eval_set, tok.mask_token_id,
                               device=cfg.device)
        d = detection(eval_set)
        return {"gen_top5": g["top5"], "disc_auc": d["auc"], "fakes_that_are_words": d["fakes_that_are_words"],
                **common.cloze_top5(generator, tok)}

    curves = common.train_loop("electra", both, step_loss, evaluate, cfg, work)
    both.cpu()
    with torch.no_grad():
        g = common.masked_topk(lambda i, a, t: generator_logits(generator, i, a, t), valid, tok.mask_token_id)
        g.update(common.cloze_top5(generator, tok))
        d = detection(valid)
    baseline = common.unigram_baseline(train, valid, len(tok))
    curves["final"] = {"generator": g, "discriminator": d, "baseline": baseline}
    recipe = (f"replaced-token detection, λ = {shape.rtd_weight:g}; generator and discriminator the same size "
              f"({shape.num_hidden_layers} layers, hidden {shape.hidden_size}, FFN {shape.intermediate_size}, "
              f"{shape.num_attention_heads} heads), as in the released ELECTRA-Small pair (generator size 1, "
              "google-research/electra#39); token/position embeddings shared by both "
              f"(embedding size {shape.embedding_size}); 15% masking, replacements sampled from the generator at T = 1; "
              f"WordPiece uncased vocabulary of {len(tok)} (the BERT stand-in's)"
              + ("; the discriminator (and so the shared embeddings) started from the bundled BERT stand-in, which "
                 "has its exact shape, and the generator encoder from scratch, learning beside it — from scratch the "
                 "discriminator stayed on the predict-'original' plateau (AUC ≈ 0.54 after 1,300 steps), and with "
                 "a generator as trained as BERT from step 0 it crept from AUC 0.68 to 0.72 in 750 steps" if warm else ""))
    pair = "\nThe generator and discriminator were trained together and share their embeddings; load both (the app re-ties them).\n"
    for model, name, hub, metrics in [
        (generator, "electra-generator", "google/electra-small-generator",
         {"masked top-1 (15% masking)": g["top1"], "masked top-5 (15% masking)": g["top5"], "held-out targets": g["n_targets"],
          "cloze top-5 (content words)": g["cloze_top5"], "sampled fakes that are words": d["fakes_that_are_words"]}),
        (discriminator, "electra-discriminator", "google/electra-small-discriminator",
         {"ROC-AUC on generator-corrupted text": d["auc"], "precision at 0.5": d["precision"],
          "recall at 0.5": d["recall"], "replaced share of tokens": d["replaced_share"]}),
    ]:
        card = common.model_card(name=f"{name}-tiny-tinystories", family="electra", stands_in_for=hub, recipe=recipe,
                                 model=model, cfg=cfg, curves=curves, metrics=metrics,
                                 baseline=baseline if "generator" in name else None, corpus=data.corpus_files(corpus)[0].name, notes=pair)
        common.save_checkpoint(model, tok, out / name, curves, card)
