"""The sentence-objective lesson (app/lessons/sentence_order.py): the generated pairs from the bundled held-out
stories, both sentence heads against the models' own computation (ALBERT's SOP head read from its
checkpoint = ``AlbertForPreTraining.sop_logits``; BERT's ``seq_relationship``), ``run`` and its cache split,
bad input, a missing head, and the figures.

Models: a stand-in folder (``standin_root``) used as BVE_BUNDLED_DIR — an ALBERT with its SOP head (the
bundled ALBERT's config and tokenizer, random weights: the bundled one may predate the SOP head) and the NSP
stand-in (the bundled ``bert-nsp`` when it is there, else the sentence experiment's ``--quick`` export on a
small synthetic corpus, exactly as the lead builds the real one)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from app.lessons import sentence_order as so
from app.core import text as txt
from app.figures import sentence_order as figures
from app.core.lesson import Stop
from app.models import catalogue
from tests.conftest import CountingCache

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets" / "models"


def build_standins(folder: Path) -> Path:
    """``folder`` as a BVE_BUNDLED_DIR: links to every bundled model, ``albert`` with an SOP head and
    ``bert-nsp`` (see the module text). Returns ``folder``."""
    from transformers import AlbertConfig, AlbertForPreTraining, AutoTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    for src in ASSETS.iterdir():
        if src.is_dir() and src.name not in ("albert", "bert-nsp"):
            (folder / src.name).symlink_to(src, target_is_directory=True)
    torch.manual_seed(0)
    albert = AlbertForPreTraining(AlbertConfig.from_pretrained(ASSETS / "albert"))
    with torch.no_grad():  # a head that says something: not the init's near-zero classifier
        albert.sop_classifier.classifier.weight.normal_(0, 0.5)
    albert.config.architectures = ["AlbertForPreTraining"]
    albert.save_pretrained(folder / "albert")
    AutoTokenizer.from_pretrained(ASSETS / "albert").save_pretrained(folder / "albert")
    nsp = catalogue.get("bert-nsp")
    if nsp.bundled_available():
        (folder / "bert-nsp").symlink_to(nsp.bundled_path, target_is_directory=True)
    else:
        (folder / "bert-nsp").symlink_to(quick_nsp_export(folder.parent / "nsp-export"), target_is_directory=True)
    return folder


def quick_nsp_export(work: Path) -> Path:
    """``python -m app.experiments run sentence --quick --checkpoints DIR`` on a synthetic corpus: the NSP
    stand-in's folder."""
    from app.experiments import runner, sentence
    from tests.test_claims import synthetic_corpus

    corpus = synthetic_corpus(work / "corpus", train=400, valid=100)
    runner.run_experiment(
        "sentence",
        seeds=1,
        quick=True,
        corpus=corpus,
        work=work / "work",
        out=work / "out",
        arms=["nsp", "sop"],
        allow_dirty=True,
    )
    written = sentence.export_checkpoints(work / "checkpoints", quick=True, corpus=corpus, work=work / "work")
    return next(p for p in written if p.name == "bert-nsp-tinystories")


@pytest.fixture(scope="session")
def standin_root(tmp_path_factory) -> Path:
    return build_standins(tmp_path_factory.mktemp("sentence-order") / "models")


@pytest.fixture(scope="module")
def models(standin_root):
    """{"albert": ALBERT with an SOP head, "bert-nsp": the NSP stand-in}, loaded the app's way."""
    from app.models import loading

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BVE_BUNDLED_DIR", str(standin_root))
        return {key: loading.load(key) for key in so.MODELS}


# ----------------------------------------------------------------------------- the stories and the pairs


def test_the_story_sample_is_small_held_out_text_with_sentences_to_pair():
    assert so.STORIES.stat().st_size <= 50_000
    stories = so.load_stories()
    assert len(stories) >= 90 and all(len(s) >= 4 for s in stories)  # two segments of 2 fit, of 3 in most
    valid = Path("/work/shared/corpus/tinystories_valid.txt")
    if valid.exists():  # drawn from the held-out file, never from the training file
        text = " ".join(valid.read_text(encoding="utf-8").split())
        assert all(" ".join(s) in text for s in stories[:10])


