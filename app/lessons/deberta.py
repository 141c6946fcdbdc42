"""DeBERTa's disentangled attention: every attention score taken apart into content and relative position.

He et al. (2020). BERT adds an absolute position vector to each token's embedding, so content and position
are mixed from the first layer on. DeBERTa keeps them apart: a token has a **content** vector (its hidden
state H_i) and the pair (i, j) has a **relative position** vector P at the distance δ(i, j). In every layer
the attention score of query i on key j is the sum of three terms (paper, eq. 2-4):

    A_ij = ( Q^c_i · K^c_j           content -> content (c2c)
           + Q^c_i · K^r_δ(i,j)      content -> position (c2p): what i looks for at that distance
           + K^c_j · Q^r_δ(i,j)      position -> content (p2c): what j offers to a query at that distance
           ) / sqrt(3d)

with Q^c = H W_q (+ q_bias), K^c = H W_k from the content (``in_proj``), K^r = P W_{k,r} (``pos_proj``) and
Q^r = P W_{q,r} (``pos_q_proj``) from the shared table of relative-position embeddings
(``encoder.rel_embeddings``); d is the head size, and 3 = 1 + the two position terms (``pos_att_type``
c2p|p2c), so the sum keeps the variance of one BERT score. (The paper indexes p2c by δ(j, i); Microsoft's code and
transformers read the same row δ(i, j) as c2p, and only that reproduces the model: this module follows the code.)

Relative distances. In DeBERTa v1 (microsoft/deberta-base) the distance i - j picks row
``k + clamp(i - j, -k, k - 1)`` of a table of 2k rows, k = ``max_relative_positions`` (-1: the position
limit, so within one sentence no distance is ever clipped). DeBERTa v2/v3 put distances into **log
buckets** (``position_buckets=256``): exact up to ±128, logarithmic beyond. No absolute position enters the
encoder (``position_biased_input=False``); the paper adds absolute positions only in its **enhanced mask
decoder** (EMD), just before the masked-LM softmax. transformers implements no EMD: its DebertaForMaskedLM
puts the head on the last layer, and it drops the checkpoint's absolute position table on load.

Everything here is computed from the loaded model's own modules and the hidden states each layer received
(``output_hidden_states``); tests/test_deberta.py holds the three terms' sum equal to the scores the model
feeds its softmax, and their softmax equal to its ``output_attentions``. Pure: no streamlit.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

import math
from dataclasses import dataclass

import numpy as np
import torch
from transformers.models.deberta import modeling_deberta
from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

from app import mlm
from app.core import text as txt
from app.core.lesson import Note, Stop, direct, inputs_from
from app.core.state import Param, Spec, figure_param, text_param
from app.models import device as devices

ORDER = 70  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'DeBERTa: disentangled attention'
ICON = ':material/join_inner:'
LINE = 'Content and relative position kept apart in every attention score, taken apart term by term.'


@dataclass(frozen=True)
class DebertaDefaults:
    max_tokens: int = 40  # the sentence shown, special tokens included: four heatmaps of 40 x 40 stay readable
    top_k: int = 5  # fill-mask candidates shown
    query: int = 2  # "girl"
    key: int = 6  # "ball"
    word: int = 9  # "park", the blank of the fill-mask (as in the compare lesson)
    prefix: str = "Once upon a time,"
    v3_position_buckets: int = 256  # microsoft/deberta-v3-base: position_buckets
    v3_max_position: int = 512  # ... and max_relative_positions = -1, i.e. its max_position_embeddings


DEFAULTS = DebertaDefaults()
DEFAULT_TEXT = "The little girl found a red ball in the park."
MODELS = ("deberta", "bert")

# microsoft/deberta-base's config.json: the shape whose parameters are counted beside the published size
BASE_CONFIG = dict(
    vocab_size=50265,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    max_position_embeddings=512,
    relative_attention=True,
    max_relative_positions=-1,
    pos_att_type=["c2p", "p2c"],
    position_biased_input=False,
    type_vocab_size=0,
    layer_norm_eps=1e-7,
    legacy=False,
)
PUBLISHED = dict(backbone_m=100, vocab_k=50, source="microsoft/DeBERTa README, table of pre-trained models (Base)")

# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = 'DeBERTa scores content and relative position as separate terms; no absolute position enters.'
SPEC = Spec(
    text_param(DEFAULT_TEXT, "Your sentence"),
    Param(
        "layer",
        "int",
        0,
        lo=0,
        hi=47,
        widget="select",
        label="Layer",
        help="Counted from 0: layer 0 reads the word embeddings, which carry no position at all.",
    ),
    Param("head", "int", 0, lo=0, hi=63, widget="select", label="Head", help="Counted from 0."),
    Param(
        "query",
        "int",
        DEFAULTS.query,
        lo=0,
        hi=999,
        widget="select",
        label="Query word i",
        help="The word whose score is taken apart below (its first piece when it has several). Words count from 0.",
    ),
    Param(
        "key",
        "int",
        DEFAULTS.key,
        lo=0,
        hi=999,
        widget="select",
        label="Key word j",
        help="The word it attends to (its first piece). Words count from 0.",
    ),
    Param(
        "prefix",
        "str",
        DEFAULTS.prefix,
        max_len=80,
        widget="line",
        label="Words put in front",
        help="Shifts every word of your sentence to the right by as many tokens; up to 80 characters.",
    ),
    Param(
        "word",
        "int",
        DEFAULTS.word,
        lo=0,
        hi=999,
        widget="select",
        label="Word to blank out",
        help="All of its pieces become [MASK] at once, as in the compare lesson. Words count from 0.",
    ),
    figure_param(
        (("terms", "The score taken apart: three terms"), ("shift", "Words put in front: BERT vs DeBERTa, first layer"))
    ),
)


# ----------------------------------------------------------------------------- relative positions


def relative_positions(n: int) -> torch.Tensor:
    """i - j for every query i and key j, by transformers' own ``build_relative_position``. (n, n) long"""
    x = torch.empty(n, 0)
    return modeling_deberta.build_relative_position(x, x)[0]


