"""ModernBERT (Warner et al., 2024): what a 2024 encoder changed in BERT, each change measured on the
loaded model's own modules.

Four ideas, each shown and checked here:

- **Rotary positions (RoPE).** There is no position table. In every attention layer the query and the
  key of the token at position ``p`` are *rotated*: their ``head_dim`` numbers form ``head_dim / 2`` pairs,
  and pair ``i`` turns by the angle ``p · θ_i``, with ``θ_i = base^(-2i / head_dim)`` (``inv_freq`` in
  transformers; transformers pairs dimension ``i`` with dimension ``i + head_dim / 2``). Two rotations
  compose, so the score ``q_p · k_s`` depends on ``s - p`` only: attention sees *relative* positions.
  ModernBERT uses ``base = θ = 160,000`` in its global layers and ``10,000`` in its local ones
  (``config.rope_parameters``).
- **Alternating attention.** Every ``n``-th layer (``config.layer_types``: ``full_attention``) attends
  globally; the others (``sliding_attention``) only within a sliding window: a token sees the tokens at
  most ``config.local_attention // 2`` positions away (ModernBERT-base: 128-token window, ±64, every
  third layer global). Blocked cells get exactly 0 attention. The saving is real only in a kernel that
  skips blocked cells (flash-attention's sliding window): eager attention computes every score and
  then blanks the blocked ones.
- **GeGLU.** The feed-forward is gated: ``Wo( GELU(x·W) ⊙ (x·V) )``, where ``Wi`` computes ``x·W`` and
  ``x·V`` at once (``ModernBertMLP``); BERT's is ``W2·GELU(W1·x + b1) + b2``. No linear layer and no
  LayerNorm has a bias; LayerNorms come *before* each sublayer (pre-norm), not after it.
- **Unpadding.** A batch of sentences of mixed lengths, padded to the longest, computes padding tokens
  for nothing. Unpadded, the sentences are concatenated into one sequence of ``sum(lengths)`` tokens
  with a block-diagonal attention mask and per-sentence position ids, and give the same outputs at the
  real tokens. (In the original model this is a flash-attention code path; transformers' eager
  implementation has none, so the packed sequence is built here and passed to the model's forward.)

Pure: no streamlit. ``run`` is the one sequence the page and the tests use.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the router calls preload.load() before a lesson runs)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

import math
import statistics
from dataclasses import dataclass

import numpy as np
import torch

from app import measure, mlm
from app.core import text as txt
from app.core.lesson import Note, Stop, direct, inputs_from
from app.core.text import count, ordinal
from app.core.state import Param, Spec, figure_param, seed_param, text_param
from app.models import device as devices

ORDER = 80  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'ModernBERT: a 2024 encoder'
ICON = ':material/rocket_launch:'
LINE = 'Rotary positions, alternating local and global attention, GeGLU and unpadding, measured live.'


@dataclass(frozen=True)
class ModernBertDefaults:
    top_k: int = 5  # guesses shown for the masked word
    max_tokens: int = 512  # cap on the user's text, special tokens included (the hub model reads 8,192)
    long_cap: int = 512  # the longest input of the attention demo (CPU: the hub model's 8,192 would take minutes)
    rope_reach: int = 64  # the RoPE figure puts keys up to this many positions either side of the query
    rope_grid: int = 48  # the score heatmap covers positions 0 .. rope_grid - 1
    cost_lengths: tuple[int, ...] = (128, 256, 512, 1024, 2048, 4096, 8192)
    timed_lengths: tuple[int, ...] = (128, 256, 512)  # measured forwards, up to the chosen length
    repeats: int = 3  # timed rounds of a curve point (as built, then all global: in turns); the median is reported
    budget_ms: float = 100.0  # ... fewer once the calls so far took this long (a base-size forward on a CPU)
    # A comparison the page draws a conclusion from (the longest length timed; padded against packed) is timed in turns
    # for an interval (measure.in_turns): this many rounds at most, at least measure.DEFAULTS.least, within this
    # budget; while the server is busy (measure.quiet) a provisional short look: measure.MIN_ROUNDS rounds.
    compared_repeats: int = 9
    compared_budget_ms: float = 400.0
    gate_closed: float = 0.1  # |gate| below this: the channel is (nearly) shut


DEFAULTS = ModernBertDefaults()
MODELS = ("modernbert", "bert")

# ModernBERT-base as published (Warner et al., 2024, "Smarter, Better, Faster, Longer", §2.1 and Table 3).
PUBLISHED = {
    "parameters": "149M",
    "context": 8192,
    "window": 128,
    "global_every": 3,
    "theta_global": 160_000.0,
    "theta_local": 10_000.0,
    "training_tokens": 2e12,
}
# BERT (Devlin et al., 2019, §A.2): "batch size of 256 sequences (256 sequences * 512 tokens = 128,000
# tokens/batch) for 1,000,000 steps, which is approximately 40 epochs over the 3.3 billion word corpus".
BERT_STEPS, BERT_BATCH, BERT_SEQ = 1_000_000, 256, 512
BERT_WORDS = 3.3e9

DEFAULT_TEXT = "The little girl found a red ball in the park. She was happy and ran home to show her mom."
DEFAULT_WORD = 9  # "park"

# Text in the register of the bundled models' corpus (TinyStories), written for this lesson: the long input of
# the attention demo and the sentences of the unpadding batch come from it.
STORY = (
    "Once upon a time, there was a little girl named Lily. She loved to play in the big green park near her "
    "house. One sunny day, Lily found a red ball under a tree. She picked it up and looked around. \"Whose ball "
    "is this?\" she asked. A small boy named Tom ran over to her. \"It is mine!\" he said. \"I lost it "
    "yesterday.\" Lily smiled and gave the ball back to Tom. Tom was very happy. \"Do you want to play with "
    "me?\" he asked. Lily nodded, and they kicked the ball all over the park. They laughed and ran until the sun "
    "went down. When it was time to go home, Tom said, \"Thank you for finding my ball. You are a good friend.\" "
    "Lily felt warm inside. She ran home to tell her mom about her new friend. "
    "The next morning, it was raining. Lily looked out of the window and felt sad. She wanted to go to the "
    "park, but the rain did not stop. Her mom saw her sad face and had an idea. \"Let's bake cookies,\" Mom "
    "said. Lily jumped up and clapped her hands. They got flour, sugar, eggs and butter. Lily mixed everything "
    "in a big bowl. Some flour fell on the floor, and some got on her nose. Mom laughed and wiped her nose "
    "with a towel. They put the cookies in the oven and waited. Soon the whole house smelled sweet. When the "
    "cookies were ready, Lily put some in a little box. \"These are for Tom,\" she said. When the rain "
    "stopped, she walked to Tom's house with her mom and gave him the box. Tom ate one cookie and said it was "
    "the best cookie in the world. "
    "One day, Ben the dog saw a big yellow cat in the garden. Ben wanted to be friends, so he wagged his tail "
    "and barked. The cat was scared and climbed up a tall tree. Ben sat under the tree and waited. He waited "
    "and waited, but the cat did not come down. A bird on the fence saw them. \"Why do you bark at the cat?\" "
    "the bird asked. \"I only want to play,\" said Ben. \"When you bark, the cat thinks you are angry,\" said "
    "the bird. \"Try to be quiet and kind.\" Ben lay down in the soft grass and did not make a sound. After a "
    "while, the cat came down slowly. She sniffed Ben's nose, and Ben licked her face. From that day on, the "
    "cat and the dog played in the garden every day. They chased leaves in the wind and slept in the sun "
    "together. "
    "Sam had a little boat made of wood. Every day after lunch, he took it to the pond behind his house. He put "
    "the boat on the water and watched it float. One windy day, the boat went too far. Sam could not reach it. "
    "He felt like crying. Then he saw a duck swimming near the boat. \"Please help me, duck!\" Sam called. The "
    "duck swam to the boat and pushed it with her head, back to the shore. Sam picked up his boat and hugged "
    "it. \"Thank you, duck!\" he said. He gave the duck some bread from his pocket. The duck quacked happily "
    "and swam away. Sam learned to tie a long string to his boat, so it would never float away again."
)

# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = 'Rotary positions and mostly local attention let ModernBERT read 8,192 tokens, not 512.'
SPEC = Spec(
    text_param(DEFAULT_TEXT, "Your sentence"),
    Param(
        "word",
        "int",
        DEFAULT_WORD,
        lo=0,
        hi=999,
        label="Word to mask",
        widget="select",
        help="ModernBERT fills this word in (its pieces all become [MASK]); the GeGLU demo reads its first "
        "piece. Words count from 0.",
    ),
    Param(
        "layer",
        "int",
        1,
        lo=0,
        hi=99,
        label="Layer",
        widget="select",
        help="The layer whose attention (long input) and gated feed-forward (your sentence) are shown.",
    ),
    seed_param(help="Draws the query and key of the RoPE figure and the story sentences of the unpadding batch."),
    Param(
        "shift",
        "int",
        1000,
        lo=1,
        hi=8000,
        label="Shift both tokens by",
        widget="number",
        step=100,
        help="The RoPE figure places the same query and key again this many positions further along.",
    ),
    Param(
        "length",
        "int",
        256,
        lo=32,
        hi=DEFAULTS.long_cap,
        step=32,
        label="Long input (tokens)",
        widget="slider",
        help=f"Tokens of the story read at once (at most the model's limit and {DEFAULTS.long_cap:,}, so the "
        "forward stays quick on a CPU).",
    ),
    Param(
        "batch",
        "int",
        8,
        lo=2,
        hi=32,
        label="Sentences in the batch",
        widget="slider",
        help="Your text plus this many minus one sentences drawn (seeded) from the story.",
    ),
    figure_param(
        (
            ("attention", "One layer's attention: its rule and the model's weights"),
            ("layers", "Every layer's attention: the local and the global ones"),
            ("rope", "Rotary positions: one query and key, moved along"),
        )
    ),
)


# ----------------------------------------------------------------------------- small helpers


def parameter_count(module) -> int:
    """Distinct parameters (a tied weight counts once, as in ``module.parameters()``)."""
    return sum(p.numel() for p in module.parameters())


def half_window(config) -> int:
    """How far a local layer sees on each side: ``local_attention // 2`` (``config.sliding_window``)."""
    return int(config.local_attention) // 2


