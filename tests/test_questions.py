"""Ask the class (issue 50): each lesson's question is made from its own Result — its prompt, choices and held-back
answer checked against the computation they come from — and the reveal's histogram and sentence from a tally."""

from __future__ import annotations

import importlib

import pytest

from app.classroom import question as q
from app.classroom.question import Question

SLUGS = ("masking", "compare", "electra", "xlnet", "albert_params", "distillation", "sentence_order")


@pytest.fixture(scope="module")
def asked(default_result):
    """slug -> (Result on the lesson's defaults with the bundled models, its Question). The Results are the
    session's (tests/conftest.py ``default_result``): other tests read the same default views."""
    out = {}
    for slug in SLUGS:
        lesson = importlib.import_module(f"app.lessons.{slug}")
        result = default_result(slug)
        out[slug] = (result, lesson.question(result))
    return out


@pytest.mark.parametrize("slug", SLUGS)
def test_every_lesson_asks_a_question_a_phone_can_answer(asked, slug):
    result, question = asked[slug]
    assert isinstance(question, Question) and question.lesson == slug
    public = question.public()
    assert "answer" not in public and "model" not in public  # held back until the reveal
    assert question.answer and all(a in question.choices for a in question.answer) or question.kind == "word"
    for choice in question.choices:
        assert q.normalise(public, choice) == choice
    assert q.normalise(public, "<script>alert(1)</script>") is None


def test_side_by_side_asks_for_the_blank_every_variant_guessed(asked):
    result, question = asked["compare"]
    assert result.words[result.word] in question.choices and 2 <= len(question.choices) <= 4
    for g in result.guesses:
        if g.prediction.pieces and not g.prediction.unknown:
            assert g.label in question.explain
    assert question.answer == (q.reads(result.guesses[0].prediction.first.words[0]).strip(),)


def test_masking_asks_for_the_blank_with_the_models_own_guesses(asked):
    result, question = asked["masking"]
    blank = next(b for b in result.predictions if b.kind == q_masked())
    model = dict(question.model)
    assert q.reads(blank.original) in question.choices
    assert question.answer == (q.reads(blank.guesses.words[0]),)
    assert model[question.answer[0]] == pytest.approx(blank.guesses.probabilities[0])
    assert list(question.choices) == sorted(question.choices, key=str.lower)  # the order gives nothing away
    assert question.prompt.count("____") == 1


def q_masked():
    from app.masking import MASKED

    return MASKED


def test_electras_answer_is_what_the_generator_replaced_and_its_model_the_discriminator(asked):
    result, question = asked["electra"]
    r = result.round
    keep = [i for i, s in enumerate(r.special) if not s]
    labels = q.unique_labels(r.corrupted[i] for i in keep)
    assert set(question.answer) == ({lab for lab, i in zip(labels, keep) if r.labels[i]} or {"none"})
    assert dict(question.model) == {lab: pytest.approx(r.scores[i]) for lab, i in zip(labels, keep)}


def test_xlnets_answer_is_its_query_streams_row_of_perm_mask(asked):
    result, question = asked["xlnet"]
    target = int(question.prompt.split("position ")[1].split(" ")[0])
    row = result.masks.perm_mask[target]
    n = result.pieces.n_content
    visible = [j for j in range(n) if float(row[j]) == 0.0]
    assert target not in visible  # never itself
    assert len(question.answer) == len(visible) or question.answer == ("none",)
    order = list(result.masks.order)
    assert all(order.index(j) < order.index(target) for j in visible)


def test_albert_asks_for_the_saving_computed_from_v_and_h(asked):
    result, question = asked["albert_params"]
    v, h, e = result.arch.vocab_size, result.arch.hidden_size, 128
    saved = v * h - (v * e + e * h + h)
    assert question.answer == (f"{saved / 1e6:.1f} M",) and len(set(question.choices)) == 4
    assert f"{saved:,}" in question.explain