def v1_bucket(rel: torch.Tensor, max_relative_positions: int, length: int) -> torch.Tensor:
    """The signed distance DeBERTa v1 embeds for each i - j in a sequence of ``length`` tokens: the model
    slices rows [k - span, k + span) of its 2k-row table (span = min(length, k), ``compute_attention_span``)
    and gathers at clamp(i - j + span, 0, 2 span - 1); composed, that is row k + clamp(i - j, -span, span - 1).
    Returns that row minus k (0 = same position). Same shape as ``rel``."""
    x = torch.empty(length, 0)
    span = int(modeling_deberta.compute_attention_span(x, x, max_relative_positions))
    return torch.clamp(rel + span, 0, 2 * span - 1) - span


def v1_rows(rel: torch.Tensor, max_relative_positions: int) -> torch.Tensor:
    """The row of ``encoder.rel_embeddings`` each (i, j) of a sentence uses in DeBERTa v1. (T, T) long"""
    return max_relative_positions + v1_bucket(rel, max_relative_positions, rel.shape[-1])


def v3_bucket(
    rel: torch.Tensor, buckets: int = DEFAULTS.v3_position_buckets, max_position: int = DEFAULTS.v3_max_position
) -> torch.Tensor:
    """DeBERTa v2/v3's log bucket for each distance, by transformers' ``make_log_bucket_position``: the
    distance itself up to ±buckets/2, then logarithmic up to ±(buckets/2 - 1) + buckets/2. long"""
    return make_log_bucket_position(rel, buckets, max_position).long()


@dataclass(frozen=True)
class Positions:
    """The (i, j) -> distance -> embedding-row map of one sentence, and the two bucket functions over every
    distance the models can see. Matrices are (T, T), query i in rows, key j in columns."""

    distance: np.ndarray  # i - j
    v1_row: np.ndarray  # the row of rel_embeddings the model in use reads
    v3_bucket: np.ndarray  # what DeBERTa-v3 (256 log buckets) would map the same distance to
    max_relative_positions: int  # k of the model in use
    curve_distance: np.ndarray  # (D,) every distance -(n-1) .. n-1
    curve_v1: np.ndarray  # (D,) v1_bucket at the model's k for a sequence of its full length
    curve_v3: np.ndarray  # (D,) v3_bucket
    max_length: int  # the model's max_position_embeddings