def global_every(layer_types) -> int | None:
    """n when layers 0, n, 2n, ... are the global ones (``full_attention``), else None."""
    globals_ = [i for i, t in enumerate(layer_types) if t == "full_attention"]
    if not globals_ or globals_[0] != 0:
        return None
    n = globals_[1] if len(globals_) > 1 else len(layer_types)  # one global layer: "every L-th"
    return n if globals_ == list(range(0, len(layer_types), n)) else None


# ----------------------------------------------------------------------------- 1. rotary positions


def rotary(model, positions: torch.Tensor, layer_type: str, head_dim: int):
    """(cos, sin) of the model's own rotary module for ``positions``: each (1, P, head_dim)."""
    rope = model.model.rotary_emb
    probe = torch.zeros(1, 1, head_dim, device=model.device)  # only its dtype and device are read
    return rope(probe, positions[None].to(model.device), layer_type)


def rotate(model, vectors: torch.Tensor, positions: torch.Tensor, layer_type: str) -> torch.Tensor:
    """Rotate one vector per position the way the model rotates queries and keys (apply_rotary_pos_emb).
    vectors (P, head_dim), positions (P,) -> (P, head_dim) on the CPU."""
    from transformers.models.modernbert.modeling_modernbert import apply_rotary_pos_emb

    head_dim = vectors.shape[-1]
    cos, sin = rotary(model, positions, layer_type, head_dim)
    x = vectors[None, None].to(model.device, torch.float32)  # (1, 1 head, P, head_dim)
    rotated, _ = apply_rotary_pos_emb(x, x, cos, sin, unsqueeze_dim=1)
    return rotated[0, 0].float().cpu()


@dataclass(frozen=True)
class Rope:
    """The spectrum and the relative-position property of RoPE, in the loaded model.

    inv_freq[t][i]: θ_i of layer type t (radians per position); distances: s - p for the curves;
    near[t] / far[t]: the score q_p · k_s / sqrt(head_dim) with the query at ``base`` / ``base + shift``;
    grid: scores for query position p (rows) and key position s (columns), global layers' θ."""

    head_dim: int
    types: tuple[str, ...]
    theta: tuple[float, ...]
    inv_freq: tuple[np.ndarray, ...]  # one (head_dim / 2,) per type
    distances: np.ndarray  # (D,)
    base: int
    shift: int
    near: tuple[np.ndarray, ...]  # one (D,) per type
    far: tuple[np.ndarray, ...]
    unrotated: float  # q · k / sqrt(head_dim) with no rotation: what a score would be without positions
    grid: np.ndarray  # (G, G)

    @property
    def max_difference(self) -> float:
        """The largest |score at base - score at base + shift| over every distance and type."""
        return max(float(np.abs(a - b).max()) for a, b in zip(self.near, self.far))