def test_generated_pairs_are_seeded_and_differ_only_in_their_negatives():
    stories = so.load_stories()
    pairs = so.generate_pairs(stories, 20, seed=4)
    assert pairs == so.generate_pairs(stories, 20, seed=4) and pairs != so.generate_pairs(stories, 20, seed=5)
    assert [p.kind for p in pairs[:3]] == list(so.KINDS) and len(pairs) == 60

    def story_of(segment: str) -> int:
        return next(i for i, story in enumerate(stories) if segment in " ".join(story))

    for base in range(20):
        in_order, other, swapped = pairs[3 * base : 3 * base + 3]
        assert (in_order.label, other.label, swapped.label) == (0, 1, 1)
        assert (swapped.a, swapped.b) == (in_order.b, in_order.a) and other.a == in_order.a
        assert story_of(in_order.a + " " + in_order.b) == story_of(in_order.a)  # consecutive, in one story
        assert story_of(other.b) != story_of(in_order.a)  # a segment of another story
        assert so.shared_words(swapped.a, swapped.b) == so.shared_words(in_order.a, in_order.b)
        k = len(txt.split_sentences(in_order.a))
        assert 2 <= k <= 3 and len(txt.split_sentences(in_order.b)) == len(txt.split_sentences(other.b)) == k
        assert not any(story[0] in other.b for story in stories)  # never another story's opening line
    sizes = {len(txt.split_sentences(p.a)) for p in pairs if p.kind == "in order"}
    assert sizes == {2, 3}


def test_shared_words_counts_content_words_only():
    assert so.shared_words("The dog ran to the park.", "A big dog sat in the park!") == 2  # dog, park
    assert so.shared_words("She was happy.", "He was sad.") == 0


# ----------------------------------------------------------------------------- the heads, against the models


