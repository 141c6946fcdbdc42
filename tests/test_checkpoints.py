"""The bundled checkpoints carry their lessons: they follow the real tokenizers' conventions (a student will
try them with ``pipeline("fill-mask")``), they meet the quality floors on the project's content-word cloze
set, and their shapes mirror the checkpoints they stand in for."""

import json

import pytest
import torch
from transformers import pipeline

from app import cloze
from app.lessons import compare, electra
from app.models import catalogue
from app.training import report
from tests.conftest import require_bundled

MLMS = [k for k in catalogue.MASKED_LMS]
SENTENCE = "She was very {mask} when she saw the big cake."


def needs(*keys):
    require_bundled(*keys)


# ----------------------------------------------------------------------------- conventions


MOJIBAKE = ("€", "â", "Ã", "œ", "™")  # what the corpus's old mis-decoded quotes (“ ’ as â€œ â€™) left in a vocabulary


@pytest.mark.parametrize("key", sorted(catalogue.CATALOGUE))
def test_no_vocabulary_piece_is_left_from_the_corpus_s_old_mis_decoded_quotes(key, bundled):
    """../shared/corpus had its quotes repaired and every stand-in was rebuilt on it (issue 26): no tokenizer has a
    piece like "a€œ" or "œmom", which a student would otherwise meet among a model's guesses."""
    needs(key)
    tok = bundled(key).tokenizer
    pieces = [tok.convert_tokens_to_string([t]) for t in tok.get_vocab()]
    left = [p for p in pieces if any(c in p for c in MOJIBAKE)]
    assert left == [], f"{len(left)} pieces, e.g. {left[:5]}"


@pytest.mark.parametrize("key", ["distilbert", "electra-generator", "electra-discriminator", "bert-nsp"])
def test_stand_ins_that_start_from_bert_keep_its_vocabulary(key, bundled):
    """They begin from the BERT stand-in's weights (DistilBERT's student, ELECTRA's discriminator and so the pair's
    shared embeddings, the NSP head), so each row of their embeddings is the word it was in BERT's."""
    needs("bert", key)
    assert bundled(key).tokenizer.get_vocab() == bundled("bert").tokenizer.get_vocab()


@pytest.mark.parametrize("key", MLMS + ["xlnet"])
def test_the_mask_string_typed_in_plain_text_is_one_mask_piece_and_no_stray_space(key, bundled):
    """roberta-base, albert-base-v2 and xlnet-base-cased declare their mask with lstrip=True: " <mask>" is
    one piece. A tokenizer saved without it splits off a bare space piece, which a fill-mask pipeline then
    feeds the model (it answered ", old years three and" for the old RoBERTa stand-in)."""
    needs(key)
    tok = bundled(key).tokenizer
    ids = tok(SENTENCE.format(mask=tok.mask_token))["input_ids"]
    assert ids.count(tok.mask_token_id) == 1
    before = tok.convert_ids_to_tokens(ids[ids.index(tok.mask_token_id) - 1])
    assert before.lstrip("Ġ▁").lower() == "very", before  # not a bare space piece
    added = tok.added_tokens_decoder[tok.mask_token_id]
    assert added.special and added.lstrip == (
        catalogue.get(key).family in ("roberta", "albert", "xlnet", "deberta", "modernbert")
    )


@pytest.mark.parametrize("key", ["bert", "distilbert", "electra-generator", "albert"])
def test_uncased_families_lower_case_and_cased_families_keep_case(key, bundled):
    needs(key)
    tok = bundled(key).tokenizer
    assert tok.tokenize("Lily") == tok.tokenize("lily")


@pytest.mark.parametrize("key", ["roberta", "xlnet", "deberta", "modernbert"])
def test_cased_families_keep_case(key, bundled):
    needs(key)
    tok = bundled(key).tokenizer
    assert tok.tokenize("Lily") != tok.tokenize("lily")