def rope_demo(loaded, seed: int, shift: int) -> Rope:
    """One seeded query and key (N(0, 1) numbers, head_dim each), rotated by the model's own rotary module at
    every position of the figure, for each layer type; all scores computed from the rotated vectors."""
    model = loaded.model
    config = model.config
    head_dim = config.hidden_size // config.num_attention_heads
    gen = torch.Generator().manual_seed(int(seed))
    q, k = torch.randn(2, head_dim, generator=gen)  # (head_dim,) each
    reach, base = DEFAULTS.rope_reach, DEFAULTS.rope_reach
    distances = torch.arange(-reach, reach + 1)  # (D,)
    types = tuple(sorted(set(config.layer_types)))  # full_attention, sliding_attention
    near, far, freqs = [], [], []
    for kind in types:
        curves = []
        for start in (base, base + int(shift)):
            positions = torch.cat([torch.tensor([start]), start + distances])  # the query's, then every key's
            rotated = rotate(model, torch.cat([q[None], k.expand(len(distances), -1)]), positions, kind)
            curves.append((rotated[1:] @ rotated[0] / math.sqrt(head_dim)).numpy())  # (D,)
        near.append(curves[0])
        far.append(curves[1])
        freqs.append(getattr(model.model.rotary_emb, f"{kind}_inv_freq").float().cpu().numpy())
    g = torch.arange(DEFAULTS.rope_grid)
    qs, ks = rotate(model, q.expand(len(g), -1), g, types[0]), rotate(model, k.expand(len(g), -1), g, types[0])
    grid = (qs @ ks.T / math.sqrt(head_dim)).numpy()  # (G, G): row p = query position, column s = key position
    theta = tuple(float(config.rope_parameters[t]["rope_theta"]) for t in types)
    return Rope(
        head_dim,
        types,
        theta,
        tuple(freqs),
        distances.numpy(),
        base,
        int(shift),
        tuple(near),
        tuple(far),
        float(q @ k / math.sqrt(head_dim)),
        grid,
    )


# ----------------------------------------------------------------------------- 2. alternating attention


def allowed(kind: str, length: int, half: int) -> torch.Tensor:
    """The attention rule of one layer: (T, T) bool, True where query i may attend to key j (global layers:
    everywhere; local layers: |i - j| <= half)."""
    i = torch.arange(length)
    if kind == "full_attention":
        return torch.ones(length, length, dtype=torch.bool)
    return (i[:, None] - i[None, :]).abs() <= half