def positions(model, length: int) -> Positions:
    attn = model.deberta.encoder.layer[0].attention.self
    k, limit = int(attn.max_relative_positions), int(model.config.max_position_embeddings)
    rel = relative_positions(length)  # (T, T)
    longest = max(limit, DEFAULTS.v3_max_position)
    d = torch.arange(-(longest - 1), longest)  # (D,)
    return Positions(
        rel.numpy(),
        v1_rows(rel, k).numpy(),
        v3_bucket(rel).numpy(),
        k,
        d.numpy(),
        v1_bucket(d, k, limit).numpy(),
        v3_bucket(d).numpy(),
        limit,
    )


# ----------------------------------------------------------------------------- the forward pass and the terms


def encoder_states(loaded, input_ids: tuple) -> tuple[torch.Tensor, torch.Tensor]:
    """One forward pass of a loaded masked LM (DeBERTa or BERT) on one sentence, no padding.

    Returns (hidden (L+1, T, H): ``hidden[l]`` is what layer l received, ``hidden[L]`` the last output;
    attentions (L, heads, T, T): the model's own ``output_attentions``), on the CPU in float32."""
    model = loaded.model
    ids = torch.tensor([input_ids], device=model.device)  # (1, T)
    with devices.forward(model):
        out = model(
            input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True, output_attentions=True
        )
    return torch.stack(out.hidden_states)[:, 0].float().cpu(), torch.stack(out.attentions)[:, 0].float().cpu()


def score_scale(attn) -> tuple[int, int, float]:
    """(head size d, scale factor 1 + number of position terms, sqrt(d * factor)) of a DisentangledSelfAttention."""
    d, factor = int(attn.attention_head_size), 1 + len(attn.pos_att_type)
    return d, factor, math.sqrt(d * factor)


def disentangled_terms(model, hidden: torch.Tensor, layer: int) -> torch.Tensor:
    """The three terms of layer ``layer``'s attention scores, from that layer's own weights.

    hidden: (T, H), the states the layer received (``encoder_states(...)[0][layer]``). Returns (3, heads, T, T):
    c2c, c2p, p2c, each already divided by sqrt(d * (1 + len(pos_att_type))), query i in rows, key j in
    columns; their sum is what the model feeds its softmax (no padding here, so nothing is masked). A term the
    model does not use (not in ``pos_att_type``) is 0."""
    attn = model.deberta.encoder.layer[layer].attention.self
    p = attn.in_proj.weight
    n = hidden.shape[0]
    with devices.forward(attn):
        h = hidden.to(p.device, p.dtype)[None]  # (1, T, H)
        q, k, _ = attn.transpose_for_scores(attn.in_proj(h)).chunk(3, dim=-1)  # each (1, heads, T, d)
        q = q + attn.transpose_for_scores(attn.q_bias[None, None, :])  # content queries carry a bias, keys none
        _, _, scale = score_scale(attn)
        q = q / scale
        c2c = (q @ k.transpose(-1, -2))[0]  # (heads, T, T)
        c2p, p2c = torch.zeros_like(c2c), torch.zeros_like(c2c)
        if attn.relative_attention:
            rows = v1_rows(relative_positions(n), int(attn.max_relative_positions)).to(p.device)  # (T, T)
            lo, hi = int(rows.min()), int(rows.max())
            table = model.deberta.encoder.get_rel_embedding()[lo : hi + 1][None]  # (1, R, H): the rows used
            rows = (rows - lo).expand(c2c.shape)  # (heads, T, T), into the slice
            if "c2p" in attn.pos_att_type:
                key_r = attn.transpose_for_scores(attn.pos_proj(table))  # (1, heads, R, d)
                c2p = torch.gather((q @ key_r.transpose(-1, -2))[0], -1, rows)  # Q^c_i · K^r_row(i,j)
            if "p2c" in attn.pos_att_type:
                query_r = attn.transpose_for_scores(attn.pos_q_proj(table)) / scale  # (1, heads, R, d)
                by_key = (k @ query_r.transpose(-1, -2))[0]  # (heads, T_j, R): K^c_j · Q^r_r
                cols = torch.arange(n, device=p.device)[None, :].expand(n, n)  # (T, T): j
                p2c = by_key[:, cols, rows[0]]  # K^c_j · Q^r_row(i,j): the same row as c2p
    return torch.stack([c2c, c2p, p2c]).float().cpu()


