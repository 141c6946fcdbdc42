"""SpanBERT's span-boundary objective (SBO): what predicts each token of a masked span.

SpanBERT (Joshi et al., 2020, §3.2) adds a second loss to masked LM. For a masked span x_s … x_e (token positions
s to e, inclusive), every token x_i of it is also predicted from only three things:

- the encoder's output at the **left boundary** x_{s−1}, the token just before the span,
- its output at the **right boundary** x_{e+1}, the token just after it,
- a **relative position** embedding p_{i−s+1}: where x_i sits in the span, counted from the left boundary
  (1 for the span's first token).

    h₀ = [x_{s−1}; x_{e+1}; p_{i−s+1}]
    h₁ = LayerNorm(GeLU(W₁ h₀))
    y_i = LayerNorm(GeLU(W₂ h₁))          (a 2-layer feed-forward network)

and y_i scores the vocabulary like the MLM head does; the loss of x_i is L_MLM(x_i) + L_SBO(x_i). The boundary
outputs must thus carry what the whole span holds — the tokens inside it are not used for this prediction —, which
is what span-selection tasks (question answering, coreference) read off them.

This module is the rule only: which positions are a span's boundaries and each token's relative position, from the
span index of every token (app/masking.py ``place_spans``: −1 where a token is not a target). Positions count from
0, as in the lab; a boundary off the sequence (a span at its very start or end, which a tokenizer's special tokens
normally prevent) is None. Pure Python: no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

PAPER = "SpanBERT (Joshi et al., 2020), §3.2"
HEAD = "h₀ = [x_{s−1}; x_{e+1}; p_{i−s+1}], h₁ = LayerNorm(GeLU(W₁h₀)), y_i = LayerNorm(GeLU(W₂h₁))"


@dataclass(frozen=True)
class BoundarySpan:
    """One masked span and what SBO predicts its tokens from."""

    number: int  # 1, 2, …: the spans in order of position
    start: int  # s, the span's first token position
    end: int  # e, its last (inclusive)
    left: int | None  # s − 1, the left boundary token's position (None: off the sequence)
    right: int | None  # e + 1, the right boundary's (None: off the sequence)

    @property
    def positions(self) -> tuple[int, ...]:
        """The span's token positions s … e: what SBO predicts, one token at a time."""
        return tuple(range(self.start, self.end + 1))

    @property
    def relative(self) -> tuple[int, ...]:
        """Each token's relative position i − s + 1 (1 for the first): the index of its position embedding."""
        return tuple(i - self.start + 1 for i in self.positions)

    def __len__(self) -> int:
        return self.end - self.start + 1


def boundary_spans(span_ids: Sequence[int]) -> tuple[BoundarySpan, ...]:
    """The masked spans of one sequence, in order of position, from each token's span index (−1: not a target).

    A span is a run of consecutive positions with the same index; an index whose tokens are not consecutive (which
    app/masking.py never places) gives one span per run, since SBO's boundaries are those of a contiguous run."""
    out: list[BoundarySpan] = []
    n = len(span_ids)
    i = 0
    while i < n:
        sid = span_ids[i]
        if sid is None or sid < 0:
            i += 1
            continue
        j = i
        while j + 1 < n and span_ids[j + 1] == sid:
            j += 1
        out.append(BoundarySpan(len(out) + 1, i, j, i - 1 if i > 0 else None, j + 1 if j + 1 < n else None))
        i = j + 1
    return tuple(out)