def attended_pairs(length: int, half: int | None) -> int:
    """How many (query, key) pairs a layer computes on ``length`` tokens: T² globally, and with a window of
    ±half, T + 2·Σ_{d=1..min(half, T-1)} (T - d) (each distance d is attended T - d times in each direction)."""
    if half is None:
        return length * length
    m = min(half, length - 1)
    return length + 2 * (m * length - m * (m + 1) // 2)


@dataclass(frozen=True)
class LayerCheck:
    """One layer's rule against the model's attention weights (all heads) on the long input.

    blocked_max: the largest weight at a blocked cell (0.0 means every blocked cell is exactly 0);
    allowed_zero: allowed cells whose weight underflowed to exactly 0; inside: the smallest share of a
    query's attention that falls inside the rule (1.0: nothing leaks out)."""

    layer: int
    kind: str
    half: int | None  # None: global
    allowed: int
    blocked: int
    blocked_max: float
    allowed_zero: int
    inside: float


@dataclass(frozen=True)
class LongInput:
    checks: tuple[LayerCheck, ...]
    maps: np.ndarray  # (layers, T, T): attention weights, mean over heads


def long_ids(tokenizer, length: int) -> list[int]:
    """``length`` token ids of the story (repeated when it is shorter) as ModernBERT reads a text:
    ``[CLS] x [SEP]``."""
    body: list[int] = []
    while len(body) < length - 2:
        body += tokenizer(STORY + " ", add_special_tokens=False)["input_ids"]
    return [tokenizer.cls_token_id, *body[: length - 2], tokenizer.sep_token_id]


def long_attention(loaded, length: int) -> LongInput:
    """The model's attention on ``length`` tokens of the story, every layer, checked against its rule."""
    model, config = loaded.model, loaded.model.config
    ids = long_ids(loaded.tokenizer, length)
    with devices.forward(model):
        out = model(input_ids=torch.tensor([ids], device=model.device), output_attentions=True)
    checks, maps = [], []
    for layer, (kind, weights) in enumerate(zip(config.layer_types, out.attentions)):
        a = weights[0].float().cpu()  # (heads, T, T)
        half = None if kind == "full_attention" else half_window(config)
        rule = allowed(kind, len(ids), half or 0)  # (T, T)
        blocked = a[:, ~rule]  # (heads, n_blocked)
        checks.append(
            LayerCheck(
                layer,
                kind,
                half,
                int(rule.sum()),
                int((~rule).sum()),
                float(blocked.max()) if blocked.numel() else 0.0,
                int((a[:, rule] == 0).sum()),
                float((a * rule).sum(-1).min()),
            )
        )
        maps.append(a.mean(0).numpy())
    return LongInput(tuple(checks), np.stack(maps))


@dataclass(frozen=True)
class Cost:
    """Attention cost against all-global attention, counted exactly, for the loaded model's configuration
    and for ModernBERT-base's; and the loaded model's forward, timed.

    pairs: attended (query, key) pairs summed over the layers; flops: 4 · hidden · pairs (2 for QKᵀ and 2 for
    the weighted sum of values, per pair and per dimension of every head)."""

    lengths: tuple[int, ...]
    pairs: tuple[int, ...]  # this model's layer types
    pairs_global: tuple[int, ...]  # the same layers, all global
    flops: tuple[int, ...]
    flops_global: tuple[int, ...]
    base_pairs: tuple[int, ...]  # ModernBERT-base's configuration
    base_pairs_global: tuple[int, ...]
    max_positions: int
    timed_lengths: tuple[int, ...]
    ms_model: tuple[float, ...]  # the forward as loaded: local layers get their window mask
    ms_global: tuple[float, ...]  # the same forward with every layer given the global mask
    global_layers: tuple[int, int]  # (global layers, layers) of this model
    base_global_layers: tuple[int, int]  # ... of ModernBERT-base
    rounds: tuple[int, ...] = ()  # timed rounds behind each median of ms_model / ms_global
    ratio: dict | None = None  # as built / all global at the longest length timed: measure.ratio_interval, or None
    provisional: bool = False  # timed while the server was busy (measure.quiet): a short look, taken again later

    @property
    def shares(self) -> tuple[float, ...]:
        """This model's attention cost as a share of all-global, at every length."""
        return tuple(p / g for p, g in zip(self.pairs, self.pairs_global))

    @property
    def base_shares(self) -> tuple[float, ...]:
        return tuple(p / g for p, g in zip(self.base_pairs, self.base_pairs_global))


def model_pairs(layer_types, half: int, length: int) -> int:
    """Attended pairs of a forward: every layer's, by its type."""
    return sum(attended_pairs(length, None if t == "full_attention" else half) for t in layer_types)


def compared_timing(settled: bool) -> dict:
    """``measure.in_turns`` at this lesson's rounds and budget: a comparison the page concludes from."""
    return measure.in_turns(settled, DEFAULTS.compared_repeats, DEFAULTS.compared_budget_ms, warmup=1)


def timed_in_turns(forwards: dict, device, **timing) -> dict[str, list[float]]:
    """``measure.measure_interleaved`` of ``forwards`` at a page's threads, in the forward context, synchronised on
    a GPU."""
    sync = torch.cuda.synchronize if str(device).startswith("cuda") else None
    with devices.timing():  # at a page's threads, in the warm start too
        return measure.measure_interleaved(forwards, sync=sync, **timing)


def timed_forwards(loaded, length: int, settled: bool = True) -> tuple:
    """The story's forward at growing lengths up to ``length``, as loaded and with every layer made global (an
    all-zero additive mask passed for both layer types), timed in turns: (lengths, median ms as loaded, median ms
    all global, rounds per length, the ratio's interval at ``length``: ``measure.ratio_interval``). The longest
    length gets the rounds of :func:`compared_timing` (``settled``: the server was quiet), the shorter ones
    ``DEFAULTS.repeats`` at most (a point of the curve)."""
    model = loaded.model
    lengths = tuple(n for n in DEFAULTS.timed_lengths if n < length) + (length,)
    as_loaded, all_global, rounds, ratio = [], [], [], None
    for n in lengths:
        ids = torch.tensor([long_ids(loaded.tokenizer, n)], device=model.device)  # (1, n)
        zero = torch.zeros(1, 1, n, n, device=model.device, dtype=model.dtype)  # additive: nothing blocked
        masks = {"full_attention": zero, "sliding_attention": zero}
        timing = (
            compared_timing(settled)
            if n == length
            else {"repeats": DEFAULTS.repeats, "least": 1, "budget_ms": DEFAULTS.budget_ms, "warmup": 1}
        )
        forwards = {
            "built": lambda: model.model(input_ids=ids),
            "global": lambda: model.model(input_ids=ids, attention_mask=masks),
        }
        with devices.forward(model):
            samples = timed_in_turns(forwards, model.device, **timing)
        as_loaded.append(statistics.median(samples["built"]))
        all_global.append(statistics.median(samples["global"]))
        rounds.append(len(samples["built"]))
        if n == length:
            ratio = measure.ratio_interval(samples["built"], samples["global"])
    return lengths, tuple(as_loaded), tuple(all_global), tuple(rounds), ratio


#: within this relative difference, two medians timed on a shared machine are "about equal"
SAME_TIME = 0.15


def rounds_words(rounds: tuple[int, ...]) -> str:
    """ "3 rounds" when every length got as many, else "3, 3 and 9 rounds" (``Cost.rounds``)."""
    if not rounds:
        return "no rounds"
    if len(set(rounds)) == 1:
        return count(rounds[0], "round")
    return f"{', '.join(map(str, rounds[:-1]))} and {rounds[-1]} rounds"


def same_within(iv: dict | None, tolerance: float = SAME_TIME) -> bool:
    """Whether a ratio's interval (``measure.ratio_interval``) lies wholly within ``tolerance`` of 1 either way."""
    return iv is not None and iv["low"] >= 1 / (1 + tolerance) and iv["high"] <= 1 + tolerance


def timing_story(cost: Cost) -> str:
    """What the timing figure shows, in one sentence computed from it: the forward as built against the same
    forward with every layer global, at the longest length timed, concluded from the ratio's interval (rounds in
    turns, ``Cost.ratio``). "About equal" needs the whole interval within ``SAME_TIME`` of 1 (the expected result
    with eager attention: it computes every score and then blanks the blocked ones); faster or slower needs it
    wholly on one side of 1; anything else is within this machine's noise. Too few rounds for an interval: no
    conclusion."""
    n, built, full = cost.timed_lengths[-1], cost.ms_model[-1], cost.ms_global[-1]
    at = f"At {n:,} tokens the forward as built took {built:.1f} ms and with every layer global {full:.1f} ms"
    iv = cost.ratio
    if iv is None:
        return f"{at} (medians): too few rounds for an interval, so no conclusion is drawn from them."
    within = f"as built / all global, round by round: {iv['ratio']:.2f}× (geometric mean), {measure.interval_words(iv)}"
    if same_within(iv):
        return (
            f"{at}: about equal ({within}, inside ±{SAME_TIME:.0%}), and that is the lesson: transformers' eager "
            "attention computes **every** score and then blanks the blocked ones, so the window saves nothing here."
        )
    if iv["high"] < 1:
        return (
            f"{at}: as built was faster ({within}). Eager attention still computes every score, "
            "so the window's blocked cells cannot explain it: the two were timed in turns on a "
            "shared machine, and other work may have slowed one more than the other."
        )
    if iv["low"] > 1:
        return (
            f"{at}: as built was slower ({within}): the window masks are built and applied on top of every "
            "score eager attention computes anyway, so here the window only adds work."
        )
    return (
        f"{at}: the difference is within the noise on this machine ({within}), so neither is shown to be quicker; "
        "eager attention computes every score either way."
    )


def base_config(loaded):
    """ModernBERT-base's configuration: the loaded model's when it is the hub checkpoint, else transformers'
    ModernBertConfig defaults (which are answerdotai/ModernBERT-base's config.json values)."""
    from transformers import ModernBertConfig

    return loaded.model.config if not loaded.is_bundled else ModernBertConfig()


def attention_cost(loaded, timed: tuple, provisional: bool = False) -> Cost:
    """The counted cost at DEFAULTS.cost_lengths, with ``timed`` (timed_forwards' result) attached; ``provisional``:
    timed while the server was busy."""
    config, base = loaded.model.config, base_config(loaded)
    half, base_half = half_window(config), half_window(base)
    lengths = DEFAULTS.cost_lengths
    pairs = tuple(model_pairs(config.layer_types, half, n) for n in lengths)
    pairs_global = tuple(len(config.layer_types) * n * n for n in lengths)
    flops = tuple(4 * config.hidden_size * p for p in pairs)
    flops_global = tuple(4 * config.hidden_size * p for p in pairs_global)
    base_pairs = tuple(model_pairs(base.layer_types, base_half, n) for n in lengths)
    base_global = tuple(len(base.layer_types) * n * n for n in lengths)

    def n_global(types):
        return sum(t == "full_attention" for t in types), len(types)

    return Cost(
        lengths,
        pairs,
        pairs_global,
        flops,
        flops_global,
        base_pairs,
        base_global,
        int(config.max_position_embeddings),
        *timed[:3],
        n_global(config.layer_types),
        n_global(base.layer_types),
        rounds=timed[3],
        ratio=timed[4],
        provisional=provisional,
    )


# ----------------------------------------------------------------------------- 3. GeGLU


@dataclass(frozen=True)
class FeedForward:
    """Parameters of one layer's feed-forward, counted from real modules (no LayerNorm)."""

    name: str
    hidden: int
    intermediate: int
    parameters: int
    formula: str


@dataclass(frozen=True)
class Gate:
    """The gated feed-forward of one layer at one token of the user's sentence.

    pre[c] = (x·W)_c, gate[c] = (x·V)_c for channel c (``Wi(x).chunk(2)``), act = GELU(pre); the module's
    output is Wo(act · gate). replay_error: how far the layer replayed here from the model's hidden states
    is from the model's own next hidden state (so x is exactly the MLP's input in the forward)."""

    layer: int
    position: int
    piece: str
    pre: np.ndarray  # (I,)
    gate: np.ndarray  # (I,)
    act: np.ndarray  # (I,)
    replay_error: float
    module_error: float  # |Wo(act · gate) - mlp(x)|: the formula is the module

    @property
    def flipped(self) -> int:
        """Channels whose sign the gate reverses (a negative gate on a non-zero GELU)."""
        return int(((self.gate < 0) & (self.act != 0)).sum())

    @property
    def closed(self) -> int:
        return int((np.abs(self.gate) < DEFAULTS.gate_closed).sum())


def feed_forwards(loaded_mb, loaded_bert) -> tuple[FeedForward, ...]:
    """ModernBERT's MLP (loaded, and ModernBERT-base's) next to BERT's intermediate + output dense layers
    (the loaded BERT's; one built at ModernBERT's hidden size with BERT's 4·hidden; BERT-base's)."""
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertIntermediate, BertOutput
    from transformers.models.modernbert.modeling_modernbert import ModernBertMLP

    def geglu(name, mlp, config):
        h, i = config.hidden_size, config.intermediate_size
        return FeedForward(name, h, i, parameter_count(mlp), f"Wi {h}×2·{i} + Wo {i}×{h} = 3·H·I")

    def bert_ffn(name, intermediate, output, config):
        h, i = config.hidden_size, config.intermediate_size
        return FeedForward(
            name,
            h,
            i,
            parameter_count(intermediate.dense) + parameter_count(output.dense),
            f"{h}×{i} + {i} biases + {i}×{h} + {h} biases = 2·H·I + I + H",
        )

    mb, bert = loaded_mb.model, loaded_bert.model
    h = mb.config.hidden_size
    bert_layer = bert.base_model.encoder.layer[0]
    with torch.device("meta"):
        same_h = BertConfig(hidden_size=h, intermediate_size=4 * h, num_attention_heads=1)
        bert_same = (BertIntermediate(same_h), BertOutput(same_h))
        base_mlp = ModernBertMLP(base_config(loaded_mb))
        bert_base = BertConfig()
        bert_base_layers = (BertIntermediate(bert_base), BertOutput(bert_base))
    return (
        geglu(f"{loaded_mb.variant.label} (this model): GeGLU", mb.model.layers[0].mlp, mb.config),
        bert_ffn(
            f"{loaded_bert.variant.label} (this model): GELU", bert_layer.intermediate, bert_layer.output, bert.config
        ),
        bert_ffn(f"BERT at hidden {h}, intermediate 4·{h}: GELU", *bert_same, same_h),
        geglu("ModernBERT-base: GeGLU", base_mlp, base_mlp.config),
        bert_ffn("BERT-base: GELU", *bert_base_layers, bert_base),
    )


def additive_masks(segment: torch.Tensor, half: int, dtype, device) -> dict[str, torch.Tensor]:
    """The model's two attention masks for one sequence made of segments (unpadded sentences packed
    together), as additive (1, 1, T, T) masks: 0 where query i may attend to key j, the dtype's minimum
    elsewhere. Global layers: j in i's segment; local layers: also |i - j| <= half.
    segment: (T,) the segment of every token."""
    same = segment[:, None] == segment[None, :]  # (T, T)
    block = torch.finfo(dtype).min
    local = same & allowed("sliding_attention", len(segment), half)
    return {
        kind: torch.where(rule, 0.0, block).to(device=device, dtype=dtype)[None, None]
        for kind, rule in (("full_attention", same), ("sliding_attention", local))
    }


def gate_demo(loaded, ids: tuple[int, ...], position: int, layer: int) -> Gate:
    """Replay layer ``layer`` from the model's own hidden states up to its MLP, and open the MLP there.

    hidden_states[l] is the input of layer l; the replay runs the layer's attention (its own modules, its
    own rotary embedding, the layer type's mask) and checks h + attn + mlp against hidden_states[l + 1]."""
    model = loaded.model
    config, m = model.config, model.model
    x_ids = torch.tensor([ids], device=model.device)  # (1, T)
    with devices.forward(model):
        hs = m(input_ids=x_ids, output_hidden_states=True).hidden_states  # L + 1 of (1, T, H)
        block = m.layers[layer]
        kind = config.layer_types[layer]
        h = hs[layer]  # (1, T, H)
        positions = torch.arange(len(ids), device=model.device)[None]  # (1, T)
        mask = additive_masks(torch.zeros(len(ids), dtype=torch.long), half_window(config), h.dtype, model.device)
        attn, _ = block.attn(
            block.attn_norm(h), position_embeddings=m.rotary_emb(h, positions, kind), attention_mask=mask[kind]
        )
        h2 = h + attn
        x = block.mlp_norm(h2)  # (1, T, H): the MLP's input
        after = h2 + block.mlp(x)
        if layer == len(m.layers) - 1:
            after = m.final_norm(after)  # the last hidden state is reported after the final norm
        replay_error = float((after - hs[layer + 1]).abs().max())
        pre, gate = block.mlp.Wi(x[0, position]).chunk(2, dim=-1)  # (I,) each
        act = block.mlp.act(pre)
        module_error = float((block.mlp.Wo(act * gate) - block.mlp(x[0, position])).abs().max())
    return Gate(
        layer,
        position,
        loaded.tokenizer.convert_ids_to_tokens(int(ids[position])),
        pre.float().cpu().numpy(),
        gate.float().cpu().numpy(),
        act.float().cpu().numpy(),
        replay_error,
        module_error,
    )


# ----------------------------------------------------------------------------- 4. unpadding


@dataclass(frozen=True)
class Unpadding:
    """One batch, padded and unpadded.

    lengths[b]: tokens of sentence b ([CLS] and [SEP] included); padded = B · max(lengths) token slots,
    unpadded = sum(lengths). max_difference: the largest |padded - unpadded| over the last hidden state at
    every real token. Times are medians in ms of ``rounds`` rounds in turns: the padded batch, and the same sentences
    packed in one sequence; ``ratio``: packed / padded, ``measure.ratio_interval`` (None with too few rounds)."""

    sentences: tuple[str, ...]
    pieces: tuple[tuple[str, ...], ...]
    lengths: tuple[int, ...]
    max_difference: float
    ms_padded: float
    ms_packed: float
    rounds: int = 1
    ratio: dict | None = None
    provisional: bool = False  # timed while the server was busy (measure.quiet): a short look, taken again later

    @property
    def padded(self) -> int:
        return len(self.lengths) * max(self.lengths)

    @property
    def unpadded(self) -> int:
        return sum(self.lengths)

    @property
    def pairs_padded(self) -> int:
        """Attention pairs a padded global layer computes: B · max(lengths)²."""
        return len(self.lengths) * max(self.lengths) ** 2

    @property
    def pairs_packed(self) -> int:
        """... packed in one sequence with a mask (eager): sum(lengths)²."""
        return self.unpadded**2

    @property
    def pairs_blocks(self) -> int:
        """... in a kernel that skips the blocked blocks (flash-attention's varlen): Σ length²."""
        return sum(n * n for n in self.lengths)


def batch_sentences(text: str, batch: int, seed: int) -> tuple[str, ...]:
    """The user's text, then ``batch - 1`` sentences of the story drawn without replacement (seeded)."""
    story = txt.split_sentences(STORY)
    order = torch.randperm(len(story), generator=torch.Generator().manual_seed(int(seed))).tolist()
    return (text,) + tuple(story[i] for i in order[: batch - 1])


def packed_inputs(lengths: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """(segment of every token (N,), its position inside its own sentence (N,)) for sentences packed end to end."""
    segment = torch.cat([torch.full((n,), b) for b, n in enumerate(lengths)])
    positions = torch.cat([torch.arange(n) for n in lengths])
    return segment, positions


def unpadding(loaded, sentences: tuple[str, ...], settled: bool = True) -> Unpadding:
    """The batch's last hidden states, padded and unpadded, compared at every real token; and timed in turns
    (:func:`compared_timing`; ``settled``: the server was quiet)."""
    model, tok = loaded.model, loaded.tokenizer
    encoded = [
        tok(s, truncation=True, max_length=txt.token_limit(tok, DEFAULTS.max_tokens))["input_ids"] for s in sentences
    ]
    lengths = [len(e) for e in encoded]
    width, device = max(lengths), model.device
    padded_ids = torch.full((len(encoded), width), tok.pad_token_id)  # (B, width)
    attention = torch.zeros(len(encoded), width, dtype=torch.long)  # 1 = a real token, 0 = padding
    for b, e in enumerate(encoded):
        padded_ids[b, : len(e)], attention[b, : len(e)] = torch.tensor(e), 1
    padded_ids, attention = padded_ids.to(device), attention.to(device)
    segment, positions = packed_inputs(lengths)
    packed_ids = torch.tensor([i for e in encoded for i in e], device=device)[None]  # (1, N)
    masks = additive_masks(segment, half_window(model.config), model.dtype, device)  # (1, 1, N, N) each
    positions = positions.to(device)[None]  # (1, N)

    def run_padded():
        return model.model(input_ids=padded_ids, attention_mask=attention).last_hidden_state  # (B, width, H)

    def run_packed():
        return model.model(input_ids=packed_ids, attention_mask=masks, position_ids=positions).last_hidden_state

    with devices.forward(model):
        padded, packed = run_padded(), run_packed()[0]  # padded: (B, width, H), packed: (N, H); also the warm-up
        starts = np.cumsum([0] + lengths[:-1])
        diff = max(
            float((padded[b, :n] - packed[s : s + n]).abs().max())  # real tokens only
            for b, (s, n) in enumerate(zip(starts, lengths))
        )
        samples = timed_in_turns(
            {"padded": run_padded, "packed": run_packed}, device, **{**compared_timing(settled), "warmup": 0}
        )
    return Unpadding(
        tuple(sentences),
        tuple(tuple(tok.convert_ids_to_tokens(e)) for e in encoded),
        tuple(lengths),
        diff,
        statistics.median(samples["padded"]),
        statistics.median(samples["packed"]),
        rounds=len(samples["padded"]),
        ratio=measure.ratio_interval(samples["packed"], samples["padded"]),
        provisional=not settled,
    )


def unpadding_story(u: Unpadding) -> str:
    """What the two times show, concluded from their ratio's interval (rounds in turns): quicker or slower only when
    the interval lies wholly on one side of 1."""
    at = f"Padded {u.ms_padded:.1f} ms, packed {u.ms_packed:.1f} ms (medians of {count(u.rounds, 'round')} in turns)"
    iv = u.ratio
    if iv is None:
        return f"{at}: too few rounds for an interval, so no conclusion is drawn from them."
    within = f"packed / padded, round by round: {iv['ratio']:.2f}× (geometric mean), {measure.interval_words(iv)}"
    if iv["high"] < 1:
        why = (
            f": it reads {u.unpadded:,} token slots instead of {u.padded:,}"
            if u.pairs_packed <= u.pairs_padded
            else f", although eager attention computes {u.pairs_packed:,} pairs for it against {u.pairs_padded:,} "
            f"padded: its {u.unpadded:,} token slots instead of {u.padded:,} saved more in the rest of the layer"
        )
        return f"{at}: the packed sequence was quicker here ({within}){why}."
    if iv["low"] > 1:
        why = (
            f": eager attention computes all {u.pairs_packed:,} pairs of its one long sequence, against "
            f"{u.pairs_padded:,} padded; the saving needs a kernel that skips the blocked blocks"
            if u.pairs_packed > u.pairs_padded
            else ", with fewer token slots and pairs: the mask it carries costs more than they save at this size"
        )
        return f"{at}: the packed sequence was slower here ({within}){why}."
    return f"{at}: within the noise on this machine ({within}), so neither is shown to be quicker."


# ----------------------------------------------------------------------------- 5. fill-mask, and what changed


@dataclass(frozen=True)
class Fill:
    """ModernBERT's guess for the chosen word, every piece of it masked at once.

    top: (piece as read, probability) for the first piece; p_word: product of the pieces' probabilities;
    rank: of the original first piece in the first piece's distribution (1 = top)."""

    words: tuple[str, ...]
    word: int
    pieces: tuple[str, ...]
    positions: tuple[int, ...]
    top: tuple[tuple[str, float], ...]
    p_word: float
    rank: int
    n_tokens: int


def fill_mask(loaded, ids: tuple[int, ...], positions: tuple[int, ...], k: int = DEFAULTS.top_k) -> mlm.WordFill:
    """ModernBERT's guess for the word at ``positions`` of ``ids``, every one of them replaced by the mask token."""
    model, tok = loaded.model, loaded.tokenizer
    x = torch.tensor([ids])  # (1, T)
    masked = mlm.with_masks(x, positions, tok.mask_token_id).to(model.device)  # (1, T)
    probs = mlm.probabilities_at(model, {"input_ids": masked}, positions)  # (n, V)
    return mlm.fill_word(tok, probs, [ids[i] for i in positions], k)


@dataclass(frozen=True)
class Change:
    aspect: str
    bert: str
    modernbert: str
    source: str  # where each side was read


@dataclass(frozen=True)
class Published:
    """A number with a published counterpart: the paper's, computed from ModernBERT-base's configuration,
    and the loaded model's own."""

    aspect: str
    published: str
    base: str
    this_model: str


def _linear_biases(encoder) -> tuple[int, int]:
    """(linear layers with a bias, bias parameters) in an encoder's modules."""
    layers = [m for m in encoder.modules() if isinstance(m, torch.nn.Linear)]
    with_bias = [m for m in layers if m.bias is not None]
    return len(with_bias), sum(m.bias.numel() for m in with_bias)


def _layer_norms(encoder) -> tuple[int, bool, float]:
    """(LayerNorms, whether any has a bias, their epsilon) in an encoder's modules."""
    norms = [m for m in encoder.modules() if isinstance(m, torch.nn.LayerNorm)]
    return len(norms), any(m.bias is not None for m in norms), float(norms[0].eps) if norms else float("nan")


def _pieces(tokenizer, probe: str) -> str:
    return " · ".join(tokenizer.tokenize(probe))


def changes(loaded_mb, loaded_bert) -> tuple[Change, ...]:
    """What ModernBERT changed against BERT, every row read from the two loaded models' configs and modules."""
    mb, bert = loaded_mb.model, loaded_bert.model
    c, b = mb.config, bert.config
    theta = c.rope_parameters
    types = c.layer_types
    globals_ = [i for i, t in enumerate(types) if t == "full_attention"]
    pos_table = bert.base_model.embeddings.position_embeddings.weight
    mb_norms, mb_norm_bias, mb_eps = _layer_norms(mb.model)
    b_norms, b_norm_bias, b_eps = _layer_norms(bert.base_model)
    mb_lin, mb_bias = _linear_biases(mb.model)
    b_lin, b_bias = _linear_biases(bert.base_model)
    probe = "Lily's Park"
    steps = BERT_STEPS * BERT_BATCH * BERT_SEQ
    return (
        Change(
            "Positions",
            f"a learned table: {pos_table.shape[0]:,} positions × {pos_table.shape[1]:,} = {pos_table.numel():,} "
            "parameters, added to the token embeddings",
            f"rotary (RoPE), no table: queries and keys turned by position · θ_i; θ base "
            f"{theta['full_attention']['rope_theta']:,.0f} (global) / "
            f"{theta['sliding_attention']['rope_theta']:,.0f} (local)",
            "embeddings.position_embeddings · config.rope_parameters",
        ),
        Change(
            "Feed-forward",
            f"{b.hidden_act}(x·W1 + b1)·W2 + b2, {b.intermediate_size:,} wide",
            f"GeGLU: Wo({c.hidden_activation}(x·W) ⊙ x·V), {c.intermediate_size:,} wide (Wi makes 2 × "
            f"{c.intermediate_size:,})",
            "config.hidden_act · config.hidden_activation, intermediate_size",
        ),
        Change(
            "Norms",
            f"post-norm: LayerNorm after each sublayer's residual sum; {b_norms} in all, "
            f"{'with' if b_norm_bias else 'without'} bias, ε = {b_eps:g}",
            f"pre-norm: LayerNorm before each sublayer (none before layer 0's attention), after the embeddings "
            f"and at the end; {mb_norms}, {'with' if mb_norm_bias else 'without'} bias, ε = {mb_eps:g}",
            "the models' LayerNorm modules",
        ),
        Change(
            "Biases",
            f"{b_lin} linear layers with a bias below the head: {b_bias:,} bias parameters",
            f"{mb_lin} linear layers with a bias below the head: {mb_bias:,} bias parameters "
            f"(attention_bias={c.attention_bias}, mlp_bias={c.mlp_bias}, norm_bias={c.norm_bias})",
            "the models' Linear modules",
        ),
        Change(
            "Attention",
            f"global in all {b.num_hidden_layers} layers",
            f"global in layers {', '.join(map(str, globals_))}; a window of ±{half_window(c)} "
            f"(local_attention {c.local_attention}) in the other {len(types) - len(globals_)}",
            "config.layer_types · config.local_attention",
        ),
        Change(
            "Context length",
            f"{b.max_position_embeddings:,} tokens",
            f"{c.max_position_embeddings:,} tokens",
            "config.max_position_embeddings",
        ),
        Change(
            "Tokenizer",
            f"{type(loaded_bert.tokenizer).__name__}, {len(loaded_bert.tokenizer):,} pieces; "
            f"'{probe}' → {_pieces(loaded_bert.tokenizer, probe)}",
            f"{type(loaded_mb.tokenizer).__name__}, {len(loaded_mb.tokenizer):,} pieces; "
            f"'{probe}' → {_pieces(loaded_mb.tokenizer, probe)}",
            "the loaded tokenizers",
        ),
        Change("Parameters", f"{parameter_count(bert):,}", f"{parameter_count(mb):,}", "the loaded models"),
        Change(
            "Training tokens (the real models)",
            f"≈ {steps / 1e9:,.0f} B token positions: {BERT_STEPS:,} steps × {BERT_BATCH} × {BERT_SEQ} "
            f"(≈ 40 epochs over {BERT_WORDS / 1e9:.1f} B words; 90% of the steps used 128-token sequences, "
            "so fewer were really read)",
            f"{PUBLISHED['training_tokens'] / 1e12:.0f} T tokens",
            "Devlin et al. 2019, §A.2 · Warner et al. 2024, §2.2",
        ),
    )


def base_parameters(loaded) -> int:
    """ModernBERT-base's parameters, counted by building it from its configuration on the meta device."""
    from transformers import ModernBertForMaskedLM

    if not loaded.is_bundled:
        return parameter_count(loaded.model)
    with torch.device("meta"):
        return parameter_count(ModernBertForMaskedLM(base_config(loaded)))


def published(loaded, base_params: int) -> tuple[Published, ...]:
    c, base = loaded.model.config, base_config(loaded)

    def every(types):
        n = global_every(types)
        return "—" if n is None else "every layer" if n == 1 else f"every {ordinal(n)} layer"

    def thetas(config):
        p = config.rope_parameters
        return f"{p['full_attention']['rope_theta']:,.0f} / {p['sliding_attention']['rope_theta']:,.0f}"

    return (
        Published("Parameters", PUBLISHED["parameters"], f"{base_params:,}", f"{parameter_count(loaded.model):,}"),
        Published(
            "Context length (tokens)",
            f"{PUBLISHED['context']:,}",
            f"{base.max_position_embeddings:,}",
            f"{c.max_position_embeddings:,}",
        ),
        Published(
            "Local window (tokens)",
            f"{PUBLISHED['window']}",
            f"{base.local_attention} (±{half_window(base)})",
            f"{c.local_attention} (±{half_window(c)})",
        ),
        Published(
            "Global attention",
            f"every {ordinal(PUBLISHED['global_every'])} layer",
            every(base.layer_types),
            every(c.layer_types),
        ),
        Published(
            "RoPE θ, global / local",
            f"{PUBLISHED['theta_global']:,.0f} / {PUBLISHED['theta_local']:,.0f}",
            thetas(base),
            thetas(c),
        ),
    )


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    """The page's values as the lesson reads them: one field per SPEC parameter (app.core.lesson.inputs_from)."""

    settled: bool = True  # the server was quiet (measure.quiet): timings taken while it was busy are taken again

    @classmethod
    def from_values(cls, values: dict, warm: dict | None = None, others: int = 0) -> "Inputs":
        """From the page's values, ``ui.warm_progress()`` and ``ui.other_pages()``."""
        return measure.timed_inputs(cls, values, warm, others)


@dataclass(frozen=True)
class Result:
    """Everything the page shows, as plain data. ``model`` / ``bert``: which checkpoints produced it."""

    model: str
    bert: str
    layers: tuple[str, ...]  # config.layer_types of the loaded ModernBERT
    half: int  # its local layers' reach on each side
    layer: int  # the layer shown (the asked one, or the last when it has fewer)
    length: int  # tokens of the long input
    rule: np.ndarray  # (length, length) bool: the shown layer's rule, True = allowed
    fill: Fill
    rope: Rope
    attention: LongInput
    cost: Cost
    feed_forwards: tuple[FeedForward, ...]
    gate: Gate
    unpadding: Unpadding
    changes: tuple[Change, ...]
    published: tuple[Published, ...]
    notes: tuple[Note, ...]
    label: str = "ModernBERT"  # the loaded ModernBERT's name (its variant's label)
    device: str = "cpu"  # where its forwards ran (and were timed)
    provisional: bool = False  # timed while the server was busy (its warm start loading models, or other visitors')


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Fill the chosen word; RoPE's spectrum and relative scores; the long input's attention, layer by layer,
    against its rule; the cost curves and timings; the gate at the chosen word; the batch padded and
    unpadded; the table of changes. Forwards go through ``cache``: the layer select re-reads stored maps."""
    mb, bert = models["modernbert"], models["bert"]
    tok, config = mb.tokenizer, mb.model.config
    txt.require_text(inputs.text, DEFAULT_TEXT)
    notes: list[Note] = []
    text, cut = txt.fit_text(inputs.text, {mb.variant.label: tok}, DEFAULTS.max_tokens)
    if cut:
        notes.append(Note(cut, "warning"))
    tk = txt.tokenize(tok, text, DEFAULTS.max_tokens)
    notes += [Note(n) for n in txt.input_notes(tk, tok, text, mb.variant.label)]
    unusual = txt.unusual_characters(text)
    if unusual:
        notes.append(
            Note(
                f"{txt.md(unusual, 30)} lie outside the English the bundled models learned from: a byte-level "
                f"BPE has no unknown piece, so each character becomes one or more byte pieces "
                f"({len(tk.ids)} tokens for {len(text)} characters)."
            )
        )
    words = tuple(w for w, _, _ in txt.split_words(text))
    candidates = [i for i in range(len(words)) if tk.pieces_of(i)]
    if not candidates:
        raise Stop(
            f"Nothing in this text is a word {mb.variant.label} can mask. Try an English sentence, e.g. "
            f"{txt.md(DEFAULT_TEXT, 100)}"
        )
    word, why = txt.choose_word(len(words), inputs.word, words)
    if why:
        notes.append(Note(why))
    if word not in candidates:
        word = min(candidates, key=lambda i: abs(i - word))
    positions = tuple(tk.pieces_of(word))
    guess = cache(fill_mask, mb, tk.ids, positions)
    fill = Fill(words, word, guess.pieces, positions, guess.first.read, guess.p_word, guess.rank, len(tk.ids))

    layer = inputs.layer
    if not 0 <= layer < len(config.layer_types):
        layer = len(config.layer_types) - 1
        notes.append(
            Note(
                f"Layer {inputs.layer} does not exist in {mb.variant.label}, which has "
                f"{len(config.layer_types)} (counted from 0): showing layer {layer}."
            )
        )
    length = min(int(inputs.length), int(config.max_position_embeddings), DEFAULTS.long_cap)
    if length < inputs.length:
        notes.append(
            Note(
                f"{mb.variant.label} reads at most {config.max_position_embeddings:,} tokens: the long "
                f"input is {length} tokens, not {inputs.length}."
            )
        )

    rope = cache(rope_demo, mb, int(inputs.seed), int(inputs.shift))
    attention = cache(long_attention, mb, length)
    settled = bool(inputs.settled)
    cost = attention_cost(mb, cache(timed_forwards, mb, length, settled), provisional=not settled)
    gate = cache(gate_demo, mb, tk.ids, positions[0], layer)
    batch = batch_sentences(text, int(inputs.batch), int(inputs.seed))
    unpad = cache(unpadding, mb, batch, settled)
    rule = allowed(config.layer_types[layer], length, half_window(config)).numpy()
    return Result(
        mb.shown_as,
        bert.shown_as,
        tuple(config.layer_types),
        half_window(config),
        layer,
        length,
        rule,
        fill,
        rope,
        attention,
        cost,
        cache(feed_forwards, mb, bert),
        gate,
        unpad,
        cache(changes, mb, bert),
        published(mb, cache(base_parameters, mb)),
        tuple(notes),
        label=mb.variant.label,
        device=str(mb.device),
        provisional=not settled,
    )


# ----------------------------------------------------------------------------- the takeaway


def takeaway(r: "Result") -> str:
    """The slide's takeaway, with the loaded model's and ModernBERT-base's layer types and context length read from
    their configs (``TAKEAWAY`` is the number-free version)."""
    (g, n), (bg, bn) = r.cost.global_layers, r.cost.base_global_layers
    context = next((p.base for p in r.published if p.aspect.startswith("Context length")), None)
    reads = f"read {context} tokens" if context else "read long inputs"
    # one line on a handout (≤ 110 characters); the counts are read from the configs
    return (
        f"RoPE and local attention ({n - g} of {n} layers here, {bn - bg} of {bn} in the base) let it {reads}, not 512."
    )
