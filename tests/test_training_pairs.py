"""The NSP stand-in's training pairs (app/training/pairs.py, short segments): drawn the way the NSP vs SOP lesson
draws its pool, cut the way its tokenizer call cuts, with BertForPreTraining's label convention. No training here."""

from __future__ import annotations

import importlib

import pytest
import torch

from app.models import catalogue
from app.training import data, pairs


def _stories():
    # story s, sentence i: tokens 1000*s + 10*i + (0, 1, 2) — every token says where it came from
    return [[[1000 * s + 10 * i + t for t in range(3)] for i in range(2 + s % 5)] for s in range(1, 30)]


def _where(tokens):
    return {(t // 1000, (t % 1000) // 10) for t in tokens}


def test_a_and_b_are_consecutive_segments_of_one_story_and_c_is_from_another():
    triples = pairs.segment_triples(_stories(), 300, torch.Generator().manual_seed(0), max_sentences=3)
    lengths = set()
    for a, b, c in triples:
        wa, wb, wc = _where(a), _where(b), _where(c)
        (sa,), (sb,), (sc,) = {s for s, _ in wa}, {s for s, _ in wb}, {s for s, _ in wc}
        assert sa == sb != sc
        ia, ib = sorted(i for _, i in wa), sorted(i for _, i in wb)
        assert ia == list(range(ia[0], ia[-1] + 1)) and ib == list(range(ia[-1] + 1, ia[-1] + 1 + len(ia)))
        assert len(wc) <= len(wa)
        lengths.add(len(ia))
    assert lengths == {1, 2, 3}  # 1..max_sentences sentences a segment


def test_other_from_keeps_c_off_the_other_storys_opening_and_changes_nothing_else():
    """The bert-nsp recipe's negatives: a true B never opens a story, so a NotNext C that does would give the answer
    away without the topic. other_from=1 starts C at the other story's 2nd sentence or later (where it has room);
    A, B, which story C comes from and its length are the same draws as without it."""
    stories = _stories()
    plain = pairs.segment_triples(stories, 300, torch.Generator().manual_seed(3))
    later = pairs.segment_triples(stories, 300, torch.Generator().manual_seed(3), other_from=1)
    assert any(min(i for _, i in _where(c)) == 0 for _, _, c in plain)
    for (a, b, c), (a2, b2, c2) in zip(plain, later):
        assert (a, b) == (a2, b2) and len(c) == len(c2)
        (sc,), (sc2,) = {s for s, _ in _where(c)}, {s for s, _ in _where(c2)}
        assert sc == sc2
        room = len(stories[sc - 1]) > len(_where(c))
        assert min(i for _, i in _where(c2)) >= 1 or not room


def test_placed_as_b_starts_c_where_a_true_b_of_as_many_sentences_could_and_changes_nothing_else():
    """The bert-nsp recipe's negatives: a true B of k sentences starts at its story's sentence k or later, so a C
    starts there too (where the other story has room), and an early, introducing segment in B's place is no cue."""
    stories = _stories()
    later = pairs.segment_triples(stories, 300, torch.Generator().manual_seed(3), other_from=1)
    placed = pairs.segment_triples(stories, 300, torch.Generator().manual_seed(3), other_from=1, placed_as_b=True)
    starts_b, starts_c = [], []
    for (a, b, c), (a2, b2, c2) in zip(later, placed):
        assert (a, b) == (a2, b2) and len(c) == len(c2)
        (sc,), (sc2,) = {s for s, _ in _where(c)}, {s for s, _ in _where(c2)}
        assert sc == sc2
        k, ko, n_other = len(_where(a)), len(_where(c2)), len(stories[sc2 - 1])
        start = min(i for _, i in _where(c2))
        assert start >= min(max(1, k), n_other - ko)  # from sentence k on, where the other story has room
        starts_b.append(min(i for _, i in _where(b)))
        starts_c.append(start)
    assert min(starts_b) >= 1 and any(min(i for _, i in _where(c)) < len(_where(a)) for a, _, c in later)


def test_min_sentences_draws_segments_of_that_many_sentences_or_more_where_the_story_has_room():
    stories = _stories()
    triples = pairs.segment_triples(stories, 300, torch.Generator().manual_seed(1), max_sentences=3, min_sentences=2)
    lengths = {}
    for a, _, _ in triples:
        (s,), k = {s for s, _ in _where(a)}, len(_where(a))
        lengths.setdefault(k, set()).add(len(stories[s - 1]))
    assert set(lengths) == {1, 2, 3}
    assert lengths[1] <= {2, 3}  # one sentence only where the story has fewer than 4


def test_whole_stories_follow_the_files_story_ends_or_its_openings(tmp_path):
    """Training file: a single newline ends a story, blank lines separate its paragraphs. Validation file: blank
    lines everywhere, so stories are grouped at openings that only ever start one, and a group too long to be
    one story is dropped."""
    marked = tmp_path / "train.txt"
    marked.write_text(
        "One day, Tom ran.\n\nHe fell. He cried.\nOnce upon a time, Sue sang.\n\nShe smiled.\n"
        "Ann had a cat.\n\nThe cat ran.\n",
        encoding="utf-8",
    )
    assert data.read_whole_stories(marked) == [
        "One day, Tom ran. He fell. He cried.",
        "Once upon a time, Sue sang. She smiled.",
        "Ann had a cat. The cat ran.",
    ]
    unmarked = tmp_path / "valid.txt"
    unmarked.write_text(
        "He fell at the end.\n\nOnce upon a time, Sue sang.\n\nShe smiled.\n\n"
        "Once there was a dog. " + "It ran. " * 150 + "\n\nThe dog slept.\n\n"
        "Once, a cat sat.\n\nOne day, the cat ran.\n",
        encoding="utf-8",
    )
    assert data.read_whole_stories(unmarked) == [  # the file's first group starts mid-story; the dog's is too long
        "Once upon a time, Sue sang. She smiled.",
        "Once, a cat sat. One day, the cat ran.",
    ]


def test_cutting_longest_first_matches_the_lessons_tokenizer_call(bundled):
    """The page encodes its pool with truncation="longest_first"; training pairs are cut the same way."""
    if not catalogue.get("bert").bundled_available():
        pytest.skip("no bundled BERT")
    tok = bundled("bert").tokenizer
    long_a = "The little girl found a red ball in the park and she played with it all day long until the sun went down."
    long_b = (
        "She picked it up and ran home to show her mom, who smiled and said it was the best ball she had ever seen."
    )
    short = "Tom was sad."
    for a, b in [
        (long_a, long_b),
        (long_b, long_a + " Then she slept."),
        (short, long_b),
        (long_a, short),
        (short, short),
    ]:
        ida, idb = (tok(x, add_special_tokens=False)["input_ids"] for x in (a, b))
        for seq_len in (64, 41, 40, 20, 9):
            p = pairs.encode_segment_pairs(tok, [(ida, idb, 1)], seq_len, "nsp")
            want = tok(a, b, truncation="longest_first", max_length=seq_len, padding="max_length", return_tensors="pt")
            assert torch.equal(p.seqs.input_ids, want["input_ids"]), (a, b, seq_len)
            assert torch.equal(p.seqs.token_type_ids, want["token_type_ids"]), (a, b, seq_len)
            assert p.labels.tolist() == [1]


def test_both_tasks_are_balanced_and_labelled_as_bert_for_pre_training_reads_them():
    triples = pairs.segment_triples(_stories(), 20, torch.Generator().manual_seed(1))

    class Tok:
        pad_token_id, cls_token_id, sep_token_id, all_special_ids = 0, 2, 3, [0, 1, 2, 3, 4]

    sets = pairs.segment_pairs(Tok, triples, 64)
    for task, p in sets.items():
        assert p.labels.tolist() == [0] * 20 + [1] * 20, task  # 0 = B continues A, 1 = it does not
        assert torch.equal(p.seqs.input_ids[:20], sets["nsp"].seqs.input_ids[:20])  # the same in-order pairs
    a, b, c = triples[0]
    row = sets["sop"].seqs.input_ids[20].tolist()
    assert row[: 2 + len(b) + len(a) + 1] == [2] + b + [3] + a + [3]  # swapped: (B, A)
    row = sets["nsp"].seqs.input_ids[20].tolist()
    assert row[: 2 + len(a) + len(c) + 1] == [2] + a + [3] + c + [3]  # another story's segment


def test_the_bert_nsp_recipe_is_found_by_its_name_and_starts_from_the_bert_stand_in():
    from app.training import __main__ as cli

    assert "bert-nsp" in cli.RECIPES and cli.RECIPES.index("bert-nsp") > cli.RECIPES.index("bert")
    module = importlib.import_module("app.training.bert_nsp")
    from app.lessons import sentence_order as so

    assert module.LOOP.seq_len == so.DEFAULTS.max_tokens  # the page reads as many tokens of a pair as it trained on
    assert (module.RECIPE.min_sentences, module.RECIPE.max_sentences) == so.DEFAULTS.segment_sentences


def test_the_reports_nsp_row_shows_held_out_and_pool_accuracy_and_the_floor():
    from app.training import report

    curves = {
        "steps_done": 9000,
        "train_seconds": 2040.0,
        "starts_from": "the BERT stand-in",
        "final": {"nsp_accuracy": 0.91, "sop_accuracy": 0.53, "held_out_pairs": 4000},
    }
    row = report.rows(
        {
            "bert-nsp": {
                "params": 2.67e6,
                "curves": curves,
                "pool": {"nsp": 0.88, "sop": 0.5},
                "checks": [
                    ("held-out NSP accuracy", 0.91, report.NSP_FLOOR, True),
                    ("held-out SOP accuracy near chance", 0.53, report.SOP_NEAR_CHANCE, True),
                ],
            }
        }
    )
    (nsp,) = [r for r in row if r.startswith("| BERT (NSP head)")]
    assert "9000 steps · 34 min CPU, from the BERT stand-in" in nsp
    assert "NSP accuracy 0.91 · SOP accuracy 0.53 (the head, 4000 held-out pairs a task)" in nsp
    assert "pool (120 pairs a task), measured now: NSP 0.88 · SOP 0.50" in nsp
    assert nsp.endswith(
        "| held-out NSP accuracy 0.910 (≥ 0.85); held-out SOP accuracy near chance 0.530 (0.5 ± 0.10) | yes |"
    )


def test_where_tells_each_draws_place_in_its_story_and_changes_no_draw():
    stories, where = _stories(), []
    plain = pairs.segment_triples(stories, 200, torch.Generator().manual_seed(4), 3, 1, 2)
    told = pairs.segment_triples(stories, 200, torch.Generator().manual_seed(4), 3, 1, 2, where=where)
    assert plain == told and len(where) == 200
    for (a, b, _), (j, k, n) in zip(told, where):
        (s,) = {s for s, _ in _where(a)}
        assert min(i for _, i in _where(a)) == j and len(_where(a)) == len(_where(b)) == k
        assert n == len(stories[s - 1]) and j + 2 * k <= n


def test_sop_breakdown_splits_the_heads_answers_by_where_a_sits(bundled):
    """Where the bundled NSP head's SOP accuracy comes from (its report entry cites it): the rows are the head's
    'not next' rates on the same held-out draws, in order, swapped and with B from another story."""
    from transformers import AutoTokenizer, BertForPreTraining

    from app.training import bert_nsp

    path = catalogue.bundled_root() / catalogue.CATALOGUE["bert-nsp"].bundled
    tok = AutoTokenizer.from_pretrained(path)
    model = BertForPreTraining.from_pretrained(path).eval()
    text = [
        "Once upon a time there was a cat.",
        "The cat liked milk.",
        "One day it rained.",
        "The cat stayed in.",
        "It slept all day.",
        "The end.",
    ]
    stories = data.encode_sentences(tok, [" ".join(text), " ".join(text[::-1]), " ".join(text[1:])])
    rows = bert_nsp.sop_breakdown(model, tok, stories, bases=24)
    by = {r["pairs"]: r for r in rows}
    assert by["all pairs"]["n"] == 24
    assert by["A opens its story"]["n"] + by["A does not open its story"]["n"] == 24
    for r in rows:
        if r["n"]:
            assert r["sop_accuracy"] == pytest.approx((1 - r["not_next_in_order"] + r["not_next_swapped"]) / 2)
            assert 0 <= r["nsp_accuracy"] <= 1


def test_the_topic_baseline_finds_the_topic_and_cannot_read_order(bundled):
    """The order-blind topic detector the NSP head's card compares with: on stories whose topics share no content
    word it tells B from another story (NSP near 1), and it scores a swapped pair as it scores the pair in order
    (SOP exactly 0.5); on stories that share every word it has no topic to read (NSP near chance)."""
    from transformers import AutoTokenizer

    from app.training import bert_nsp

    tok = AutoTokenizer.from_pretrained(catalogue.bundled_root() / catalogue.CATALOGUE["bert"].bundled)
    topics = [
        ["cat", "milk", "sofa"],
        ["ship", "sea", "storm"],
        ["tree", "apple", "garden"],
        ["car", "road", "truck"],
        ["cake", "oven", "sugar"],
        ["ball", "park", "grass"],
    ]
    story = lambda w: " ".join(f"The {w[i % 3]} and the {w[(i + 1) % 3]} were here." for i in range(6))  # noqa: E731
    stories = data.encode_sentences(tok, [story(t) for t in topics])
    split = bert_nsp.topic_baseline(tok, stories, stories, bases=60, train_bases=300, words=50)
    assert split["pairs"] == 120 and split["nsp"] > 0.9 and split["sop"] == 0.5
    same = data.encode_sentences(tok, [story(topics[0])] * 6)
    assert bert_nsp.topic_baseline(tok, same, same, bases=60, train_bases=300, words=50)["nsp"] <= 0.6


def test_the_report_says_whether_any_checkpoint_had_nsp_at_its_floor_and_sop_near_chance():
    from app.training import report

    rising = {"valid_nsp_acc": [0.70, 0.86, 0.87], "valid_sop_acc": [0.52, 0.62, 0.64]}
    assert report._sop_with_nsp(rising) == (
        "; in training, SOP was 0.62–0.64 at the 2 evaluations where NSP was ≥ 0.85: no checkpoint had both"
    )
    assert report._sop_with_nsp({"valid_nsp_acc": [0.86, 0.9], "valid_sop_acc": [0.55, 0.7]}).endswith(
        "1 of them had both"
    )
    assert report._sop_with_nsp({"valid_nsp_acc": [0.6], "valid_sop_acc": [0.5]}) == ""


@pytest.mark.slow  # trains
def test_albert_stage_two_starts_from_stage_one_keeps_it_and_refuses_to_stack(tmp_path, bundled):
    """--recipe albert-sop: two steps on a tiny corpus from a copy of the bundled ALBERT. It keeps the stage-1
    checkpoint it started from (a rerun starts there again), writes both stages into the card and curves.json,
    and refuses to start from a folder that already holds stage 2."""
    import json
    import shutil

    from app.training import albert_sop, common

    src = catalogue.bundled_root() / catalogue.CATALOGUE["albert"].bundled
    out, work = tmp_path / "models", tmp_path / "work"
    shutil.copytree(src, out / "albert")
    if json.loads((out / "albert" / "curves.json").read_text()).get("stage2"):  # the bundled one is stage 2
        stage1 = json.loads((out / "albert" / "curves.json").read_text())
        stage1.pop("stage2")
        (out / "albert" / "curves.json").write_text(json.dumps({**stage1, **(stage1.get("stage1") or {})}))
    story = (
        "Once upon a time there was a cat. The cat liked milk. One day it rained. The cat stayed in. "
        "It slept all day. Then the sun came out. The cat went to play."
    )
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("tinystories_train.txt", "tinystories_valid.txt"):
        (corpus / name).write_text("\n".join([story, story.replace("cat", "dog"), story.replace("milk", "fish")]))
    cfg = common.LoopConfig(steps=2, batch_size=4, seq_len=96, lr=1e-4, warmup=1, eval_every=2)
    albert_sop.run(corpus, out, work, cfg, recipe=albert_sop.Recipe(eval_bases=4, final_bases=8))
    curves = json.loads((out / "albert" / "curves.json").read_text())
    assert curves["stage2"] == albert_sop.STAGE and curves["steps_done"] == 2
    assert curves["stage1"]["steps_done"] and (work / "albert-sop" / "start" / "config.json").exists()
    f = curves["final"]
    assert (
        f["held_out_pairs"] == 16
        and 0 <= f["segment_sop_accuracy"] <= 1
        and f["sop_accuracy"] == f["segment_sop_accuracy"]
    )
    card = (out / "albert" / "README.md").read_text()
    assert "**Stage 1** (`--recipe albert`" in card and "**Stage 2** (`--recipe albert-sop`" in card
    shutil.rmtree(work)
    with pytest.raises(SystemExit, match="already holds stage 2"):
        albert_sop.run(corpus, out, work, cfg, recipe=albert_sop.Recipe(eval_bases=4, final_bases=8))
