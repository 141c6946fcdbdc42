"""Attention in every layer: run any catalogue variant with ``output_attentions=True``, look at every head
with bertviz, and aggregate.

``model(**inputs, output_attentions=True).attentions`` is a tuple with one tensor per layer, each
``(batch, heads, T, T)``; row i of a head's matrix says how token i (the *query*) spreads its attention
over all tokens (the *keys*): non-negative, summing to 1. The models are loaded with eager attention
(transformers 5's sdpa returns none). Layers and heads count from 1, as in bertviz.

Two ways to see many heads and layers at once:

- the **mean** over heads (one map per layer) or over heads and layers (one map);
- **attention rollout** (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): each layer
  also passes its input on through the residual connection, so its effective mixing is
  ``Â = 0.5·A + 0.5·I`` (A = the mean over heads), rows renormalised; token-to-token flow through layers
  1..L is the product ``Â_L ··· Â_2 · Â_1``. A product of row-stochastic matrices is row-stochastic, so
  rollout rows sum to 1 like attention rows.

Family notes (``run`` says them): ALBERT's layers share one set of weights, so its layers differ only in
their input. XLNet has two streams; without ``target_mapping`` XLNetLMHeadModel runs only the content
stream (every token sees every token, itself included), and its attentions come back as
``(batch, heads, T, T)`` like the others (transformers permutes them from XLNet's ``ijbn`` layout).
ModernBERT attends within a sliding window in most layers (a global layer every few), so far-apart cells
of those layers are exactly 0. DeBERTa's scores add content-to-position and position-to-content terms;
what comes out is still one probability per (query, key).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

from dataclasses import dataclass

import numpy as np

from app import bertviz_fit
from app.core import text as txt
from app.core.lesson import Note, Stop, direct, inputs_from
from app.models import catalogue, device as devices
from app.core.state import Param, Spec, figure_param, text_param

ORDER = 110  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'Attention in every layer'
ICON = ':material/visibility:'
LINE = 'bertviz head and model views for any variant — offline and injection-safe — plus mean and rollout maps.'


@dataclass(frozen=True)
class AttentionDefaults:
    max_tokens: int = 40  # the cap on tokens (specials included) a view shows
    min_tokens: int = 8
    most_tokens: int = 128
    residual: float = 0.5  # rollout's weight on the identity: Â = (1 - residual)·A + residual·I


DEFAULTS = AttentionDefaults()
DEFAULT_TEXT = "The little girl found a red ball in the park."
VIEWS = (("head", "Head view (one layer, lines per head)"), ("model", "Model view (every layer × every head)"))
AGGREGATES = (
    ("layer", "One layer: the chosen head, or the mean of its heads"),
    ("mean", "Mean over every layer and head"),
    ("rollout", "Attention rollout through all layers"),
)
# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = 'Every head of every layer has its own map; attention weights hint at the flow, they do not explain it.'
SPEC = Spec(
    Param(
        "variant",
        "choice",
        "bert",
        choices=tuple(catalogue.CATALOGUE),
        widget="select",
        label="Variant",
        labels=tuple((k, v.label) for k, v in catalogue.CATALOGUE.items()),
        help="Any model in the catalogue; its attentions are read with output_attentions=True.",
    ),
    text_param(DEFAULT_TEXT, "Sentence A"),
    text_param(
        "", "Sentence B (optional: a second segment, in the model's own pair format)", name="text_b", shared=False
    ),
    Param(
        "max_tokens",
        "int",
        DEFAULTS.max_tokens,
        lo=DEFAULTS.min_tokens,
        hi=DEFAULTS.most_tokens,
        widget="slider",
        label="Token cap",
        help="Longer inputs are cut to this many tokens (special tokens included).",
    ),
    Param(
        "view", "choice", "head", choices=tuple(v for v, _ in VIEWS), labels=VIEWS, widget="radio", label="bertviz view"
    ),
    Param("layer", "int", 1, lo=1, hi=64, widget="select", label="Layer", help="Layers count from 1, as in bertviz."),
    Param(
        "head",
        "int",
        0,
        lo=0,
        hi=64,
        widget="select",
        label="Head",
        help="Heads count from 1, as in bertviz; 0 shows every head.",
    ),
    Param(
        "agg",
        "choice",
        "rollout",
        choices=tuple(a for a, _ in AGGREGATES),
        labels=AGGREGATES,
        widget="radio",
        label="Map",
    ),
    figure_param(
        (
            ("view", "bertviz's view (interactive)"),
            ("layers", "Every layer, mean over its heads"),
            ("map", "The map below: one layer, the mean or the rollout"),
        )
    ),
)


# ----------------------------------------------------------------------------- tokens in


@dataclass(frozen=True)
class Encoded:
    input_ids: tuple[int, ...]
    token_type_ids: tuple[int, ...] | None  # None: the model takes no token types
    tokens: tuple[str, ...]
    sentence_b_start: int | None  # the first position of segment B; None for a single sentence
    template: str  # the pair/single format, e.g. "[CLS] A [SEP] B [SEP]"
    n_full: int  # tokens the input has without the cap
    cap: int  # the cap that applied (the asked cap, or the model's own limit if lower)
    filled_token_types: bool  # token_type_ids were built here because the tokenizer gave none

    @property
    def truncated(self) -> bool:
        return self.n_full > len(self.input_ids)


def uses_token_types(model) -> bool:
    """Whether the model reads ``token_type_ids`` (a segment embedding or XLNet's segment encoding).

    BERT, ALBERT and ELECTRA have ``type_vocab_size = 2``; XLNet compares segments in every layer;
    RoBERTa (``type_vocab_size = 1``), DeBERTa (``type_vocab_size = 0``), DistilBERT and ModernBERT (no
    segment embedding) do not.
    """
    config = model.config
    if config.model_type == "xlnet":
        return True
    return int(getattr(config, "type_vocab_size", 0) or 0) > 1


def model_limit(tokenizer, model) -> int | None:
    """The most tokens the model takes (its positions), or None when it has no fixed limit."""
    limits = []
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 100_000:
        limits.append(tok_max)
    pos = getattr(model.config, "max_position_embeddings", None)
    if isinstance(pos, int) and pos > 0:
        limits.append(pos - (2 if model.config.model_type in ("roberta", "xlm-roberta") else 0))
    return min(limits) if limits else None


def _template(tokens, sequence_ids: list[int | None]) -> str:
    """'[CLS] A [SEP] B [SEP]': special tokens as they are, each run of sentence tokens as A or B."""
    out: list[str] = []
    for tok, sid in zip(tokens, sequence_ids):
        word = tok if sid is None else "AB"[sid]
        if sid is None or not out or out[-1] != word:
            out.append(word)
    return " ".join(out)


def encode(tokenizer, model, text_a: str, text_b: str = "", max_tokens: int = DEFAULTS.max_tokens) -> Encoded:
    """Tokenize sentence A (and B, if not blank) with the tokenizer's own single/pair format, capped.

    The cap counts special tokens; a pair is cut from its longer side first (``longest_first``). The pieces
    come from ``app.core.text.tokenize``; the segment map (which sentence each token is in) from the tokenizer's
    own pair encoding. When the model reads token types and the tokenizer gives none (a saved tokenizer that
    dropped them), they are built from its segments in the family's convention: 0 for A and its separator,
    1 for B and its separator, and 2 for XLNet's trailing ``<cls>``.
    Raises ValueError when sentence A is blank.
    """
    if not text_a or not text_a.strip():
        raise ValueError("Sentence A is empty.")
    pair = (text_a, text_b) if text_b and text_b.strip() else (text_a,)
    limit = model_limit(tokenizer, model)
    cap = max(DEFAULTS.min_tokens, int(max_tokens))
    cap = min(cap, limit) if limit else cap
    tk = txt.tokenize(tokenizer, text_a, cap, text_pair=pair[1] if len(pair) == 2 else None)
    segments = tokenizer(*pair, truncation=True, max_length=tk.cap, verbose=False)  # the same ids, with segments
    if tuple(segments["input_ids"]) != tk.ids:
        raise RuntimeError("the tokenizer encoded the same input twice differently")
    try:
        sequence_ids = list(segments.sequence_ids(0))
    except Exception:  # a slow tokenizer: no segment map
        sequence_ids = [None if s else 0 for s in tk.special]
    b_start = next((i for i, s in enumerate(sequence_ids) if s == 1), None)

    token_type_ids, filled = None, False
    if uses_token_types(model):
        if "token_type_ids" in segments:
            token_type_ids = tuple(segments["token_type_ids"])
        else:
            filled = True
            n = len(tk.ids)
            types = [0] * n if b_start is None else [0] * b_start + [1] * (n - b_start)
            if model.config.model_type == "xlnet" and tokenizer.cls_token_id is not None:
                types = [2 if i == tokenizer.cls_token_id else t for i, t in zip(tk.ids, types)]
            token_type_ids = tuple(types)
    return Encoded(
        tk.ids, token_type_ids, tk.pieces, b_start, _template(tk.pieces, sequence_ids), tk.n_full, tk.cap, filled
    )


# ----------------------------------------------------------------------------- the forward pass


def stack_attentions(attentions) -> np.ndarray:
    """transformers' per-layer tuple of (1, heads, T, T) tensors -> one (layers, heads, T, T) float32 array."""
    if not attentions or any(a is None for a in attentions):
        raise RuntimeError("the model returned no attentions: load it with attn_implementation='eager'")
    import torch

    stacked = torch.stack([a[0] for a in attentions])  # (layers, heads, T, T)
    return stacked.detach().to(device="cpu", dtype=torch.float32).numpy()


def attentions_of(loaded, input_ids: tuple, token_type_ids: tuple | None) -> np.ndarray:
    """Every layer's and head's attention of a loaded catalogue variant on one input: (layers, heads, T, T)
    float32, rows (queries) summing to 1. For XLNet this is the content stream (no ``target_mapping`` is
    given, so there is no query stream). The expensive step of the lesson."""
    import torch

    model = loaded.model
    ids = torch.tensor([input_ids], device=model.device)  # (1, T)
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    if token_type_ids is not None:
        inputs["token_type_ids"] = torch.tensor([token_type_ids], device=model.device)  # (1, T)
    # XLNet builds its relative positions in float32 whatever the weights are: the forward context autocasts
    with devices.forward(model):
        out = model(**inputs, output_attentions=True)
    return stack_attentions(out.attentions)


# ----------------------------------------------------------------------------- aggregation


def _check(att: np.ndarray) -> np.ndarray:
    att = np.asarray(att, dtype=np.float64)
    if att.ndim != 4 or att.shape[-1] != att.shape[-2]:
        raise ValueError(f"expected attentions of shape (layers, heads, T, T), got {att.shape}")
    return att


def mean_over_heads(att: np.ndarray) -> np.ndarray:
    """(layers, heads, T, T) -> (layers, T, T): each layer's heads averaged. Rows still sum to 1."""
    return _check(att).mean(axis=1)


def mean_attention(att: np.ndarray) -> np.ndarray:
    """(layers, heads, T, T) -> (T, T): the mean over every layer and head. Rows sum to 1."""
    return _check(att).mean(axis=(0, 1))


def residual_attention(layer_att: np.ndarray, residual: float = DEFAULTS.residual) -> np.ndarray:
    """(T, T) -> (T, T): ``(1 - residual)·A + residual·I`` with rows renormalised to sum to 1."""
    length = layer_att.shape[-1]
    mixed = (1.0 - residual) * layer_att + residual * np.eye(length)
    return mixed / mixed.sum(axis=-1, keepdims=True)


def rollout(att: np.ndarray, residual: float = DEFAULTS.residual, upto: int | None = None) -> np.ndarray:
    """Attention rollout through layers 1..``upto`` (default: all): (layers, heads, T, T) -> (T, T).

    rollout[i, j] = how much of token j's input reaches position i after those layers, following every
    path through the (mean-over-heads, residual-adjusted) attention graphs: ``Â_L ··· Â_2 · Â_1``.
    """
    per_layer = mean_over_heads(att)  # (layers, T, T)
    upto = per_layer.shape[0] if upto is None else upto
    if not 1 <= upto <= per_layer.shape[0]:
        raise ValueError(f"upto must be from 1 to {per_layer.shape[0]}")
    result = np.eye(per_layer.shape[-1])
    for layer_att in per_layer[:upto]:
        result = residual_attention(layer_att, residual) @ result  # (T, T): this layer after the ones below
    return result


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    """The page's values as the lesson reads them: one field per SPEC parameter (app.core.lesson.inputs_from)."""


@dataclass(frozen=True)
class Result:
    """One variant's attention on sentence A (and B), as plain data.

    attentions: (layers, heads, T, T), rows = the attending token. layer / head: the ones shown (from 1;
    head 0 = every head), moved into range with a note when a link asked for more than the model has.
    layers_sent: the layers bertviz's document carries (all, unless the input is long); height: the pixels the view
    needs. weights: (T, T) the map for ``agg``, described by ``what``. type_vocab_size: the config's (None when it
    has none)."""

    variant: str
    label: str
    family: str
    shown_as: str  # which model produced this (``Loaded.shown_as``)
    encoded: Encoded
    attentions: np.ndarray
    layer: int
    head: int
    layers_sent: tuple[int, ...]
    view: str  # bertviz's view ("head" | "model"): app/figures/attention.py draws it from this Result
    title: str  # the view's title: the model and the text
    height: int
    weights: np.ndarray
    what: str
    reads_token_types: bool
    type_vocab_size: int | None
    notes: tuple[Note, ...]

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.encoded.tokens

    @property
    def n_layers(self) -> int:
        return self.attentions.shape[0]

    @property
    def n_heads(self) -> int:
        return self.attentions.shape[1]

    @property
    def pair(self) -> bool:
        return self.encoded.sentence_b_start is not None


def _input_notes(tokenizer, text_a: str, text_b: str, who: str) -> list[Note]:
    """What the tokenizer did with each sentence (typed special tokens, unknown pieces), by its real cause."""
    notes = []
    for name, sentence in (("Sentence A", text_a), ("Sentence B", text_b)):
        if sentence.strip():
            said = txt.input_notes(txt.tokenize(tokenizer, sentence), tokenizer, sentence, who)
            notes += [Note(f"{name}: {n}" if text_b.strip() else n) for n in said]
    return notes


def _family_notes(loaded, n_layers: int) -> list[Note]:
    config, label = loaded.model.config, loaded.variant.label
    family = loaded.variant.family
    if family == "albert":
        return [
            Note(
                f"ALBERT shares its layers: all {n_layers} layers use the same weights (`num_hidden_groups = "
                f"{getattr(config, 'num_hidden_groups', 1)}`). The maps still differ from layer to layer because "
                "each layer's *input* differs."
            )
        ]
    if family == "xlnet":
        return [
            Note(
                "XLNet has two attention streams. This shows the **content stream**: with no `target_mapping` "
                "(nothing is being predicted here), `XLNetLMHeadModel` runs only that stream, in which every token "
                "sees every token, itself included. The query stream exists only while predicting tokens in a "
                "factorization order (see the XLNet lesson)."
            )
        ]
    if family == "modernbert":
        kinds = list(getattr(config, "layer_types", None) or [])
        full = [i + 1 for i, kind in enumerate(kinds) if kind == "full_attention"]
        window = getattr(config, "local_attention", None)
        if window and 0 < len(full) < len(kinds):
            return [
                Note(
                    f"{label} alternates global and local attention: layer{'s' if len(full) > 1 else ''} "
                    f"{', '.join(map(str, full))} attend to every token; the others see only the "
                    f"{window // 2} tokens on each side, so in those layers cells farther apart are exactly 0."
                )
            ]
    if family == "deberta":
        names = {"c2p": "content-to-position", "p2c": "position-to-content"}
        terms = [names[t] for t in (getattr(config, "pos_att_type", None) or []) if t in names]
        if getattr(config, "relative_attention", False) and terms:
            return [
                Note(
                    f"{label} scores each (query, key) pair as content-to-content + {' + '.join(terms)} "
                    "(disentangled attention over relative positions); the maps show the probabilities that "
                    "come out."
                )
            ]
    return []


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Encode -> every layer's attention (``attentions_of``, through ``cache``) -> the layers bertviz's view is sent
    (``app.bertviz_fit``) -> the chosen map. Changing the map, the layer or the head never re-runs the model; the
    view's document is drawn from the Result by app/figures/attention.py (kept there, one per Result)."""
    loaded = models[inputs.variant]
    tok, label = loaded.tokenizer, loaded.variant.label
    txt.require_text(inputs.text, DEFAULT_TEXT)
    enc = encode(tok, loaded.model, inputs.text, inputs.text_b, inputs.max_tokens)
    notes = []
    if enc.truncated:
        why = "the token cap" if enc.cap == inputs.max_tokens else f"{label}'s limit of {enc.cap} positions"
        notes.append(
            Note(
                f"The input has {enc.n_full} tokens; only the first {len(enc.input_ids)} are shown ({why}"
                f"{', cut from the longer sentence first' if enc.sentence_b_start is not None else ''}). "
                "Raise the token cap to see more.",
                "warning",
            )
        )
    notes += _input_notes(tok, inputs.text, inputs.text_b, label)
    try:
        att = cache(attentions_of, loaded, enc.input_ids, enc.token_type_ids)  # (layers, heads, T, T)
    except (RuntimeError, ValueError, IndexError) as e:  # a checkpoint that loads but cannot run (a broken one)
        raise Stop(
            f"{label} could not run on this input ({type(e).__name__}: {txt.md(str(e), 160)}). Choose another variant.",
            "error",
        ) from None
    n_layers, n_heads, length = att.shape[0], att.shape[1], att.shape[-1]
    notes += _family_notes(loaded, n_layers)

    layer, head = inputs.layer, inputs.head
    if layer > n_layers:
        notes.append(Note(f"{label} has {n_layers} layers; showing layer {n_layers} instead of {layer}."))
        layer = n_layers
    if head > n_heads:
        notes.append(Note(f"{label} has {n_heads} heads per layer; showing every head instead of head {head}."))
        head = 0

    pair = enc.sentence_b_start is not None
    layers = tuple(bertviz_fit.fit_layers(inputs.view, n_layers, n_heads, length, pair, layer))
    if len(layers) < n_layers:
        shown = f"layer {layers[0]}" if len(layers) == 1 else f"layers {layers[0]}–{layers[-1]}"
        notes.append(
            Note(
                f"This input is long for {n_layers} layers × {n_heads} heads, so bertviz gets only {shown} "
                "(choose the layer above); the maps below still use every layer. A lower token cap brings "
                "the rest back."
            )
        )
    title = f"{label} · {' / '.join(t for t in (inputs.text, inputs.text_b) if t.strip())}"[:200]

    if inputs.agg == "layer":
        weights = att[layer - 1, head - 1] if head else mean_over_heads(att)[layer - 1]
        what = f"layer {layer}, " + (f"head {head}" if head else f"mean of {n_heads} heads")
    elif inputs.agg == "mean":
        weights, what = mean_attention(att), f"mean over {n_layers} layers × {n_heads} heads"
    else:
        weights, what = rollout(att), f"rollout through {n_layers} layers"
    return Result(
        inputs.variant,
        label,
        loaded.variant.family,
        loaded.shown_as,
        enc,
        att,
        layer,
        head,
        layers,
        inputs.view,
        title,
        bertviz_fit.height_hint(inputs.view, len(layers), n_heads, length),
        weights,
        what,
        uses_token_types(loaded.model),
        getattr(loaded.model.config, "type_vocab_size", None),
        tuple(notes),
    )
