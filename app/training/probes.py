"""Linear probes on frozen features: how much a pre-trained encoder already knows about a task, asked the
same way of every model (no fine-tuning, so the probe measures the representation, not the training).

- :func:`logistic_probe`: L2-regularised logistic regression on standardised features, fitted on one
  held-out set and scored on another (full-batch L-BFGS in float64, deterministic).
- :func:`acceptability_pairs`: a CoLA-like task on held-out text that every encoder can take: a sentence
  as written (label 1, acceptable) or the same sentence with two adjacent words swapped (label 0).
  Both versions of each sentence are in the data, so content alone never gives the answer; the
  probe's train and test sentences are different sentences.
- :func:`mean_pooled`: the usual features, the last layer's hidden states averaged over the real
  (non-padding) tokens; :func:`features` runs any ``encode`` function over a set of sequences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from app.training import data


def logistic_probe(
    train_x: torch.Tensor,
    train_y: torch.Tensor,
    test_x: torch.Tensor,
    test_y: torch.Tensor,
    l2: float = 1e-2,
    max_iter: int = 100,
) -> dict[str, float]:
    """Fit p(y=1|x) = sigmoid(w·z + b) on (train_x (N, D), train_y (N,) in {0, 1}), z the features
    standardised with the training mean and spread; return accuracy on the test set (and on train)."""
    x = train_x.double()
    mean, std = x.mean(0), x.std(0).clamp_min(1e-6)
    z = (x - mean) / std  # (N, D)
    zt = (test_x.double() - mean) / std
    y = train_y.double()
    w = torch.zeros(z.shape[1] + 1, dtype=torch.double, requires_grad=True)
    opt = torch.optim.LBFGS([w], lr=1.0, max_iter=max_iter, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        logits = z @ w[:-1] + w[-1]
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y) + 0.5 * l2 * (w[:-1] ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        acc = float((((zt @ w[:-1] + w[-1]) > 0).long() == test_y).double().mean())
        train_acc = float((((z @ w[:-1] + w[-1]) > 0).long() == train_y).double().mean())
    return {"accuracy": acc, "train_accuracy": train_acc}


def mean_pooled(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Average of the hidden states over real tokens. hidden (B, T, H), attention_mask (B, T) -> (B, H)"""
    m = attention_mask.to(hidden.dtype).unsqueeze(-1)  # (B, T, 1)
    return (hidden * m).sum(1) / m.sum(1).clamp_min(1.0)


@torch.no_grad()
def features(
    encode: Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor],
    seqs: data.Sequences,
    batch_size: int = 256,
    device: str = "cpu",
) -> torch.Tensor:
    """``encode(ids, attention_mask, token_type_ids)`` -> (B, D) features, over ``seqs`` in batches -> (N, D)
    float32 on the CPU."""
    out = []
    for s in range(0, len(seqs), batch_size):
        part = slice(s, s + batch_size)
        types = None if seqs.token_type_ids is None else seqs.token_type_ids[part].to(device)
        out.append(encode(seqs.input_ids[part].to(device), seqs.attention_mask[part].to(device), types).float().cpu())
    return torch.cat(out) if out else torch.zeros(0, 0)


# ----------------------------------------------------------------------------- the acceptability task


def swap_adjacent(sentence: str, u: float) -> str | None:
    """The sentence with two adjacent words swapped, at the position chosen by u in [0, 1): only two
    purely alphabetic words that differ (ignoring case) are swapped; None when there is no such pair."""
    words = sentence.split()
    spots = [
        i
        for i in range(len(words) - 1)
        if words[i].isalpha() and words[i + 1].isalpha() and words[i].lower() != words[i + 1].lower()
    ]
    if not spots:
        return None
    i = spots[min(int(u * len(spots)), len(spots) - 1)]
    words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


@dataclass
class ProbeSet:
    """A binary task as model inputs: train and test sequences (N, T) with labels (N,)."""

    train: data.Sequences
    train_y: torch.Tensor
    test: data.Sequences
    test_y: torch.Tensor


def acceptability_pairs(
    tokenizer,
    stories: list[str],
    seq_len: int,
    n_train: int,
    n_test: int,
    seed: int = 0,
    min_words: int = 5,
    max_words: int = 16,
) -> ProbeSet:
    """Sentences of ``min_words``-``max_words`` words from ``stories`` (held-out text), in a seeded order;
    the first ``n_train`` (that have a swappable pair) make the probe's training set, the next ``n_test``
    its test set. Each sentence gives two examples: as written (1) and with two adjacent words swapped (0).
    Fewer sentences are used when the text has fewer."""
    sentences = [
        s for story in stories for s in data.split_sentences(story) if min_words <= len(s.split()) <= max_words
    ]
    gen = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(sentences), generator=gen).tolist()
    u = torch.rand(len(sentences), generator=gen).tolist()
    chosen: list[tuple[str, str]] = []
    for i in order:
        swapped = swap_adjacent(sentences[i], u[i])
        if swapped is not None:
            chosen.append((sentences[i], swapped))
        if len(chosen) == n_train + n_test:
            break
    n_train = min(n_train, len(chosen) // 2) if len(chosen) < n_train + n_test else n_train

    def encode(rows: list[tuple[str, str]]) -> tuple[data.Sequences, torch.Tensor]:
        texts = [t for pair in rows for t in pair]  # original, swapped, original, swapped, ...
        labels = torch.tensor([1, 0] * len(rows), dtype=torch.long)
        enc = tokenizer(texts, add_special_tokens=False)["input_ids"]
        chunks = [[ids] for ids in enc]
        return data.single_segment(tokenizer, chunks, seq_len), labels

    train, train_y = encode(chosen[:n_train])
    test, test_y = encode(chosen[n_train:])
    return ProbeSet(train, train_y, test, test_y)


def probe(encode, probe_set: ProbeSet, device: str = "cpu") -> dict[str, float]:
    """Features of both sets from ``encode`` (see :func:`features`), then :func:`logistic_probe`."""
    return logistic_probe(
        features(encode, probe_set.train, device=device),
        probe_set.train_y,
        features(encode, probe_set.test, device=device),
        probe_set.test_y,
    )