def test_special_token_layout_and_padding_side_mirror_the_real_tokenizers(bundled):
    expect = {  # family: (first, last of a single sentence, padding side, token types returned)
        "bert": ("[CLS]", "[SEP]", "right", True),
        "distilbert": ("[CLS]", "[SEP]", "right", False),
        "roberta": ("<s>", "</s>", "right", False),
        "albert": ("[CLS]", "[SEP]", "right", True),
        "xlnet": ("▁Lily", "<cls>", "left", True),
        "deberta": ("[CLS]", "[SEP]", "right", True),
        "modernbert": ("[CLS]", "[SEP]", "right", False),
        "electra-generator": ("[CLS]", "[SEP]", "right", True),
    }
    for key, (first, last, side, types) in expect.items():
        if not catalogue.get(key).bundled_available():
            continue
        tok = bundled(key).tokenizer
        enc = tok("Lily ran.")
        pieces = tok.convert_ids_to_tokens(enc["input_ids"])
        assert (pieces[0], pieces[-1], tok.padding_side) == (first, last, side), key
        assert ("token_type_ids" in enc) == types, key
        assert tok.model_max_length < 10**6, key  # a real limit, not the 1e30 of a generic wrapper


@pytest.mark.parametrize("key", MLMS)
def test_pipeline_fill_mask_gives_the_apps_own_top_k(key, bundled):
    """What a student gets from transformers' pipeline on the bundled folder is what the app shows."""
    needs(key)
    loaded = bundled(key)
    fill = pipeline("fill-mask", model=str(loaded.variant.bundled_path), device="cpu")
    text = "The little girl found a red ball in the park."
    mine = compare.fill_mask(loaded.model, loaded.tokenizer, text, 6, k=5)  # word 6: "ball"
    theirs = fill(text.replace("ball", loaded.tokenizer.mask_token), top_k=5)
    assert [r["token"] for r in theirs] == [loaded.tokenizer.convert_tokens_to_ids(t) for t in mine.first.pieces]
    assert [r["score"] for r in theirs] == pytest.approx([p for _, p in mine.first.read], abs=1e-5)


# ----------------------------------------------------------------------------- shapes


def test_distilbert_has_half_the_teachers_layers(bundled):
    needs("bert", "distilbert")
    teacher, student = bundled("bert").model.config, bundled("distilbert").model.config
    assert student.n_layers * 2 == teacher.num_hidden_layers
    assert (student.dim, student.n_heads, student.vocab_size) == (
        teacher.hidden_size,
        teacher.num_attention_heads,
        teacher.vocab_size,
    )


def test_albert_shares_one_layer_factorizes_and_ships_its_sentence_order_head():
    needs("albert")
    from transformers import AlbertForMaskedLM, AlbertForPreTraining

    folder = catalogue.get("albert").bundled_path
    full = AlbertForPreTraining.from_pretrained(folder).eval()
    cfg = full.config
    assert cfg.num_hidden_groups == 1 and cfg.inner_group_num == 1 and cfg.embedding_size < cfg.hidden_size
    mlm = AlbertForMaskedLM.from_pretrained(folder).eval()
    assert torch.equal(mlm.predictions.decoder.weight, full.predictions.decoder.weight)
    assert full.sop_classifier.classifier.weight.abs().sum() > 0  # trained, not freshly initialised


def test_electra_generator_is_the_discriminators_size_as_released():
    """google/electra-small-generator is as wide as google/electra-small-discriminator (hidden 256, FFN 1024,
    4 heads: "the generator size is 1 for ELECTRA-Small", google-research/electra#39)."""
    needs("electra-generator", "electra-discriminator")
    g = json.loads((catalogue.get("electra-generator").bundled_path / "config.json").read_text())
    d = json.loads((catalogue.get("electra-discriminator").bundled_path / "config.json").read_text())
    for field in ("hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers", "embedding_size"):
        assert g[field] == d[field], field


def test_electra_pair_is_saved_with_one_set_of_embeddings_so_retying_changes_nothing():
    """The embeddings are shared in training and frozen after the joint stage, so both files hold the same
    weights; the app re-ties the pair (loading.tie_electra_pair) and the generator's fakes are the trained ones."""
    needs("electra-generator", "electra-discriminator")
    from safetensors.torch import load_file

    g = load_file(catalogue.get("electra-generator").bundled_path / "model.safetensors")
    d = load_file(catalogue.get("electra-discriminator").bundled_path / "model.safetensors")
    shared = [k for k in d if k.startswith("electra.embeddings.") and "position_ids" not in k]
    assert shared and all(torch.equal(g[k], d[k]) for k in shared)


