"""app/span_boundary.py: SpanBERT's span-boundary objective — each masked span's boundary positions x_{s−1} and
x_{e+1}, and each of its tokens' relative position p_{i−s+1} (Joshi et al., 2020, §3.2)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app import masking, span_boundary as sbo
from tests.test_coverage import fake_sentence


def test_a_span_is_predicted_from_the_tokens_just_outside_it_and_a_position_counted_from_1():
    #               [CLS] a  b  c  d  e  [SEP]
    spans = sbo.boundary_spans([-1, -1, 0, 0, 0, -1, -1])
    assert len(spans) == 1
    s = spans[0]
    assert (s.number, s.start, s.end, s.left, s.right) == (1, 2, 4, 1, 5)
    assert s.positions == (2, 3, 4) and s.relative == (1, 2, 3) and len(s) == 3


def test_spans_come_in_order_of_position_and_touching_spans_are_two():
    spans = sbo.boundary_spans([-1, 1, 1, 0, -1, 2, -1])
    assert [(s.start, s.end) for s in spans] == [(1, 2), (3, 3), (5, 5)]
    assert [s.number for s in spans] == [1, 2, 3]
    assert spans[0].right == spans[1].start and spans[1].left == spans[0].end  # a boundary inside the other span


def test_a_span_at_the_edge_has_no_boundary_there_and_no_span_gives_nothing():
    spans = sbo.boundary_spans([0, 0, -1, 1])
    assert spans[0].left is None and spans[0].right == 2
    assert spans[1].left == 2 and spans[1].right is None
    assert sbo.boundary_spans([-1, -1]) == () and sbo.boundary_spans([]) == ()


def test_an_index_whose_tokens_are_not_consecutive_is_one_span_per_run():
    spans = sbo.boundary_spans([-1, 0, -1, 0, -1])
    assert [(s.start, s.end, s.left, s.right) for s in spans] == [(1, 1, 0, 2), (3, 3, 2, 4)]


@settings(deadline=None, max_examples=60)
@given(
    pieces=st.lists(st.integers(1, 3), min_size=1, max_size=30), p=st.floats(0.1, 0.9), seed=st.integers(0, 2**31 - 1)
)
def test_every_target_of_span_masking_is_in_exactly_one_span_with_its_boundaries_outside(pieces, p, seed):
    sentence = fake_sentence(pieces)
    span_ids, _ = masking.place_spans(list(sentence.word_of), p, 0.2, 10, masking.generator(seed))
    ids = span_ids.tolist()
    spans = sbo.boundary_spans(ids)
    covered = [i for s in spans for i in s.positions]
    assert sorted(covered) == [i for i, v in enumerate(ids) if v >= 0] and len(covered) == len(set(covered))
    for s in spans:
        assert all(ids[i] == ids[s.start] for i in s.positions)
        assert s.left == s.start - 1 and s.right == s.end + 1  # [CLS] and [SEP] keep both inside the sequence
        assert ids[s.left] != ids[s.start] and ids[s.right] != ids[s.start]  # a boundary is never the span's own
        assert s.relative == tuple(range(1, len(s) + 1))
        assert sentence.special[s.left] or sentence.word_of[s.left] != sentence.word_of[s.start]  # words stay whole