def test_albert_sop_head_read_from_the_checkpoint_equals_albert_for_pretraining(models, standin_root):
    from transformers import AlbertForPreTraining

    albert = models["albert"]
    assert type(albert.model).__name__ == "AlbertForMaskedLM"  # the catalogue's class: no pooler, no SOP head
    pairs = (("The dog ran to the park.", "It played with a ball all day long."), ("Hi.", "The end of the story came."))
    ours = so.sentence_logits(albert, pairs)
    reference = AlbertForPreTraining.from_pretrained(standin_root / "albert").eval()
    enc = albert.tokenizer([a for a, _ in pairs], [b for _, b in pairs], padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = reference(**enc).sop_logits
    assert ours.shape == (2, 2) and torch.allclose(ours, expected, atol=1e-5)


def test_bert_nsp_head_scores_each_pair_as_alone_even_when_padded_in_a_batch(models):
    bert = models["bert-nsp"]
    pairs = (("lily found a ball.", "she was happy."), ("tom went to the big park with his dog.", "the dog ran."))
    batch = so.sentence_logits(bert, pairs)
    for i, (a, b) in enumerate(pairs):
        enc = bert.tokenizer(a, b, return_tensors="pt")
        with torch.no_grad():
            alone = bert.model(**enc).seq_relationship_logits[0]
        assert torch.allclose(batch[i], alone, atol=1e-5)
    probs = so.head_probs(bert, pairs)
    assert all(abs(p0 + p1 - 1) < 1e-6 for p0, p1 in probs)


def test_pairs_go_through_in_chunks_of_similar_length_with_the_logits_of_one_padded_batch(models):
    bert = models["bert-nsp"]
    sample = so.generate_pairs(so.load_stories(), 14, so.DEFAULTS.pool_seed)  # 42 pairs: more than one chunk
    pairs = tuple((p.a, p.b) for p in sample)
    assert len(pairs) > so.CHUNK
    inputs = so.encode_pairs(bert.tokenizer, pairs, so.DEFAULTS.max_tokens, "cpu")
    lengths = inputs["attention_mask"].sum(1)
    chunks = list(so.in_length_order(inputs, so.CHUNK, right_padded=True))
    rows = torch.cat([r for r, _ in chunks])
    assert sorted(rows.tolist()) == list(range(len(pairs)))  # every pair once
    for r, chunk in chunks:  # cut to its longest row, nothing of it lost
        assert chunk["input_ids"].shape == (len(r), int(lengths[r].max()))
        assert int(chunk["attention_mask"].sum()) == int(lengths[r].sum())
    assert chunks[0][1]["input_ids"].shape[1] > chunks[-1][1]["input_ids"].shape[1]  # longest first
    left = list(so.in_length_order(inputs, so.CHUNK, right_padded=False))  # left padding: never cut
    assert {c["input_ids"].shape[1] for _, c in left} == {inputs["input_ids"].shape[1]}
    with torch.no_grad():
        whole = bert.model(**inputs).seq_relationship_logits  # BertForPreTraining's own, one padded batch
    assert torch.allclose(so.sentence_logits(bert, pairs), whole, atol=1e-5)


@pytest.mark.slow  # scores the pair pools (10-60 s)
def test_a_checkpoint_without_a_sentence_head_is_left_out_with_a_note(models, tmp_path):
    from transformers import AlbertConfig, AlbertForMaskedLM, AutoTokenizer

    from app.models.loading import Loaded

    folder = tmp_path / "albert-mlm-only"
    AlbertForMaskedLM(AlbertConfig.from_pretrained(ASSETS / "albert")).save_pretrained(folder)
    tok = AutoTokenizer.from_pretrained(ASSETS / "albert")
    mlm_only = Loaded(
        catalogue.get("albert"),
        AlbertForMaskedLM.from_pretrained(folder).eval(),
        tok,
        "bundled",
        str(folder),
        "cpu",
        "float32",
        0.0,
    )
    assert so.sop_head_weights(folder) is None and so.head_probs(mlm_only, (("a b.", "c d."),)) is None
    r = so.run({"albert": mlm_only, "bert-nsp": models["bert-nsp"]}, so.Inputs())
    assert [h.key for h in r.heads] == ["bert-nsp"] and any("ships no sentence head" in n.text for n in r.notes)
    with pytest.raises(Stop, match="NSP head .BERT. is not available.*ships no sentence head") as stop:
        so.run({"albert": mlm_only, "bert-nsp": "there is no bundled checkpoint"}, so.Inputs())
    assert "python -m app.training --recipe bert-nsp" in str(stop.value)


@pytest.mark.slow  # scores the pair pools (10-60 s)
def test_the_bundled_albert_is_scored_exactly_when_it_ships_its_sop_head(bundled):
    albert = bundled("albert")
    has_head = so.sop_head_weights(Path(albert.location)) is not None
    r = so.run({"albert": albert, "bert-nsp": "not loaded in this test"}, so.Inputs()) if has_head else None
    if has_head:
        assert [h.key for h in r.heads] == ["albert"]
    else:
        with pytest.raises(Stop):
            so.run({"albert": albert, "bert-nsp": "not loaded in this test"}, so.Inputs())


# ----------------------------------------------------------------------------- the lesson's run


@pytest.mark.slow  # scores the pair pools (40 s)
def test_run_scores_both_orders_and_the_generated_pairs_with_each_head(models):
    r = so.run(models, so.Inputs(seed=2, examples=4))
    assert [h.key for h in r.heads] == ["albert", "bert-nsp"] and [h.says for h in r.heads] == ["swapped", "not next"]
    for h in r.heads:
        expected = so.head_probs(models[h.key], ((so.DEFAULT_A, so.DEFAULT_B), (so.DEFAULT_B, so.DEFAULT_A)))
        assert r.user[h.key] == (expected[0], expected[1])
        assert r.pieces[h.key][0] in ("[CLS]",) and r.pieces[h.key].count("[SEP]") == 2
        for task in ("nsp", "sop"):
            assert 0.0 <= r.accuracy[h.key][task] <= 1.0
    bases = so.shown_bases(2, 4)
    assert len(r.examples) == 3 * 4 and [s.pair.base for s in r.examples[::3]] == bases and len(set(bases)) == 4
    sample = so.generate_pairs(so.load_stories(), so.DEFAULTS.sample_pairs, so.DEFAULTS.pool_seed)
    assert [s.pair for s in r.examples] == [p for b in bases for p in sample[3 * b : 3 * b + 3]]
    assert so.shown_bases(2, 4) == bases and so.shown_bases(3, 4) != bases and so.shown_bases(0, 3) == [0, 1, 2]
    p_not = [p1 for _, p1 in so.head_probs(models["albert"], tuple((p.a, p.b) for p in sample))]
    expected_acc = sum((p > 0.5) == bool(q.label) for p, q in zip(p_not, sample) if q.kind in ("in order", "swapped"))
    assert r.accuracy["albert"]["sop"] == pytest.approx(expected_acc / (2 * so.DEFAULTS.sample_pairs))
    assert r.mean_shared["in order"] == r.mean_shared["swapped"]  # the same two segments: the same words
    assert r.notes == ()


def test_heads_of_the_real_size_score_the_first_base_pairs_of_the_same_pool_and_say_so(models, monkeypatch):
    class Big:  # parameters() as a base-size checkpoint has them, without the memory
        model = torch.nn.Linear(1, 1)
        model.parameters = lambda: iter([torch.empty(so.DEFAULTS.large_params + 1, device="meta")])

    assert so.pool_size([models["albert"], models["bert-nsp"]]) == so.DEFAULTS.sample_pairs
    assert so.pool_size([models["albert"], Big]) == so.DEFAULTS.large_pairs
    assert so.shown_bases(5, 3, pool=12) == so.shown_bases(5, 3, pool=12) and max(so.shown_bases(5, 3, pool=12)) < 12
    monkeypatch.setattr(so, "pool_size", lambda heads: so.DEFAULTS.large_pairs)
    r = so.run(models, so.Inputs(seed=5, examples=3))
    n = so.DEFAULTS.large_pairs
    assert r.n_pairs == n and all(s.pair.base < n for s in r.examples)
    sample = so.generate_pairs(so.load_stories(), so.DEFAULTS.sample_pairs, so.DEFAULTS.pool_seed)[: 3 * n]
    p_not = [p1 for _, p1 in so.head_probs(models["albert"], tuple((p.a, p.b) for p in sample))]
    expected = sum((p > 0.5) == bool(q.label) for p, q in zip(p_not, sample) if q.kind in ("in order", "swapped"))
    assert r.accuracy["albert"]["sop"] == pytest.approx(expected / (2 * n))
    assert any(f"score {n} of the {so.DEFAULTS.sample_pairs} story pairs" in note.text for note in r.notes)


@pytest.mark.slow  # scores the pair pools (10-60 s)
def test_typing_rescores_only_your_pair_and_the_slider_and_seed_rescore_nothing(models):
    cache = CountingCache()
    so.run(models, so.Inputs(), cache)
    assert cache.calls.count("head_probs") == 4  # (your pair, the sample) × two heads
    so.run(models, so.Inputs(examples=9), cache)
    assert cache.calls.count("head_probs") == 4
    so.run(models, so.Inputs(text_b="The ball was red."), cache)
    assert cache.calls.count("head_probs") == 6
    so.run(models, so.Inputs(seed=1), cache)  # another seed shows other pairs of the same scored pool
    assert cache.calls.count("head_probs") == 6


@pytest.mark.parametrize("a, b", [("", so.DEFAULT_B), (so.DEFAULT_A, "  \n\t ")])
def test_an_empty_sentence_stops_with_a_message(models, a, b):
    with pytest.raises(Stop, match="Type two sentences"):
        so.run(models, so.Inputs(text=a, text_b=b))


@pytest.mark.slow  # scores the pair pools (10-60 s)
def test_unknown_characters_and_a_long_pair_get_notes(models):
    r = so.run(models, so.Inputs(text="The cat 😀 sat. 你好", text_b="مرحبا friend."))
    assert any("Sentence A" in n.text for n in r.notes) and any("Sentence B" in n.text for n in r.notes)
    long = " ".join(["The dog ran to the big tree and sat down."] * 10)
    r = so.run(models, so.Inputs(text=long))
    cut = [n for n in r.notes if n.level == "warning"]
    assert len(cut) == 2 and all(str(so.DEFAULTS.max_tokens) in n.text for n in cut)
    assert all(len(p) == so.DEFAULTS.max_tokens for p in r.pieces.values())


@pytest.mark.slow  # scores the pair pools (10-60 s)
def test_a_head_that_cannot_be_loaded_is_a_note_and_the_other_goes_on(models):
    r = so.run({"albert": models["albert"], "bert-nsp": "there is no bundled checkpoint at /x"}, so.Inputs())
    assert [h.key for h in r.heads] == ["albert"]
    assert any("NSP head" in n.text and "`there is no bundled checkpoint at /x`" in n.text for n in r.notes)


def test_the_nsp_stand_in_is_in_the_catalogue_but_not_a_masked_lm():
    from app.core.preload import TRANSFORMERS_NAMES

    v = catalogue.get("bert-nsp")
    assert v.family == "bert" and v.role == "nsp" and v.model_class == "BertForPreTraining"
    assert v.hub_id == "google-bert/bert-base-uncased" and v.bundled == "bert-nsp"
    assert not v.is_masked_lm and "bert-nsp" not in catalogue.MASKED_LMS
    assert v.model_class in TRANSFORMERS_NAMES


# ----------------------------------------------------------------------------- figures


@pytest.mark.slow  # scores the pair pools (10-60 s)
def test_figures_show_each_heads_probabilities(models):
    r = so.run(models, so.Inputs())
    heads = [(h.key, h.objective, h.name) for h in r.heads]
    fig = figures.order_figure(heads, r.user)
    fig.to_dict()
    assert [list(t.y) for t in fig.data] == [[r.user[k][0][1], r.user[k][1][1]] for k, _, _ in heads]
    kinds = figures.kinds_figure(r)
    assert list(kinds.data[1].y) == [r.mean_not["bert-nsp"][k] for k in so.KINDS]
    assert list(kinds.data[0].x) == [
        "in order<br>(A, B)",
        "B from another story<br>(NSP&#39;s negative)",
        "swapped (B, A):<br>SOP&#39;s negative",
    ]  # two lines, upright: none is cut
    acc = figures.accuracy_figure(r)
    assert [list(row) for row in acc.data[0].z] == [[r.accuracy[k]["nsp"], r.accuracy[k]["sop"]] for k, _, _ in heads]


def test_mcnemar_exact_matches_the_binomial_test_on_the_discordant_pairs():
    assert so.mcnemar_exact(22, 7) == pytest.approx(0.00813006, rel=1e-5)  # scipy.stats.binomtest(7, 29).pvalue
    assert so.mcnemar_exact(7, 22) == so.mcnemar_exact(22, 7)
    assert so.mcnemar_exact(5, 5) == 1.0 and so.mcnemar_exact(0, 0) == 1.0
    assert so.mcnemar_exact(10, 0) == pytest.approx(2 / 2**10)


def _heads_for_compare():
    return [
        so.Head("albert", "sop", "SOP head (ALBERT)", "swapped", "x"),
        so.Head("bert-nsp", "nsp", "NSP head (BERT)", "not next", "y"),
    ]


def test_the_head_comparison_says_ahead_only_when_the_paired_test_clears_its_threshold():
    """Table 5's comparison, computed: each task's own head against the other on the same pairs. Fed a result
    where the expected lead is absent (both heads right on the same pairs), it does not claim one; fed a lead
    the wrong way, it says so and that it is not the paper's pattern."""
    heads = _heads_for_compare()
    n = 120
    same = [i % 3 != 0 for i in range(n)]
    absent = {("albert", "sop"): same, ("bert-nsp", "sop"): same, ("albert", "nsp"): same, ("bert-nsp", "nsp"): same}
    lines = so.compare_heads(heads, absent)
    assert len(lines) == 2 and all("not told apart on 120 pairs" in line and "ahead" not in line for line in lines)
    assert "Of the 0 pairs where only one of them is right" in lines[0]
    lead = [True] * 100 + [False] * 20
    trail = [True] * 70 + [False] * 50
    wrong_way = {
        ("bert-nsp", "nsp"): lead,
        ("albert", "nsp"): trail,  # NSP: its own head leads, 30 to 0
        ("albert", "sop"): trail,
        ("bert-nsp", "sop"): lead,
    }  # SOP: the NSP head leads
    nsp_line, sop_line = so.compare_heads(heads, wrong_way)
    assert nsp_line.startswith(
        "On NSP, the NSP head (BERT) — the head trained on it — is right on 100 of 120 pairs, "
        "the SOP head (ALBERT) on 70."
    )
    assert "**the NSP head (BERT) is ahead**." in nsp_line and "not the paper's pattern" not in nsp_line
    assert "**the NSP head (BERT) is ahead** — not the paper's pattern" in sop_line
    assert "0 are the SOP head (ALBERT)'s" in sop_line
    assert so.compare_heads(heads[:1], wrong_way) == ()  # one head: nothing to compare


@pytest.mark.slow  # scores the pair pools (10-60 s)
def test_the_page_compares_the_two_heads_on_the_same_pairs(models):
    r = so.run(models, so.Inputs())
    comparison = [line for line in r.grid.lines if "exact McNemar test" in line]
    assert [line.split(",")[0] for line in comparison] == ["On NSP", "On SOP"]


def test_the_own_pair_caption_says_what_each_head_did_when_swapped_not_what_it_should():
    sop = so.Head("albert", "sop", "SOP head", "swapped", "bundled")
    nsp = so.Head("bert-nsp", "nsp", "NSP head", "not next", "bundled")
    story = so.pair_story(
        (sop, nsp),
        {
            "albert": ((0.11, 0.89), (0.81, 0.19)),  # a student's pair: 89% -> 19%
            "bert-nsp": ((0.7, 0.30), (0.68, 0.32)),
        },
    )
    assert "**SOP head**: P(swapped) 89% → 19% when swapped: down" in story
    assert "takes the swapped order for the original" in story and "goes up when" not in story
    assert "**NSP head**: P(not next) 30% → 32% when swapped: about the same both ways" in story
    up = so.pair_story((sop,), {"albert": ((0.8, 0.2), (0.1, 0.9))})
    assert "20% → 90% when swapped: up, as an order-aware head should go" in up