def test_every_checkpoint_records_its_curves_and_is_stored_small():
    for key, v in catalogue.CATALOGUE.items():
        if not v.bundled_available():
            continue
        curves = json.loads((v.bundled_path / "curves.json").read_text())
        assert len(curves["step"]) == len(curves["train_loss"]) > 0
        assert curves["eval_step"] and curves["steps_done"] == curves["eval_step"][-1]
        card = (v.bundled_path / "README.md").read_text()
        assert "Compute:" in card and "token positions seen" in card, key
        n = catalogue.bundled_parameter_count(v)
        size = sum(f.stat().st_size for f in v.bundled_path.glob("*.safetensors"))
        assert size < 2.2 * n, key  # float16 on disk (2 bytes a parameter)
        assert n <= 8_000_000, key


# ----------------------------------------------------------------------------- quality floors


def short_of_floor(key: str, entry: str | None = None):
    """A floor app/training/report.py records as not reached yet (under ``entry``, default the model's key): expected
    to fail, strictly."""
    entry = entry or key
    if entry in report.SHORT_OF_FLOOR:
        return pytest.param(key, marks=pytest.mark.xfail(strict=True, reason=report.SHORT_OF_FLOOR[entry]))
    return key


@pytest.mark.trained
@pytest.mark.parametrize("key", [short_of_floor(k) for k in report.CLOZE_FLOORS])
def test_cloze_floor_holds_on_the_projects_content_word_set(key, bundled):
    needs(key)
    loaded = bundled(key)
    r = cloze.evaluate(
        loaded.model, loaded.tokenizer, cloze.load_items(), k=5, permutation=loaded.variant.family == "xlnet"
    )
    assert r.rate >= report.CLOZE_FLOORS[key], (key, r.rate, r.misses[:5])


@pytest.mark.trained
@pytest.mark.parametrize("key", [short_of_floor("electra-discriminator")])
def test_the_discriminator_detects_the_stronger_generators_fakes(key):
    needs(key)
    final = json.loads((catalogue.get(key).bundled_path / "curves.json").read_text())["final"]
    assert final["discriminator"]["auc"] >= report.AUC_FLOOR


@pytest.mark.trained
def test_the_pair_spots_its_fakes_live_in_the_projects_own_sentences(bundled):
    """The held-out AUC above is read from curves.json (the corpus is not in the repo); this one is measured now,
    on the files: 102 cloze sentences filled with their first answer, 3 corrupted rounds each. Shorter context
    than the 128-token held-out sequences, so lower (0.87 today; the jointly trained pair it replaced: 0.74)."""
    needs("electra-generator", "electra-discriminator")
    models = {k: bundled(k) for k in electra.MODELS}
    d = electra.pooled_detection(models, [i.filled for i in cloze.load_items()])
    assert d.both_classes and d.n_tokens > 1000
    assert d.auc >= 0.82, d


@pytest.mark.trained
def test_distilbert_keeps_its_teachers_top1():
    needs("distilbert")
    final = json.loads((catalogue.get("distilbert").bundled_path / "curves.json").read_text())["final"]
    assert final["retained_top1"] >= 0.95


@pytest.mark.trained
@pytest.mark.parametrize("key", [short_of_floor("bert-nsp", "bert-nsp:nsp")])
def test_the_nsp_head_solves_nsp_on_held_out_pairs(key):
    """NSP is the easy task (a topic detector): the bundled NSP head meets its floor on held-out story pairs
    (curves.json: the corpus is not in the repo) — ALBERT's Table 5 (NSP-trained: 90.5 on NSP)."""
    needs(key)
    final = json.loads((catalogue.get(key).bundled_path / "curves.json").read_text())["final"]
    assert final["held_out_pairs"] >= 2000
    assert final["nsp_accuracy"] >= report.NSP_FLOOR