def bert_scores(model, hidden: torch.Tensor, layer: int) -> torch.Tensor:
    """BERT's pre-softmax attention scores of one layer from its own query/key modules:
    (H_i W_q + b_q) · (H_j W_k + b_k) / sqrt(d). hidden: (T, H) the states that layer received. (heads, T, T)"""
    attn = model.bert.encoder.layer[layer].attention.self
    p = attn.query.weight
    n = hidden.shape[0]
    with devices.forward(attn):
        h = hidden.to(p.device, p.dtype)[None]  # (1, T, H)
        q = attn.query(h).view(1, n, -1, attn.attention_head_size).transpose(1, 2)  # (1, heads, T, d)
        k = attn.key(h).view(1, n, -1, attn.attention_head_size).transpose(1, 2)
        return ((q @ k.transpose(-1, -2)) * attn.scaling)[0].float().cpu()


@dataclass(frozen=True)
class Terms:
    """One layer and head's scores taken apart; every matrix (T, T), query i in rows, key j in columns."""

    c2c: np.ndarray
    c2p: np.ndarray
    p2c: np.ndarray
    total: np.ndarray  # c2c + c2p + p2c: the scores before the softmax
    probs: np.ndarray  # softmax(total) over each row
    model_probs: np.ndarray  # the model's own output_attentions for this layer and head
    max_error: float  # max |probs - model_probs|
    head_size: int  # d
    scale_factor: int  # 1 + number of position terms (3 with c2p and p2c)
    scale: float  # sqrt(d * scale_factor), what every term is divided by
    pos_att_type: tuple[str, ...]


def take_apart(model, hidden: torch.Tensor, attentions: torch.Tensor, layer: int, head: int) -> Terms:
    terms = disentangled_terms(model, hidden[layer], layer)[:, head]  # (3, T, T)
    total = terms.sum(0)
    probs = torch.softmax(total, dim=-1)
    model_probs = attentions[layer, head]
    d, factor, scale = score_scale(model.deberta.encoder.layer[layer].attention.self)
    return Terms(
        *terms.numpy(),
        total.numpy(),
        probs.numpy(),
        model_probs.numpy(),
        float((probs - model_probs).abs().max()),
        d,
        factor,
        scale,
        tuple(model.deberta.encoder.layer[layer].attention.self.pos_att_type),
    )


# ----------------------------------------------------------------------------- shifting the sentence


def aligned(tk: txt.Tokenized, tk_shifted: txt.Tokenized, n_prefix_words: int) -> tuple[list[int], list[int]]:
    """(positions in the sentence alone, the same pieces' positions in the prefixed sentence): word w's r-th
    piece and word (w + n_prefix_words)'s r-th piece, kept only where both are the same token id (a first word
    may gain a leading space, "The" -> "ĠThe", and become another token)."""
    a, b = [], []
    for w in sorted({x for x in tk.word_of if x is not None}):
        for i, j in zip(tk.pieces_of(w), tk_shifted.pieces_of(w + n_prefix_words)):
            if tk.ids[i] == tk_shifted.ids[j]:
                a.append(i)
                b.append(j)
    return a, b


@dataclass(frozen=True)
class Shift:
    """One model's first-layer scores between the same pieces, without and with the prefix.

    without / shifted: (heads, n, n) over the n aligned pieces (query in rows); pair: the chosen query and key
    pieces' indices into them (None when one of the words has no aligned piece); max_delta: max |shifted -
    without| over every head and pair; chosen_delta: the same at the chosen layer (DeBERTa only, else None)."""

    model: str  # its label
    family: str  # deberta | bert
    shown_as: str
    pieces: tuple[str, ...]
    without: np.ndarray
    shifted: np.ndarray
    offset: int  # how many tokens the prefix moved the first aligned piece
    pair: tuple[int, int] | None
    head: int
    max_delta: float
    chosen_delta: float | None
    dropped: tuple[str, ...]  # pieces of the sentence that the prefix turned into other tokens


