"""Two-segment inputs ``[CLS] A [SEP] B [SEP]`` for the sentence-level objectives, built the same way for
every objective so that only the negatives differ:

- ``none``: A and B are consecutive text, in order; there is no sentence-level label to learn
  (RoBERTa, which drops NSP; the inputs still have two segments so that the arms see the same format);
- ``nsp``: BERT's next-sentence prediction: half the pairs keep their true B (IsNext, label 0), the other
  half take B from a *different story* (NotNext, label 1) — solvable by noticing the topic changed;
- ``sop``: ALBERT's sentence-order prediction: half the pairs are swapped to ``B A`` (label 1) — same
  topic on both sides, so only the order (coherence) tells them apart.

Every objective draws the same cut points (A ends at a sentence boundary of a packed chunk) and the
same 50% choice of which pairs are negatives, from the same seed; labels follow
``BertForPreTraining``'s NSP convention, 0 = "B continues A", 1 = "it does not".

A random B never gets longer than the true B it replaces (it is cut to that length when longer), so
the sequence length is not a cue; it may be shorter when the other story's remainder is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from app.training import common, data

OBJECTIVES = ("none", "nsp", "sop")


@dataclass
class Pairs:
    """seqs: (N, T) with token_type_ids (0 for ``[CLS] A [SEP]``, 1 for ``B [SEP]``); labels: (N,) long,
    0 = B is A's continuation in order, 1 = B is from another story (nsp) or the two are swapped (sop);
    all 0 for ``none``."""

    seqs: data.Sequences
    labels: torch.Tensor
    objective: str

    def __len__(self) -> int:
        return len(self.labels)

    def subset(self, idx) -> "Pairs":
        return Pairs(self.seqs.subset(idx), self.labels[idx], self.objective)


def story_chunks(encoded_stories: list[list[list[int]]], content_len: int) -> list[list[list[list[int]]]]:
    """Per story, its packed chunks (each a list of sentences of ids), never crossing a story."""
    return [data.pack([story], content_len, cross_documents=False) for story in encoded_stories]


def _split(chunk: list[list[int]], u: float) -> tuple[list[int], list[int]]:
    """(A, B) of a chunk, cut at a sentence boundary chosen by u in [0, 1) (mid-chunk for one sentence)."""
    if len(chunk) >= 2:
        cut = 1 + min(int(u * (len(chunk) - 1)), len(chunk) - 2)
        return [t for s in chunk[:cut] for t in s], [t for s in chunk[cut:] for t in s]
    flat = chunk[0]
    cut = max(1, len(flat) // 2)
    return flat[:cut], flat[cut:]


def make_pairs(
    tokenizer, chunks_by_story: list[list[list[list[int]]]], seq_len: int, objective: str, seed: int
) -> Pairs:
    """One pair per chunk (chunks with fewer than two tokens are skipped). The cut points, the negatives
    and the other-story partners come from ``seed`` alone, whatever the objective."""
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
    flat = [(s, c) for s, chunks in enumerate(chunks_by_story) for c in chunks if sum(map(len, c)) >= 2]
    n = len(flat)
    gen = torch.Generator().manual_seed(seed)
    cuts = torch.rand(n, generator=gen).tolist()
    negative = (torch.rand(n, generator=gen) < 0.5).tolist()
    partners = torch.randint(max(n, 1), (n, 8), generator=gen).tolist()  # candidates for a random B
    split = [_split(c, u) for (_, c), u in zip(flat, cuts)]
    ids = torch.full((n, seq_len), tokenizer.pad_token_id, dtype=torch.long)
    types = torch.zeros((n, seq_len), dtype=torch.long)
    labels = torch.zeros(n, dtype=torch.long)
    for i, ((story, _), (a, b)) in enumerate(zip(flat, split)):
        if negative[i] and objective == "sop":
            a, b = b, a
            labels[i] = 1
        elif negative[i] and objective == "nsp":
            other = next((j for j in partners[i] if flat[j][0] != story), None)
            if other is not None:
                b = split[other][1][: len(b)]
                labels[i] = 1
        a, b = a[: seq_len - 3], b[: max(0, seq_len - 3 - min(len(a), seq_len - 3))]
        row = [tokenizer.cls_token_id] + a + [tokenizer.sep_token_id] + b + [tokenizer.sep_token_id]
        ids[i, : len(row)] = torch.tensor(row)
        types[i, len(a) + 2 : len(row)] = 1
    maskable = (ids != tokenizer.pad_token_id) & ~torch.isin(ids, torch.tensor(tokenizer.all_special_ids))
    seqs = data.Sequences(ids, (ids != tokenizer.pad_token_id).long(), maskable, types, None)
    return Pairs(seqs, labels, objective)


# ----------------------------------------------------------------------------- short segments, as the lesson draws them


def segment_triples(
    stories: list[list[list[int]]],
    n: int,
    gen: torch.Generator,
    max_sentences: int = 3,
    other_from: int = 0,
    min_sentences: int = 1,
    where: list | None = None,
    placed_as_b: bool = False,
):
    """``n`` draws of (A, B, C) as token-id lists, the way the NSP vs SOP lesson draws its pool
    (app/lessons/sentence_order.py, ``generate_pairs``): A and B two consecutive segments of one story, each of
    k sentences (k uniform in ``min_sentences``..``max_sentences``, at most half the story), and C a segment of k
    sentences at a random place in a *different* story. ``stories``: per story, its sentences' ids (stories of ≥ 2
    sentences).

    ``other_from``: C starts at that sentence or later where the other story is long enough (1: C is never the
    other story's opening — a true B never is one, so an opening line would tell NotNext from IsNext without
    the topic, and would read "swapped" whenever A, an opening, comes second). The draws are the same numbers
    whatever ``other_from``; 0 gives the lesson's own draw. ``placed_as_b``: C starts no earlier than a true B of
    k sentences can (sentence k), so how early in its story a second segment sits is no cue either (an early
    segment introduces the characters; a true B never starts before sentence k, a C from sentence 1 on could).
    ``where``: a list that gets, per draw, (A's first
    sentence, k, the story's sentences) — where in its story a pair sits."""
    usable = [s for s in stories if len(s) >= 2]
    if len(usable) < 2:
        raise ValueError("segment pairs need at least two stories of two or more sentences")
    out = []
    for _ in range(n):
        s = int(torch.randint(len(usable), (1,), generator=gen))
        story = usable[s]
        k = min(
            min_sentences + int(torch.randint(max_sentences - min_sentences + 1, (1,), generator=gen)), len(story) // 2
        )
        j = int(torch.randint(len(story) - 2 * k + 1, (1,), generator=gen))
        o = (s + 1 + int(torch.randint(len(usable) - 1, (1,), generator=gen))) % len(usable)  # any story but s
        other = usable[o]
        ko = min(k, len(other))
        start = min(max(other_from, k) if placed_as_b else other_from, len(other) - ko)
        jo = start + int(torch.randint(len(other) - ko - start + 1, (1,), generator=gen))
        flat = lambda sents: [t for x in sents for t in x]  # noqa: E731
        out.append((flat(story[j : j + k]), flat(story[j + k : j + 2 * k]), flat(other[jo : jo + ko])))
        if where is not None:
            where.append((j, k, len(story)))
    return out


def _truncate_longest_first(a: list[int], b: list[int], room: int) -> tuple[list[int], list[int]]:
    """Both sides cut from the end to fit ``room`` tokens as the fast tokenizers' ``longest_first`` cuts them
    (tokenizers' utils/truncation.rs): the shorter side is kept whole when the longer one can give way, else
    the room is split in halves, the odd token to the second (the first, when it was the longer)."""
    if len(a) + len(b) <= room:
        return list(a), list(b)
    swap = len(a) > len(b)
    n1, n2 = sorted((len(a), len(b)))
    n2 = n1 if n1 > room else max(n1, room - n1)
    if n1 + n2 > room:
        n1 = room // 2
        n2 = n1 + room % 2
    if swap:
        n1, n2 = n2, n1
    return list(a[:n1]), list(b[:n2])


def encode_segment_pairs(
    tokenizer, rows: list[tuple[list[int], list[int], int]], seq_len: int, objective: str
) -> Pairs:
    """``[CLS] A [SEP] B [SEP]`` for each (A, B, label), cut longest side first to ``seq_len`` tokens — what the
    lesson's tokenizer call does to its pool (``truncation="longest_first"``)."""
    n = len(rows)
    ids = torch.full((n, seq_len), tokenizer.pad_token_id, dtype=torch.long)
    types = torch.zeros((n, seq_len), dtype=torch.long)
    for i, (a, b, _) in enumerate(rows):
        a, b = _truncate_longest_first(a, b, seq_len - 3)
        row = [tokenizer.cls_token_id] + a + [tokenizer.sep_token_id] + b + [tokenizer.sep_token_id]
        ids[i, : len(row)] = torch.tensor(row)
        types[i, len(a) + 2 : len(row)] = 1
    maskable = (ids != tokenizer.pad_token_id) & ~torch.isin(ids, torch.tensor(tokenizer.all_special_ids))
    seqs = data.Sequences(ids, (ids != tokenizer.pad_token_id).long(), maskable, types, None)
    return Pairs(seqs, torch.tensor([r[2] for r in rows], dtype=torch.long), objective)


def segment_pairs(tokenizer, triples, seq_len: int) -> dict[str, Pairs]:
    """Every triple (A, B, C) in the lesson's three versions, as two balanced tasks: {"nsp": (A, B) label 0 then
    (A, C) label 1, "sop": (A, B) label 0 then (B, A) label 1} — 2 × len(triples) pairs each."""
    nsp = [(a, b, 0) for a, b, _ in triples] + [(a, c, 1) for a, _, c in triples]
    sop = [(a, b, 0) for a, b, _ in triples] + [(b, a, 1) for a, b, _ in triples]
    return {
        "nsp": encode_segment_pairs(tokenizer, nsp, seq_len, "nsp"),
        "sop": encode_segment_pairs(tokenizer, sop, seq_len, "sop"),
    }


# ----------------------------------------------------------------------------- the sentence-head recipes' shared data


def whole_story_sets(tokenizer, corpus, work) -> tuple:
    """(train stories, valid stories, train file) as the sentence-head recipes (bert-nsp, albert-sop) read them:
    ``data.read_whole_stories``, each story's sentences encoded, cached in ``work``."""
    train_file, valid_file = data.corpus_files(corpus)
    train = common.cached(
        work / "train_whole_stories.pt", lambda: data.encode_sentences(tokenizer, data.read_whole_stories(train_file))
    )
    valid = common.cached(
        work / "valid_whole_stories.pt", lambda: data.encode_sentences(tokenizer, data.read_whole_stories(valid_file))
    )
    return train, valid, train_file


def held_out_tasks(
    tokenizer, valid_stories, r, seq_len: int, other_from: int, placed_as_b: bool = False
) -> tuple[dict, dict]:
    """The sentence-head recipes' held-out pairs: ``r.final_bases`` draws (seed ``r.valid_seed``, segments of
    ``r.min_sentences``..``r.max_sentences``) as both tasks ({"nsp": ..., "sop": ...}, the final numbers), and the
    first ``r.eval_bases`` of them in both versions (the evaluations during training)."""
    valid = segment_pairs(
        tokenizer,
        segment_triples(
            valid_stories,
            r.final_bases,
            torch.Generator().manual_seed(r.valid_seed),
            r.max_sentences,
            other_from,
            r.min_sentences,
            placed_as_b=placed_as_b,
        ),
        seq_len,
    )
    idx = torch.cat([torch.arange(r.eval_bases), r.final_bases + torch.arange(r.eval_bases)])
    return valid, {task: p.subset(idx) for task, p in valid.items()}


def head_accuracy(logits, p: Pairs, batch_size: int = 256) -> float:
    """A sentence head's argmax against ``p``'s labels (1 = not next / swapped). ``logits(ids, attention,
    token_types)`` gives the head's (B, 2) logits on the model's device."""
    correct = 0
    for s in range(0, len(p), batch_size):
        q = p.subset(slice(s, s + batch_size))
        x = q.seqs
        correct += int((logits(x.input_ids, x.attention_mask, x.token_type_ids).argmax(-1).cpu() == q.labels).sum())
    return correct / max(1, len(p))


# The sentence-head recipes (bert-nsp, albert-sop) train and score a model with two heads the same way; each passes
# its ``forward(model, ids, attention, token_types, targets)`` -> (masked-LM logits at the targets (n, V), the
# sentence head's logits (B, 2)).


def mlm_and_head_loss(forward, model, tok, batch: Pairs, weight: float, head: str, rand_ids, gen, device: str):
    """(masked-LM loss + ``weight`` × the sentence head's loss, {"mlm_loss", "<head>_loss"}) on ``batch``, masked
    dynamically (15%, 80/10/10) with ``gen``."""
    from app.masking import MaskingConfig, mlm_batch

    s = batch.seqs
    ids, labels = mlm_batch(s.input_ids, s.maskable, tok.mask_token_id, rand_ids, MaskingConfig(), gen)
    labels = labels.to(device)
    targets = labels != -100
    mlm, sentence = forward(model, ids.to(device), s.attention_mask.to(device), s.token_type_ids.to(device), targets)
    mlm_loss = torch.nn.functional.cross_entropy(mlm, labels[targets])
    head_loss = torch.nn.functional.cross_entropy(sentence, batch.labels.to(device))
    return mlm_loss + weight * head_loss, {
        "mlm_loss": float(mlm_loss.detach()),
        f"{head}_loss": float(head_loss.detach()),
    }


def model_head_accuracy(forward, model, p: Pairs, batch_size: int = 256) -> float:
    """``head_accuracy`` of ``model``'s sentence head, on the model's device."""
    dev = next(model.parameters()).device

    def logits(ids, att, types):
        no_targets = torch.zeros_like(ids, dtype=torch.bool, device=dev)
        return forward(model, ids.to(dev), att.to(dev), types.to(dev), no_targets)[1]

    return head_accuracy(logits, p, batch_size)


def in_order_mlm_scores(forward, model, tok, p: Pairs) -> dict:
    """Masked top-1/top-5 (``units.masked_lm_eval``, token targets) on the in-order pairs of ``p``."""
    from app.training import units

    m = units.masked_lm_eval(
        lambda i, a, t, ty: forward(model, i, a, ty, t)[0],
        p.seqs.subset(p.labels == 0),
        None,
        tok.mask_token_id,
        device=str(next(model.parameters()).device),
    )
    return {"valid_top1": m["top1"], "valid_top5": m["top5"]}
