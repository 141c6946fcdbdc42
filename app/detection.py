"""ELECTRA's replaced-token detection, live: one round through a loaded generator and discriminator (mask, the
generator's forward, sample, the discriminator's scores), and the pair's quality pooled over many rounds. Shared by
the ELECTRA lesson (app/lessons/electra.py, which adds the round's description and the hand edit) and the quality
report (app/training/report.py), so the report measures the pair exactly as the page runs it. The rules themselves
(which positions, how to sample, the labels, the metrics) are app/replaced_tokens.py's.

``generator`` and ``discriminator`` are loaded models (``model``, ``tokenizer``: app.models.loading); every forward
goes through the one forward context (app.models.device).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # before torch: a page that imports this module first (or a script) gets the imports in one thread

from dataclasses import dataclass

import torch

from app.core import text as txt
from app.models import device as devices
from app.replaced_tokens import (
    Detection,
    corrupt,
    detection_metrics,
    mask_positions,
    masked_input,
    replacement_probs,
)

DEFAULT_TEXT = "The little girl found a red ball in the park. She was happy and ran home to show her mom."
MLM_PROBABILITY = 0.15
TEMPERATURE = 1.0  # the paper samples from the generator at T = 1
MAX_TOKENS = 48  # cap on a sentence, special tokens included: a strip stays readable (the models take 128+)


@dataclass(frozen=True)
class Encoded:
    """One sentence as the models see it.

    input_ids: token ids, special tokens included; special: True where a token may never be masked
    or proposed ([CLS], [SEP], [UNK], ...); n_pieces: content pieces before the cap (so the page can
    say how much was cut).
    """

    input_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    special: tuple[bool, ...]
    n_unknown: int
    n_pieces: int
    n_kept: int  # content pieces kept after the cap

    @property
    def truncated(self) -> bool:
        return self.n_pieces > self.n_kept

    @property
    def n_content(self) -> int:
        """Positions that can be masked (not special, not [UNK])."""
        return sum(not s for s in self.special)


def special_ids(tokenizer) -> torch.Tensor:
    """The ids the generator may never propose and masking never picks (includes [UNK]). (S,) long"""
    return torch.tensor(sorted(set(tokenizer.all_special_ids)), dtype=torch.long)


def encode(tokenizer, text: str, max_tokens: int = MAX_TOKENS) -> Encoded:
    """Tokenize ``text`` with the family's special tokens, truncated to ``max_tokens`` ids in all. The
    unknown token and special tokens typed in the text are never masked (``special``)."""
    tk = txt.tokenize(tokenizer, text, max_tokens)
    specials = set(tokenizer.all_special_ids)
    special = tuple(i in specials for i in tk.ids)
    n_added = len(tokenizer("")["input_ids"])  # the special tokens the family adds ([CLS] ... [SEP])
    return Encoded(tk.ids, tk.pieces, special, len(tk.unknown(tokenizer)), tk.n_full - n_added, len(tk.ids) - n_added)


# ----------------------------------------------------------------------------- the two models


def generator_logits(model, masked_ids: torch.Tensor, masked: torch.Tensor) -> torch.Tensor:
    """The generator's logits at the masked positions, on the CPU in float32.

    masked_ids: (T,) with the mask token at masked positions; masked: (T,) bool. Returns (n, V).
    """
    with devices.forward(model):
        ids = masked_ids[None].to(model.device)  # (1, T)
        logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0]  # (T, V)
    return logits[masked.to(logits.device)].float().cpu()


def discriminator_scores(model, input_ids: torch.Tensor) -> torch.Tensor:
    """P(replaced) for every token, special tokens included. (T,) -> (T,) float32 on the CPU."""
    with devices.forward(model):
        ids = input_ids[None].to(model.device)  # (1, T)
        logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0]  # (T,)
    return torch.sigmoid(logits.float()).cpu()


# ----------------------------------------------------------------------------- one round


def generator_side(generator, input_ids: tuple, special: tuple, rate: float, seed: int):
    """(masked (T,) bool, the generator's logits at the masked positions (n, V)): everything that does not
    depend on the temperature — the expensive half of a round. ``generator`` is a loaded ELECTRA generator."""
    masked = mask_positions(torch.tensor(special), rate, torch.Generator().manual_seed(int(seed)))
    ids = masked_input(torch.tensor(input_ids), masked, generator.tokenizer.mask_token_id)
    return masked, generator_logits(generator.model, ids, masked)


def discriminator_side(discriminator, input_ids: tuple) -> torch.Tensor:
    """P(replaced) for every token of ``input_ids`` (a loaded ELECTRA discriminator). (T,)"""
    return discriminator_scores(discriminator.model, torch.tensor(input_ids))


def sample_corruption(
    tokenizer, input_ids: torch.Tensor, masked: torch.Tensor, g_logits, temperature: float, seed: int
):
    """The generator's samples at the masked positions, seeded: masking drew from Generator(seed), sampling draws
    from Generator(seed + 1), so another temperature re-samples at the same positions. input_ids (T,), masked (T,)
    bool, g_logits (n, V). Returns (the tempered distribution (n, V), the samples (n,), the corrupted ids (T,))."""
    gen = torch.Generator().manual_seed(int(seed) + 1)  # masking used ``seed``; sampling its own stream
    probs = replacement_probs(g_logits, special_ids(tokenizer), temperature)  # (n, V)
    sampled = torch.multinomial(probs, 1, generator=gen).squeeze(-1) if len(probs) else torch.zeros(0, dtype=torch.long)
    return probs, sampled, corrupt(input_ids, masked, sampled)


# ----------------------------------------------------------------------------- many rounds, pooled


def plausible_share(
    models: dict,
    text: str = DEFAULT_TEXT,
    seeds: int = 100,
    rate: float = MLM_PROBABILITY,
    temperature: float = TEMPERATURE,
) -> float:
    """Of the generator's samples at masked content-word positions over ``seeds`` rounds of ``text``, the share
    that are words (letters only), not punctuation or fragments: is the generator proposing plausible fakes?"""
    gen = models["electra-generator"]
    tok = gen.tokenizer
    enc = encode(tok, text, MAX_TOKENS)
    words = total = 0
    for seed in range(seeds):
        masked, logits = generator_side(gen, enc.input_ids, enc.special, rate, seed)
        _, _, corrupted = sample_corruption(tok, torch.tensor(enc.input_ids), masked, logits, temperature, seed)
        for pos in masked.nonzero().flatten().tolist():
            if enc.tokens[pos].isalpha():  # a content word was masked here
                total += 1
                words += tok.convert_ids_to_tokens(int(corrupted[pos])).isalpha()
    return words / max(total, 1)


def pooled_detection(
    models: dict,
    texts,
    seeds: int = 3,
    rate: float = MLM_PROBABILITY,
    temperature: float = TEMPERATURE,
) -> Detection:
    """The pair's detection quality, live, pooled over ``seeds`` rounds of every text: the generator corrupts each
    (seeded per text and round), the discriminator scores it, and every content token counts once per round."""
    gen, disc = models["electra-generator"], models["electra-discriminator"]
    scores, labels = [], []
    for i, text in enumerate(texts):
        enc = encode(gen.tokenizer, text, MAX_TOKENS)
        keep = ~torch.tensor(enc.special)
        for seed in range(seeds):
            masked, logits = generator_side(gen, enc.input_ids, enc.special, rate, seed * 100_003 + i)
            ids = torch.tensor(enc.input_ids)  # (T,)
            _, _, corrupted = sample_corruption(gen.tokenizer, ids, masked, logits, temperature, seed * 100_003 + i)
            scores.append(discriminator_side(disc, tuple(corrupted.tolist()))[keep])
            labels.append((corrupted != torch.tensor(enc.input_ids))[keep])
    return detection_metrics(torch.cat(scores), torch.cat(labels))