def _shift(loaded, tk, tk_pref, n_prefix_words, pair_words, head, cache, layer=None) -> Shift | None:
    hidden, _ = cache(encoder_states, loaded, tk.ids)
    hidden_p, _ = cache(encoder_states, loaded, tk_pref.ids)
    a, b = aligned(tk, tk_pref, n_prefix_words)
    if not a:
        return None
    scores = (
        bert_scores if loaded.variant.family == "bert" else (lambda m, h, layer: disentangled_terms(m, h, layer).sum(0))
    )
    s0 = scores(loaded.model, hidden[0], 0)[:, a][:, :, a]  # (heads, n, n)
    s1 = scores(loaded.model, hidden_p[0], 0)[:, b][:, :, b]
    chosen = None
    if layer is not None and layer > 0:
        c0 = scores(loaded.model, hidden[layer], layer)[:, a][:, :, a]
        c1 = scores(loaded.model, hidden_p[layer], layer)[:, b][:, :, b]
        chosen = float((c1 - c0).abs().max())
    firsts = [tk.pieces_of(w)[:1] for w in pair_words]
    pair = None
    if all(firsts) and all(f[0] in a for f in firsts):
        pair = (a.index(firsts[0][0]), a.index(firsts[1][0]))
    kept = set(a)
    dropped = tuple(tk.pieces[i] for i, w in enumerate(tk.word_of) if w is not None and i not in kept)
    return Shift(
        loaded.variant.label,
        loaded.variant.family,
        loaded.shown_as,
        tuple(txt.piece_text(loaded.tokenizer, tk.ids[i]) for i in a),
        s0.numpy(),
        s1.numpy(),
        b[0] - a[0],
        pair,
        min(head, s0.shape[0] - 1),
        float((s1 - s0).abs().max()),
        chosen,
        dropped,
    )


# ----------------------------------------------------------------------------- the masked-LM head


def masked_probs(loaded, input_ids: tuple, positions: tuple) -> torch.Tensor:
    """P(token) at ``positions`` of ``input_ids`` (where the mask token already stands). (n, V) float32 CPU"""
    ids = torch.tensor([input_ids], device=loaded.model.device)  # (1, T)
    return mlm.probabilities_at(loaded.model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)}, positions)


@dataclass(frozen=True)
class Decoder:
    """What the checkpoint in use does where the paper has its enhanced mask decoder, read off the model."""

    position_biased_input: bool  # absolute positions added to the input embeddings
    position_table: bool  # the model has an absolute position embedding table at all
    dropped_on_load: tuple[str, ...]  # weights transformers ignores in a checkpoint (DebertaPreTrainedModel)
    head: str  # the masked-LM head's module name


def decoder_facts(model) -> Decoder:
    legacy = bool(getattr(model.config, "legacy", True))
    return Decoder(
        bool(getattr(model.config, "position_biased_input", True)),
        model.deberta.embeddings.position_embeddings is not None,
        tuple(modeling_deberta.DebertaPreTrainedModel._keys_to_ignore_on_load_unexpected or ()),
        "cls.predictions" if legacy else "lm_predictions.lm_head",
    )


# ----------------------------------------------------------------------------- sizes


@dataclass(frozen=True)
class Size:
    """Parameters of a DebertaForMaskedLM: total = embeddings (the token table) + backbone + head."""

    name: str
    total: int
    embeddings: int
    head: int

    @property
    def backbone(self) -> int:
        return self.total - self.embeddings - self.head


def size_of(name: str, model) -> Size:
    head = model.lm_predictions if hasattr(model, "lm_predictions") else model.cls
    return Size(
        name,
        sum(p.numel() for p in model.parameters()),
        model.deberta.embeddings.word_embeddings.weight.numel(),
        sum(p.numel() for p in head.parameters()),
    )


def base_size() -> Size:
    """microsoft/deberta-base's shape (BASE_CONFIG), instantiated on the meta device: no weights allocated."""
    from transformers import DebertaConfig, DebertaForMaskedLM

    with torch.device("meta"):
        model = DebertaForMaskedLM(DebertaConfig(**BASE_CONFIG))
    return size_of("microsoft/deberta-base (its config, on the meta device)", model)


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    """The page's values as the lesson reads them: one field per SPEC parameter (app.core.lesson.inputs_from)."""