def test_distillation_asks_for_the_temperature_of_the_largest_soft_signal(asked):
    result, question = asked["distillation"]
    at = {t: k for t, k in zip(result.sweep["temperature"], result.sweep["kl_term"]) if t in (1, 2, 4, 8)}
    assert question.answer == (f"T = {max(at, key=at.get):g}",)


def test_the_sentence_question_is_answered_by_how_the_pair_was_made_and_both_heads_speak(asked):
    result, question = asked["sentence_order"]
    pair = next(s for s in result.examples if f"A: {s.pair.a}" in question.prompt)
    assert question.answer == ("no" if pair.pair.label else "yes",)
    assert all(h.name in question.explain for h in result.heads)
    assert dict(question.model)["no"] == pytest.approx(
        pair.p_not[next(h.key for h in result.heads if h.objective == "nsp")]
    )


# -- the reveal, from a tally ---------------------------------------------------------------------------------------

BALL = Question(
    "masking",
    "Which word goes in the blank?",
    "choice",
    ("ball", "kite", "toy"),
    ("ball",),
    (("ball", 0.44), ("toy", 0.30), ("kite", 0.01)),
)


def test_the_reveal_says_the_halls_share_and_the_models():
    shown = q.reveal(BALL, {"ball": 61, "toy": 30, "kite": 9})
    assert shown["answered"] == 100
    assert [r["label"] for r in shown["rows"]] == ["ball", "kite", "toy"]
    assert shown["sentence"].startswith("61% of you chose ball; the model put 44% on ball, 30% on toy.")


def test_a_multi_answer_counts_each_tapped_token():
    swap = Question(
        "electra",
        "Which?",
        "multi",
        ("the", "dog", "ran", "none"),
        ("dog",),
        (("the", 0.1), ("dog", 0.9), ("ran", 0.2)),
    )
    shown = q.reveal(swap, {"dog": 3, "the|dog": 1})
    rows = {r["label"]: r for r in shown["rows"]}
    assert rows["dog"]["count"] == 4 and rows["the"]["count"] == 1 and rows["dog"]["answer"]


def test_free_words_enter_the_histogram_only_in_the_models_vocabulary():
    word = Question("masking", "Which word?", "word", answer=("ball",), model=(("ball", 0.4),))
    shown = q.reveal(word, {"ball": 3, "zzkx": 2}, in_vocabulary=lambda w: w != "zzkx")
    assert [r["label"] for r in shown["rows"]] == ["ball"] and shown["left_out"] == 2
    assert "2 answers not in the model's vocabulary left out." in shown["sentence"]


def test_nobody_answering_is_said():
    assert q.reveal(BALL, {})["sentence"].startswith("Nobody answered; the model put 44% on ball")


@pytest.mark.parametrize(
    "value, expected",
    [
        ("Ball", "ball"),
        ("  BALL ", "ball"),
        ("ｂａｌｌ", "ball"),
        ("ball game", None),
        ("<b>", None),
        ("x" * 41, None),
        (5, None),
        (None, None),
        ("", None),
        ("don't", "don't"),
    ],
)
def test_a_free_word_is_normalised_or_refused(value, expected):
    word = Question("masking", "Which word?", "word")
    assert q.normalise(word, value) == expected


def test_a_multi_answer_is_one_set_in_the_choices_order():
    swap = Question("electra", "Which?", "multi", ("the", "dog", "ran", "none"))
    assert q.normalise(swap, "ran|the") == "the|ran"
    assert q.normalise(swap, "the|the") is None and q.normalise(swap, "cat") is None and q.normalise(swap, "") is None


def test_a_question_has_a_stable_id_and_round_trips():
    assert BALL.id == Question.from_dict(BALL.to_dict()).id and Question.from_dict(BALL.to_dict()) == BALL
    with pytest.raises(ValueError):
        Question("masking", "?", "choice", ("only one",))
