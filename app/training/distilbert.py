"""DistilBERT at toy scale: a student with half the teacher's layers, initialised from every other
teacher layer, trained on soft targets at temperature T + masked LM + hidden-state cosine loss.

Sanh et al. (2019): L = α_ce · T² · KL(teacher_T ‖ student_T) + α_mlm · MLM + α_cos · (1 − cos(h_s, h_t)),
with α = (5, 2, 1) and T = 2; dynamic masking; no token-type embeddings, no NSP. The teacher is the
bundled BERT stand-in (build it first).
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import BertForMaskedLM, DistilBertConfig, DistilBertForMaskedLM, DistilBertTokenizer

from app.triple_loss import Recipe, distillation_losses
from app.masking import MaskingConfig, mlm_batch
from app.training import bert, common, data

LOOP = common.LoopConfig(steps=3000)


def student_from_teacher(teacher: BertForMaskedLM) -> DistilBertForMaskedLM:
    """Half the layers; layer i of the student starts as layer 2i of the teacher (0, 2, 4, ...)."""
    tc = teacher.config
    student = DistilBertForMaskedLM(
        DistilBertConfig(
            vocab_size=tc.vocab_size,
            dim=tc.hidden_size,
            n_layers=tc.num_hidden_layers // 2,
            n_heads=tc.num_attention_heads,
            hidden_dim=tc.intermediate_size,
            max_position_embeddings=tc.max_position_embeddings,
            activation="gelu",
            pad_token_id=tc.pad_token_id,
        )
    )
    te, se = teacher.bert.embeddings, student.distilbert.embeddings
    with torch.no_grad():
        se.word_embeddings.weight.copy_(te.word_embeddings.weight)
        # DistilBERT has no token types; inputs are always type 0, so fold that row into the positions
        se.position_embeddings.weight.copy_(te.position_embeddings.weight + te.token_type_embeddings.weight[0])
        se.LayerNorm.load_state_dict(te.LayerNorm.state_dict())
        for i, block in enumerate(student.distilbert.transformer.layer):
            t = teacher.bert.encoder.layer[2 * i]
            for s_lin, t_lin in [
                (block.attention.q_lin, t.attention.self.query),
                (block.attention.k_lin, t.attention.self.key),
                (block.attention.v_lin, t.attention.self.value),
                (block.attention.out_lin, t.attention.output.dense),
                (block.ffn.lin1, t.intermediate.dense),
                (block.ffn.lin2, t.output.dense),
            ]:
                s_lin.load_state_dict(t_lin.state_dict())
            block.sa_layer_norm.load_state_dict(t.attention.output.LayerNorm.state_dict())
            block.output_layer_norm.load_state_dict(t.output.LayerNorm.state_dict())
        student.vocab_transform.load_state_dict(teacher.cls.predictions.transform.dense.state_dict())
        student.vocab_layer_norm.load_state_dict(teacher.cls.predictions.transform.LayerNorm.state_dict())
        student.vocab_projector.bias.copy_(teacher.cls.predictions.bias)
    return student


def student_logits(student: DistilBertForMaskedLM, ids, att, select):
    """(logits at the selected positions (n, V), last hidden states (B, T, H))."""
    h = student.distilbert(input_ids=ids, attention_mask=att).last_hidden_state
    x = student.vocab_layer_norm(student.activation(student.vocab_transform(h[select])))
    return student.vocab_projector(x), h


def logits_at(model, ids, att, targets):
    """Masked-LM logits at the targets of the student (a ``DistilBertForMaskedLM``) or of its BERT teacher."""
    if isinstance(model, DistilBertForMaskedLM):
        return student_logits(model, ids, att, targets)[0]
    return bert.masked_lm_logits(model, ids, att, targets)


def distillation_step(student, teacher, tok, train, cfg: common.LoopConfig, recipe: Recipe):
    """``step_loss(step, gen)``: the triple loss on a dynamically masked batch, soft targets on every real token."""
    mcfg, rand_ids = MaskingConfig(), data.random_ids(tok)

    def step_loss(step, gen):
        idx = common.shuffled_batch(len(train), cfg.batch_size, step, cfg.seed)
        att = train.attention_mask[idx].to(cfg.device)
        ids, labels = mlm_batch(train.input_ids[idx], train.maskable[idx], tok.mask_token_id, rand_ids, mcfg, gen)
        ids, labels = ids.to(cfg.device), labels.to(cfg.device)
        real = att.bool()  # distil on every real token, as DistilBERT does
        with torch.no_grad():
            t_out = teacher(input_ids=ids, attention_mask=att, output_hidden_states=True)
        s_logits, s_hidden = student_logits(student, ids, att, real)
        terms = distillation_losses(
            s_logits,
            t_out.logits[real],
            labels[real],
            s_hidden[real],
            t_out.hidden_states[-1][real],
            recipe.temperature,
        )
        loss = recipe.alpha_ce * terms["kl"] + recipe.alpha_mlm * terms["mlm"] + recipe.alpha_cos * terms["cos"]
        return loss, {k: float(v.detach()) for k, v in terms.items()}

    return step_loss


def frozen_teacher(out: Path, device: str) -> BertForMaskedLM:
    """The bundled BERT stand-in, built first by the bert recipe, in eval mode with no gradients."""
    if not (out / "bert" / "config.json").exists():
        raise SystemExit("DistilBERT needs its teacher: build the bert recipe first")
    teacher = BertForMaskedLM.from_pretrained(out / "bert").eval().to(device)
    for p in teacher.parameters():
        p.requires_grad_(False)
    return teacher


def run(corpus, out: Path, work: Path, cfg: common.LoopConfig) -> None:
    recipe = Recipe()
    teacher = frozen_teacher(out, cfg.device)
    tok, train, valid = bert.prepare(corpus, work / "bert-vocabulary", cfg.seq_len, vocabulary_of=out / "bert")
    tok = DistilBertTokenizer(vocab=tok.get_vocab(), do_lower_case=True, model_max_length=data.MAX_LENGTH)
    student = student_from_teacher(teacher).to(cfg.device)
    step_loss_of = lambda s: distillation_step(s, teacher, tok, train, cfg, recipe)  # noqa: E731
    evaluation = common.masked_lm_evaluation(logits_at, tok)
    curves, final = common.train_masked_lm(
        "distilbert", student, evaluation, step_loss_of, valid, cfg, work / "distilbert"
    )
    teacher.cpu()
    with torch.no_grad():
        t_final = evaluation(teacher, valid, "cpu")
    speed = forward_speedup(teacher, student, tok)
    retained = final["top1"] / t_final["top1"]
    curves["final"] = {**final, "teacher": t_final, "retained_top1": retained, **speed}
    card = common.model_card(
        name="distilbert-tiny-tinystories",
        family="distilbert",
        stands_in_for="distilbert/distilbert-base-uncased",
        recipe=f"distillation from the bundled BERT stand-in: {student.config.n_layers} of its "
        f"{teacher.config.num_hidden_layers} layers, initialised from teacher layers "
        f"{list(range(0, teacher.config.num_hidden_layers, 2))}; loss "
        f"{recipe.alpha_ce:g}·T²·KL(T={recipe.temperature:g}) + {recipe.alpha_mlm:g}·MLM + "
        f"{recipe.alpha_cos:g}·cosine, "
        "dynamic masking, soft targets on every token",
        model=student,
        cfg=cfg,
        curves=curves,
        starts_from="the bundled BERT stand-in's layers",
        metrics={
            "masked top-1 (15% masking)": final["top1"],
            "masked top-5 (15% masking)": final["top5"],
            "teacher masked top-1": t_final["top1"],
            "retained top-1 (student / teacher)": retained,
            "forward speed-up on CPU (teacher ms / student ms)": speed["speedup"],
            "encoder forward speed-up on CPU": speed["encoder_speedup"],
            "held-out targets": final["n_targets"],
            "cloze top-5 (content words)": final["cloze_top5"],
            "teacher cloze top-5": t_final["cloze_top5"],
        },
        baseline=None,
        corpus=data.corpus_files(corpus)[0].name,
    )
    common.save_checkpoint(student, tok, out / "distilbert", curves, card)


SPEED_TEXT = "The little girl found a red ball in the park. She was very happy."


def forward_speedup(teacher, student, tok, repeats: int = 300) -> dict[str, float]:
    """Median single-sentence forward time of teacher and student on this machine's CPU, whole (with the masked-LM
    head over the vocabulary) and their encoders alone (``base_model``: what the paper timed, a full pass of STS-B,
    an encoder with a one-number head), all four timed in turns (``measure.with_encoders``, as the
    Distillation page times them), so a burst of background load falls on each alike. Timed one after the other,
    50 each, six runs on an idle machine gave whole-model speed-ups from 1.29× to 2.42×; in turns, 1.59-1.61×."""
    from app import measure

    timed = measure.with_encoders({"teacher": (teacher, tok), "student": (student, tok)}, SPEED_TEXT, repeats=repeats)
    t, s = timed["teacher"], timed["student"]
    return {
        "teacher_ms": t["median_ms"],
        "student_ms": s["median_ms"],
        "speedup": t["median_ms"] / s["median_ms"],
        "encoder_teacher_ms": t["encoder_median_ms"],
        "encoder_student_ms": s["encoder_median_ms"],
        "encoder_speedup": t["encoder_median_ms"] / s["encoder_median_ms"],
    }