@dataclass(frozen=True)
class Result:
    """Everything the page shows, as plain data. tokens: DeBERTa's pieces as read, T of them; words: the
    sentence's words (split_words, counted from 0); choosable: the words that have a DeBERTa piece; query_pos /
    key_pos: the token positions of the chosen words' first pieces. layer, head, query, key, word: the values
    used (a value that did not fit this sentence or model was moved, with a note)."""

    text: str
    tokens: tuple[str, ...]
    words: tuple[str, ...]
    choosable: tuple[int, ...]
    n_layers: int
    n_heads: int
    layer: int
    head: int
    query: int
    key: int
    word: int
    query_pos: int
    key_pos: int
    terms: Terms
    positions: Positions
    shifts: tuple[Shift, ...]  # DeBERTa, then BERT (either may be missing); () when there is no prefix
    prediction: mlm.WordFill  # the blanked word: every piece masked at once
    decoder: Decoder
    sizes: tuple[Size, ...]  # the model in use, then microsoft/deberta-base's shape
    notes: tuple[Note, ...]


def _nearest(index: int, allowed: tuple[int, ...]) -> int:
    return index if index in allowed else min(allowed, key=lambda w: (abs(w - index), w))


def _word_choice(name: str, index: int, words: tuple[str, ...], allowed: tuple[int, ...], notes: list) -> int:
    chosen, why = txt.choose_word(len(words), index, words)
    if why:
        notes.append(Note(f"{name}: {why}"))
    if chosen not in allowed:
        moved = _nearest(chosen, allowed)
        notes.append(
            Note(
                f"{name}: word {chosen} ({txt.md(words[chosen])}) has no DeBERTa piece of its own; "
                f"using word {moved} ({txt.md(words[moved])})."
            )
        )
        chosen = moved
    return chosen


def _fit(text: str, tokenizers: dict, notes: list) -> str:
    """The sentence cut (at a word boundary) to DEFAULTS.max_tokens tokens in every tokenizer, with a note."""
    fitted, cut = txt.fit_text(text, tokenizers, DEFAULTS.max_tokens)
    if cut:
        notes.append(
            Note(
                f"Your text is longer than this lesson shows: it takes {txt.kept_words(fitted, text)} "
                f"(at most {DEFAULTS.max_tokens} tokens with [CLS] and [SEP], so that every "
                "cell of the heatmaps stays readable). The rest is cut.",
                "warning",
            )
        )
    return fitted