@pytest.mark.trained
@pytest.mark.parametrize("key", [short_of_floor("bert-nsp", "bert-nsp:sop")])
def test_the_nsp_head_stays_near_chance_on_sop(key):
    """Trained on NSP only, the head should not tell order: ALBERT's NSP-trained model scored 52.0 on SOP."""
    needs(key)
    final = json.loads((catalogue.get(key).bundled_path / "curves.json").read_text())["final"]
    assert abs(final["sop_accuracy"] - 0.5) <= report.SOP_NEAR_CHANCE


def _page_pool_accuracy(key, bundled) -> dict[str, float]:
    from app.lessons import sentence_order as so

    r = so.run({"albert": "not loaded in this test", key: bundled(key)}, so.Inputs())
    assert r.n_pairs == so.DEFAULTS.sample_pairs
    return r.accuracy[key]


@pytest.mark.trained
@pytest.mark.parametrize("key", [short_of_floor("bert-nsp")])
def test_the_nsp_head_solves_nsp_on_the_pages_own_pool(key, bundled):
    """Measured now, on the files, as the NSP vs SOP page measures it (60 base pairs of held-out stories: 120 pairs
    a task). 120 pairs are coarse (±0.09 at 95%), so the bar sits below the held-out floor."""
    needs(key)
    acc = _page_pool_accuracy(key, bundled)
    assert acc["nsp"] >= 0.75, acc


@pytest.mark.trained
@pytest.mark.parametrize("key", [short_of_floor("bert-nsp", "bert-nsp:sop")])
def test_the_nsp_head_stays_near_chance_on_sop_on_the_pages_own_pool(key, bundled):
    """The same pool's SOP pairs, with a bound as coarse as the pool (0.5 ± 0.15). The held-out SOP bound's miss
    (report.SHORT_OF_FLOOR) shows here too: the page says what its grid shows, not the paper's 52%."""
    needs(key)
    acc = _page_pool_accuracy(key, bundled)
    assert abs(acc["sop"] - 0.5) <= 0.15, acc


@pytest.mark.trained
def test_albert_sop_head_solves_sop_on_held_out_story_segments():
    """ALBERT's stage 2 (app/training/albert_sop.py): its SOP head on held-out pairs drawn as the NSP vs SOP lesson
    draws its pool (curves.json: the corpus is not in the repo) — ALBERT's Table 5 (SOP-trained: 86.5 on SOP).
    Stage 1's head was at chance on them, which the card and curves keep."""
    needs("albert")
    curves = json.loads((catalogue.get("albert").bundled_path / "curves.json").read_text())
    final = curves["final"]
    assert curves.get("stage2") and final["held_out_pairs"] >= 2000
    assert final["segment_sop_accuracy"] >= report.SOP_FLOOR
    assert abs(final["stage1_segment_sop_accuracy"] - 0.5) <= 0.05  # what stage 2 was for


@pytest.mark.trained
def test_albert_sop_head_solves_sop_on_the_pages_own_pool(bundled):
    """Measured now, as the page measures it (120 pairs a task, ±0.08 at 95%; 0.76 today)."""
    needs("albert")
    from app.lessons import sentence_order as so

    acc = so.run({"albert": bundled("albert"), "bert-nsp": "not loaded in this test"}, so.Inputs()).accuracy["albert"]
    assert acc["sop"] >= 0.65, acc


def test_the_nsp_recipe_does_not_call_its_head_at_chance_on_sop_when_its_card_says_otherwise():
    import re
    from pathlib import Path

    from app.training import bert_nsp

    card = (Path(__file__).resolve().parents[1] / "assets" / "models" / "bert-nsp" / "README.md").read_text()
    sop = float(re.search(r"\| SOP accuracy \(held-out pairs: 4000[^|]*\| ([0-9.]+) \|", card).group(1))
    doc = " ".join(bert_nsp.__doc__.split())
    assert sop - 0.5 > 1.96 * (0.25 / 4000) ** 0.5  # above chance on its 4000 held-out pairs
    assert "head is at chance on SOP" not in doc and f"SOP {sop:.3f}" in doc