def _input_notes(text: str, tk: txt.Tokenized, loaded) -> list[Note]:
    notes = [Note(n) for n in txt.input_notes(tk, loaded.tokenizer, text, loaded.variant.label)]
    odd = txt.unusual_characters(text)
    if odd:
        notes.append(
            Note(
                f"{txt.md(odd, 30)} {'is' if len(odd) == 1 else 'are'} outside the English stories the "
                f"models learned from. {loaded.variant.label}'s byte-level BPE never gives up: it spells such "
                "characters as raw UTF-8 bytes, several pieces per character, which mean nothing to it — "
                "expect the scores and guesses there to be noise."
            )
        )
    return notes


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Fit the sentence -> DeBERTa's forward (cached: every layer's input and attentions) -> the chosen layer and
    head taken apart (cheap: changing layer, head or words never re-runs the model) -> the relative-position
    map -> the same sentence behind a prefix, in DeBERTa and BERT (cached forwards) -> fill-mask on one word."""
    deb, bert = models["deberta"], models.get("bert")
    tok = deb.tokenizer
    txt.require_text(inputs.text, DEFAULT_TEXT)
    notes: list[Note] = []
    tokenizers = {deb.variant.label: tok} | ({bert.variant.label: bert.tokenizer} if bert else {})
    text = _fit(inputs.text, tokenizers, notes)
    tk = txt.tokenize(tok, text)
    notes += _input_notes(text, tk, deb)
    words = tuple(w for w, _, _ in txt.split_words(text))
    choosable = tuple(sorted({w for w in tk.word_of if w is not None}))
    if not choosable:
        raise Stop(
            "Nothing in this text became a word piece for DeBERTa (only special tokens such as "
            f"{txt.md(tok.mask_token)} or characters its tokenizer drops), so there is no attention between words "
            f"to take apart. Try an English sentence, e.g. {txt.md(DEFAULT_TEXT)}."
        )

    config = deb.model.config
    n_layers, n_heads = int(config.num_hidden_layers), int(config.num_attention_heads)
    layer, head = min(inputs.layer, n_layers - 1), min(inputs.head, n_heads - 1)
    if layer != inputs.layer:
        notes.append(Note(f"{deb.variant.label} has {n_layers} layers (0 to {n_layers - 1}); showing layer {layer}."))
    if head != inputs.head:
        notes.append(
            Note(f"{deb.variant.label} has {n_heads} heads per layer (0 to {n_heads - 1}); showing head {head}.")
        )
    query = _word_choice("Query word", inputs.query, words, choosable, notes)
    key = _word_choice("Key word", inputs.key, words, choosable, notes)
    word = _word_choice("Blanked word", inputs.word, words, choosable, notes)

    hidden, attentions = cache(encoder_states, deb, tk.ids)  # (L+1, T, H), (L, heads, T, T)
    terms = take_apart(deb.model, hidden, attentions, layer, head)
    where = positions(deb.model, len(tk.ids))

    shifts: list[Shift] = []
    prefix = inputs.prefix.strip()
    if prefix:
        shifted_text = f"{prefix} {text}"
        n_prefix_words = len(txt.split_words(prefix))
        for loaded, at_layer in ((deb, layer), (bert, None)):
            if loaded is None:
                continue
            t0 = txt.tokenize(loaded.tokenizer, text)
            t1 = txt.tokenize(loaded.tokenizer, shifted_text)  # cut at the model's own limit if need be
            shift = _shift(loaded, t0, t1, n_prefix_words, (query, key), head, cache, at_layer)
            if shift is not None:
                shifts.append(shift)

    masked = tk.pieces_of(word)
    ids = list(tk.ids)
    gold = [ids[i] for i in masked]
    for i in masked:
        ids[i] = tok.mask_token_id
    probs = cache(masked_probs, deb, tuple(ids), tuple(masked))  # (n, V)
    prediction = mlm.fill_word(tok, probs, gold, DEFAULTS.top_k)

    sizes = (size_of(f"{deb.variant.label} in use ({deb.shown_as})", deb.model), cache(base_size))
    return Result(
        text,
        tuple(txt.piece_text(tok, i) for i in tk.ids),
        words,
        choosable,
        n_layers,
        n_heads,
        layer,
        head,
        query,
        key,
        word,
        tk.pieces_of(query)[0],
        tk.pieces_of(key)[0],
        terms,
        where,
        tuple(shifts),
        prediction,
        decoder_facts(deb.model),
        sizes,
        tuple(notes),
    )


#: a first-layer score that moved by less than this behind the prefix "stays the same" (float32 rounding of
#: scores of order 1–10 is ~1e-6)
SAME_SCORE = 1e-3


def shift_story(shifts) -> str:
    """What the prefix figure shows, computed from it: for each model whether its first-layer scores stayed the
    same behind the prefix (every dot on the diagonal) or moved, and why that is (or is not) what its inputs
    predict — DeBERTa's first layer reads word embeddings and relative distances only; BERT's adds absolute
    positions."""
    out = []
    for s in shifts:
        same = s.max_delta <= SAME_SCORE
        if s.family == "deberta":
            out.append(
                f"{s.model}'s first layer: largest change {s.max_delta:.1e}, "
                + (
                    "so its dots sit on the diagonal: it reads the word embeddings only (`position_biased_input = "
                    "False`), and two words of your sentence stay the same distance apart, so all three terms — and "
                    "their sum — come out the same."
                    if same
                    else "so its dots leave the diagonal here: with relative positions only they should not move, "
                    "so this model also reads something absolute (check `position_biased_input`) or the prefix "
                    "changed how your words are split."
                )
            )
        else:
            out.append(
                f"{s.model}'s first layer: largest change {s.max_delta:.1e}, "
                + (
                    "so the same pair scores differently once it has moved: BERT reads word + *absolute* position."
                    if not same
                    else "so its scores did not move either — unexpected for absolute positions; a prefix "
                    "of a word or two may leave them almost unchanged in a model this small."
                )
            )
    return " ".join(out)
