"""ALBERT's cross-layer sharing, seen in the activations: one block applied L times.

With ``num_hidden_groups=1`` ALBERT's encoder holds a single ``AlbertLayer`` and calls it L times;
BERT holds L different layers. This module measures, for any text and either model:

- per layer, between its input and output (the ALBERT paper's Figure 1): the L2 distance and the
  cosine similarity (also as an angle), averaged over the tokens;
- hidden-state norms, and the entropy of each layer's attention;
- a layer × layer similarity matrix: mean token-wise cosine, or linear CKA (Kornblith et al., 2019),
  which compares whole representations and is invariant to rotations and scale;
- that the block really is shared: forward hooks count how often each layer module runs and record
  where its weights live (``data_ptr``);
- what happens if the shared block keeps going past L (``unroll``): it is applied again and again to
  the embeddings, without touching the model;
- a word's path through the layers (its first word piece; words are app.core.text's, counted from 0),
  projected to 2-D by PCA (an exact SVD, signs fixed).

The lesson (pages/albert_activations.py) calls :func:`run`: both models' forward passes go through the
page's cache (``forward``), the unrolled block apart from them, L applications at a time (``unrolled``,
each round starting where the last ended), so the repeat slider runs only the rounds it adds and the
measure and word choices re-run nothing.

Shapes: T tokens, H hidden size, L layers. ``hidden`` is (L + 1, T, H) with hidden[0] the input to
the first layer (for ALBERT: the embeddings already projected from E up to H); ``attentions`` is
(L, heads, T, T). Everything returned is float32 on the CPU, whatever the model's device and dtype.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

import math
from dataclasses import dataclass

import torch

from app.core import text as txt
from app.core.lesson import Note, direct, inputs_from
from app.core.state import Param, Spec, figure_param, text_param
from app.models import device as devices

ORDER = 30  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'ALBERT: shared layers'
ICON = ':material/repeat:'
LINE = 'One block applied L times: how activations move layer by layer, and what happens if you keep going.'


@dataclass(frozen=True)
class Defaults:
    word: int = 2  # "girl", counted from 0
    repeat: int = 3  # unroll to repeat × L applications of the shared block
    max_repeat: int = 8
    token_cap: int = 256  # longest input the page runs (the model limit may be lower)


DEFAULTS = Defaults()
DEFAULT_TEXT = "The little girl found a red ball in the park."
MODELS = ("albert", "bert")
NAMES = {"albert": "ALBERT", "bert": "BERT"}
MEASURES = (("cka", "linear CKA"), ("cosine", "mean cosine"))
# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = "One block applied L times: ALBERT stores one layer's weights but still computes L layers."
SPEC = Spec(
    text_param(DEFAULT_TEXT, "Your text"),
    Param(
        "word",
        "int",
        DEFAULTS.word,
        lo=0,
        hi=999,
        label="Follow the word",
        widget="select",
        help="Its first word piece is traced through the layers below (words count from 0).",
    ),
    Param(
        "measure",
        "choice",
        "cka",
        choices=tuple(m for m, _ in MEASURES),
        labels=MEASURES,
        widget="radio",
        label="Layer × layer similarity",
        help="Cosine compares each token with itself at two depths. Linear CKA compares the whole sentence's "
        "representations and ignores rotations and scale.",
    ),
    Param(
        "repeat",
        "int",
        DEFAULTS.repeat,
        lo=1,
        hi=DEFAULTS.max_repeat,
        widget="slider",
        label="Unroll ALBERT's block to this many × L applications",
    ),
    figure_param((("layers", "Layer by layer: ALBERT beside BERT"), ("unrolled", "Past L: the block unrolled"))),
)


def max_tokens(loaded_model, cap: int = DEFAULTS.token_cap) -> int:
    """The most tokens this model reads here: its position table and our cap (text.tokenize also keeps to
    the tokenizer's own limit)."""
    return min(cap, getattr(loaded_model.config, "max_position_embeddings", cap))


def model_inputs(ids: tuple[int, ...]) -> dict:
    """One sequence as the model's inputs: input_ids and attention_mask, each (1, T)."""
    input_ids = torch.tensor([ids], dtype=torch.long)
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}


# ----------------------------------------------------------------------------- forward pass


def base_model(model):
    """The encoder inside a task model (AlbertForMaskedLM.albert, BertForMaskedLM.bert), or the model."""
    return getattr(model, "albert", None) or getattr(model, "bert", None) or getattr(model, "base_model", model)


@dataclass
class Trace:
    hidden: torch.Tensor  # (L + 1, T, H) float32: the input of layer 1, then each layer's output
    attentions: torch.Tensor  # (L, heads, T, T) float32, rows sum to 1


def layer_trace(model, inputs: dict) -> Trace:
    """One forward pass with every hidden state and attention map (the model must use eager attention)."""
    base = base_model(model)
    device = next(base.parameters()).device
    with devices.forward(base):
        out = base(**{k: v.to(device) for k, v in inputs.items()}, output_hidden_states=True, output_attentions=True)
    hidden = torch.stack([h[0] for h in out.hidden_states]).float().cpu()  # (L + 1, T, H)
    if not out.attentions:
        raise RuntimeError("the model returned no attentions: load it with attn_implementation='eager'")
    attentions = torch.stack([a[0] for a in out.attentions]).float().cpu()  # (L, heads, T, T)
    return Trace(hidden, attentions)


# ----------------------------------------------------------------------------- per-layer measures


def cosine_rows(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of matching rows: (..., H), (..., H) -> (...). 1 = same direction."""
    a, b = a.double(), b.double()
    return ((a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1)).clamp_min(1e-12)).float()


def transitions(hidden: torch.Tensor) -> dict[str, torch.Tensor]:
    """Input vs output of every layer, averaged over tokens (the ALBERT paper's Figure 1).

    hidden: (L + 1, T, H). Returns (L,) tensors: ``l2`` = mean ‖h_out − h_in‖, ``cosine`` = mean
    cos(h_in, h_out), ``angle`` = the mean angle in degrees (0 = the layer did not turn the vector).
    """
    x_in, x_out = hidden[:-1], hidden[1:]  # (L, T, H) each
    cos = cosine_rows(x_in, x_out)  # (L, T)
    return {
        "l2": (x_out - x_in).norm(dim=-1).mean(-1),
        "cosine": cos.mean(-1),
        "angle": torch.rad2deg(torch.acos(cos.clamp(-1, 1))).mean(-1),
    }


def hidden_norms(hidden: torch.Tensor) -> torch.Tensor:
    """Mean L2 norm of the token vectors at every depth: (L + 1, T, H) -> (L + 1,)."""
    return hidden.norm(dim=-1).mean(-1)


def attention_entropy(attentions: torch.Tensor) -> torch.Tensor:
    """Entropy in bits of every attention row, averaged over heads and queries: (L, heads, T, T) -> (L,).

    0 = every query looks at one token; log2(T) = it spreads evenly over all T tokens.
    """
    p = attentions.double().clamp_min(0)
    h = -(p * torch.log2(p.clamp_min(1e-30))).sum(-1)  # (L, heads, T)
    return h.mean(dim=(1, 2)).float()


def cosine_matrix(hidden: torch.Tensor) -> torch.Tensor:
    """Mean token-wise cosine between every pair of depths: (D, T, H) -> (D, D), 1 on the diagonal."""
    h = hidden.double()
    unit = h / h.norm(dim=-1, keepdim=True).clamp_min(1e-12)  # (D, T, H)
    return torch.einsum("ath,bth->abt", unit, unit).mean(-1).float()


def linear_cka(x: torch.Tensor, y: torch.Tensor) -> float:
    """Linear centered kernel alignment of two representations of the same T samples.

    x: (T, H1), y: (T, H2). ‖Yᶜᵀ Xᶜ‖²_F / (‖Xᶜᵀ Xᶜ‖_F ‖Yᶜᵀ Yᶜ‖_F) with columns centred over the samples.
    1 = the same up to rotation and scale; nan when either is constant over the samples.
    """
    x = x.double() - x.double().mean(0, keepdim=True)
    y = y.double() - y.double().mean(0, keepdim=True)
    num = (y.T @ x).norm() ** 2
    den = (x.T @ x).norm() * (y.T @ y).norm()
    return float(num / den) if den > 0 else math.nan


def cka_matrix(hidden: torch.Tensor) -> torch.Tensor:
    """Linear CKA between every pair of depths, tokens as samples: (D, T, H) -> (D, D).

    The same number as :func:`linear_cka` for every pair, computed through the T × T Gram matrices
    (‖YᵀX‖²_F = ⟨XXᵀ, YYᵀ⟩_F): one (D, T²) product instead of D² products of H × H matrices, which is what
    keeps it instant at base size (H = 768) where T is a sentence."""
    h = hidden.double()
    h = h - h.mean(1, keepdim=True)  # centre each depth's columns over the tokens
    gram = (h @ h.transpose(1, 2)).flatten(1)  # (D, T²)
    inner = gram @ gram.T  # (D, D): ⟨K_a, K_b⟩_F
    norm = inner.diagonal().clamp_min(0).sqrt()
    den = norm[:, None] * norm[None, :]
    out = torch.where(den > 0, inner / den.clamp_min(torch.finfo(torch.float64).tiny), torch.nan)
    return out.float()


def similarity_matrix(hidden: torch.Tensor, measure: str) -> torch.Tensor:
    if measure == "cosine":
        return cosine_matrix(hidden)
    if measure == "cka":
        return cka_matrix(hidden)
    raise ValueError(f"measure must be 'cosine' or 'cka', not {measure!r}")


# ----------------------------------------------------------------------------- is it really one block?


def layer_modules(model) -> list[tuple[str, torch.nn.Module]]:
    """(name, module) for every distinct transformer-layer module, in order. ALBERT with
    num_hidden_groups=1 has one; BERT has L."""
    base = base_model(model)
    if hasattr(base.encoder, "albert_layer_groups"):
        return [
            (f"albert_layer_groups.{g}.albert_layers.{i}", layer)
            for g, group in enumerate(base.encoder.albert_layer_groups)
            for i, layer in enumerate(group.albert_layers)
        ]
    return [(f"layer.{i}", layer) for i, layer in enumerate(base.encoder.layer)]


@dataclass
class CallLog:
    modules: list[str]  # names of the distinct layer modules
    calls: list[dict]  # one per layer application: {"call", "module", "module_id", "query_weight_ptr"}

    @property
    def distinct_modules_called(self) -> int:
        return len({c["module_id"] for c in self.calls})

    @property
    def distinct_storages(self) -> int:
        return len({c["query_weight_ptr"] for c in self.calls})


def _query_weight(layer: torch.nn.Module) -> torch.Tensor:
    attention = layer.attention
    return getattr(attention, "query", None).weight if hasattr(attention, "query") else attention.self.query.weight


def count_layer_calls(model, inputs: dict) -> CallLog:
    """Run the model once with a forward hook on every layer module; record each call.

    The hooks are removed in a ``finally`` whatever happens, so the (shared, cached) model is left as
    it was.
    """
    base = base_model(model)
    device = next(base.parameters()).device
    named = layer_modules(model)
    calls: list[dict] = []
    handles = []
    try:
        for name, layer in named:

            def hook(module, args, output, name=name):
                calls.append(
                    {
                        "call": len(calls) + 1,
                        "module": name,
                        "module_id": id(module),
                        "query_weight_ptr": _query_weight(module).data_ptr(),
                    }
                )

            handles.append(layer.register_forward_hook(hook))
        with devices.forward(base):
            base(**{k: v.to(device) for k, v in inputs.items()})
    finally:
        for h in handles:
            h.remove()
    return CallLog([n for n, _ in named], calls)


def layer_parameters(model, index: int = 0) -> list[dict]:
    """The parameters of one layer module: name, shape, count and where its storage starts."""
    name, layer = layer_modules(model)[index]
    return [
        {
            "parameter": f"{name}.{n}",
            "shape": "×".join(map(str, p.shape)),
            "numel": p.numel(),
            "data_ptr": hex(p.data_ptr()),
        }
        for n, p in layer.named_parameters()
    ]


# ----------------------------------------------------------------------------- unrolling past L


def is_fully_shared(model) -> bool:
    base = base_model(model)
    cfg = base.config
    return getattr(cfg, "model_type", "") == "albert" and cfg.num_hidden_groups == 1 and cfg.inner_group_num == 1


def unroll(model, inputs: dict, applications: int, start: torch.Tensor | None = None) -> torch.Tensor:
    """Apply ALBERT's one shared block ``applications`` times to the (projected) embeddings, or to ``start``
    (T, H), a state an earlier unroll of the same inputs reached: unroll(m, x, a + b) equals
    unroll(m, x, a) followed by unroll(m, x, b, start=that[-1]).

    The same computation as ``AlbertTransformer.forward`` for the first L steps, continued past L.
    Reads the model, never changes it (no config edits, no hooks). Returns (applications + 1, T, H)
    float32: [0] is the input to the first application (or ``start``), [k] the output of the k-th.
    """
    from transformers.masking_utils import create_bidirectional_mask

    if not is_fully_shared(model):
        raise ValueError("unrolling needs an ALBERT whose layers are all shared (num_hidden_groups = 1)")
    if applications < 0:
        raise ValueError("applications must be ≥ 0")
    base = base_model(model)
    device = next(base.parameters()).device
    inputs = {k: v.to(device) for k, v in inputs.items()}
    block = base.encoder.albert_layer_groups[0]
    with devices.forward(base):
        emb = base.embeddings(inputs["input_ids"], token_type_ids=inputs.get("token_type_ids"))  # (1, T, E)
        mask = create_bidirectional_mask(
            config=base.config, inputs_embeds=emb, attention_mask=inputs.get("attention_mask")
        )
        h = base.encoder.embedding_hidden_mapping_in(emb)  # (1, T, H)
        if start is not None:
            if tuple(start.shape) != tuple(h.shape[1:]):
                raise ValueError(f"start must be (T, H) = {tuple(h.shape[1:])}, not {tuple(start.shape)}")
            h = start.to(device=device, dtype=h.dtype)[None]
        states = [h[0].float().cpu()]
        for _ in range(applications):
            h = block(h, mask)
            states.append(h[0].float().cpu())
    return torch.stack(states)  # (applications + 1, T, H)


def steps(states: torch.Tensor, reference: int) -> dict[str, torch.Tensor]:
    """How much each application changes the state. states: (N + 1, T, H). Returns (N,) tensors:
    ``l2`` mean ‖h_k − h_{k−1}‖, ``relative`` that over mean ‖h_{k−1}‖, ``cosine`` mean cos(h_{k−1}, h_k),
    ``cosine_to_reference`` mean cos(h_k, h_reference) (reference = L, where the model stops)."""
    prev, cur = states[:-1], states[1:]
    l2 = (cur - prev).norm(dim=-1).mean(-1)
    return {
        "l2": l2,
        "relative": l2 / prev.norm(dim=-1).mean(-1).clamp_min(1e-12),
        "cosine": cosine_rows(prev, cur).mean(-1),
        "cosine_to_reference": cosine_rows(cur, states[reference].expand_as(cur)).mean(-1),
    }


def convergence_summary(step_l2: torch.Tensor, layers: int) -> dict:
    """Plain numbers for the takeaway: the change made by the first application, by the L-th and by the
    last, and the trend after L: "settling" (the last step is under half the L-th), "slowing" (smaller,
    but not by half) or "not settling" (as large or larger)."""
    first, at_l, last = float(step_l2[0]), float(step_l2[layers - 1]), float(step_l2[-1])
    ratio = last / at_l if at_l else math.nan
    trend = "settling" if ratio < 0.5 else "slowing" if ratio < 1.0 else "not settling"
    return {"first": first, "at_L": at_l, "last": last, "ratio_last_at_L": ratio, "trend": trend}


INTRO = (
    "BERT stacks L *different* transformer layers. ALBERT keeps **one** layer and applies it L times: the "
    "output of one pass is the input of the next, through the very same weights. What does that do to the "
    "representation? The ALBERT paper (Figure 1) measured, for every layer, how far its output moves from its "
    "input, and found ALBERT's transitions *smoother* than BERT's, oscillating rather than converging: the "
    "paper reports no settling within L. Here are the same measures, live, for your sentence, with ALBERT and "
    "BERT side by side. You can also keep applying ALBERT's block **past** L — a question the paper did not ask "
    "— and measure whether the tokens settle there."
)
TRENDS = {  # past L, from the measured steps (unroll_summary's trend): what this block does, not the paper's claim
    "settling": "keep shrinking — past L this block moves the tokens less and less, as it would near a fixed point",
    "slowing": "shrink, but slowly — the tokens are still drifting when we stop",
    "not settling": "do not shrink — the block keeps moving the tokens, with no fixed point in sight",
}


def step_shape(values) -> str:
    """How a sequence of per-layer steps moves: "shrinking" or "growing" at every layer, "oscillating" (up and
    down: the direction changes at least once) or "flat" (every step within 5% of the first)."""
    v = [float(x) for x in values]
    if len(v) < 2 or all(abs(x - v[0]) <= 0.05 * abs(v[0]) for x in v):
        return "flat"
    d = [b - a for a, b in zip(v, v[1:])]
    if all(x < 0 for x in d):
        return "shrinking"
    if all(x > 0 for x in d):
        return "growing"
    return "oscillating"


SHAPES = {
    "shrinking": "shrink at every layer (converging)",
    "growing": "grow at every layer",
    "oscillating": "go up and down (oscillating)",
    "flat": "stay about the same (within 5%)",
}


def layers_story(r: "Result") -> str:
    """What the layer-by-layer figure shows, computed from it: whether ALBERT's first layer (which starts from
    the embeddings projected from E up to H) makes the largest step, how the later steps move in each model,
    and whether that matches what the paper reports (Lan et al. 2020, Figure 1 and §3.1: ALBERT's layer-to-layer
    transitions smoother than BERT's, oscillating rather than converging)."""
    a, b = r.albert, r.bert
    l2a, l2b = [float(x) for x in a.series["l2"]], [float(x) for x in b.series["l2"]]
    out = []
    if len(l2a) > 1:
        later = max(l2a[1:])
        out.append(
            f"ALBERT's first layer starts from the embeddings projected from E up to H, not yet normalized "
            f"at width H: here its step (L2 {l2a[0]:.2f}) "
            + (
                f"is the largest (at most {later:.2f} after it), so compare the layers after it."
                if l2a[0] > later
                else f"is not the largest ({later:.2f} later on)."
            )
        )
    shape_a, shape_b = step_shape(l2a[1:] or l2a), step_shape(l2b)
    out.append(
        f"After it, ALBERT's steps {SHAPES[shape_a]} and turn the tokens by {a.turn[0]:.1f}°–{a.turn[1]:.1f}° "
        f"a layer; BERT's {b.layers} separate layers' steps {SHAPES[shape_b]}, turning them by "
        f"{b.turn[0]:.1f}°–{b.turn[1]:.1f}°."
    )
    paper = (
        "The paper reports ALBERT's transitions as smoother than BERT's, oscillating rather than converging "
        "(Figure 1: 24-layer models trained on billions of tokens)"
    )
    if shape_a == "oscillating":
        out.append(f"{paper}; this stand-in oscillates too.")
    else:
        out.append(
            f"{paper}; this {a.layers}-layer stand-in's steps {SHAPES[shape_a].split(' (')[0]} instead, so it "
            "does not show that here."
        )
    return " ".join(out)


# ----------------------------------------------------------------------------- trajectories


def pca_2d(points: torch.Tensor, extra: torch.Tensor | None = None):
    """Project (N, H) points onto their top two principal components (exact SVD, deterministic signs:
    each component's largest loading is positive). ``extra`` (M, H) is projected with the same basis.

    Returns (coords (N, 2), extra coords (M, 2) or None, explained variance ratio (2,)).
    """
    x = points.double()
    mean = x.mean(0, keepdim=True)
    _, s, vh = torch.linalg.svd(x - mean, full_matrices=False)
    comps = vh[:2]  # (2, H)
    signs = torch.sign(comps.gather(1, comps.abs().argmax(1, keepdim=True)))
    comps = comps * torch.where(signs == 0, torch.ones_like(signs), signs)
    if comps.shape[0] < 2:  # a single feature: pad with zeros
        comps = torch.cat([comps, torch.zeros(2 - comps.shape[0], comps.shape[1], dtype=comps.dtype)])
    var = s**2
    ratio = torch.zeros(2, dtype=torch.double)
    total = var.sum()
    if total > 0:
        ratio[: min(2, len(var))] = var[:2] / total
    coords = ((x - mean) @ comps.T).float()
    extra_coords = None if extra is None else ((extra.double() - mean) @ comps.T).float()
    return coords, extra_coords, ratio.float()


def trajectory(hidden: torch.Tensor, token: int, extra: torch.Tensor | None = None):
    """A token's path through the layers in 2-D. The PCA is fitted on every token at every layer output
    (depths 1..L of ``hidden`` (D, T, H); all depths when D = 1), so the path is drawn in a view the
    whole sentence shares; the input (depth 0, for ALBERT the projected embeddings, on another scale)
    is projected into that view rather than allowed to dominate it.

    Returns {"path": (D, 2), "cloud": (D, T, 2), "extra": (M, 2) or None (``extra`` (M, T, H), e.g. the
    unrolled applications past L, projected with the same basis), "explained": (2,) of the fitted points}.
    """
    d, t, h = hidden.shape
    fit = hidden[1:] if d > 1 else hidden
    rest = torch.cat([hidden.reshape(d * t, h)] + ([] if extra is None else [extra[:, token]]))  # (D·T + M, H)
    _, coords, ratio = pca_2d(fit.reshape(-1, h), rest)
    cloud = coords[: d * t].reshape(d, t, 2)
    extra_coords = None if extra is None else coords[d * t :]
    return {"path": cloud[:, token], "cloud": cloud, "extra": extra_coords, "explained": ratio}


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    new_text: bool = False  # the text changed since ``word`` was chosen: follow its nearest content word instead


@dataclass(frozen=True)
class Forward:
    """One model's forward pass over one sequence, reduced to what the lesson reads (the expensive step)."""

    hidden: torch.Tensor  # (L + 1, T, H) float32 on the CPU
    entropy: torch.Tensor  # (L,) attention entropy in bits (the attentions themselves are not kept)
    calls: CallLog  # every layer application, from forward hooks
    parameters: tuple[dict, ...]  # the first layer module's parameters (ALBERT: the one shared block)
    fully_shared: bool  # an ALBERT with one block for every layer (num_hidden_groups = 1)


def forward(loaded, ids: tuple[int, ...]) -> Forward:
    """Run ``loaded`` (app.models.loading.Loaded) on ``ids``: hidden states, attention entropy, and a second
    pass with hooks that log every layer call."""
    inputs = model_inputs(ids)
    trace = layer_trace(loaded.model, inputs)
    return Forward(
        trace.hidden,
        attention_entropy(trace.attentions),
        count_layer_calls(loaded.model, inputs),
        tuple(layer_parameters(loaded.model, 0)),
        is_fully_shared(loaded.model),
    )


def unrolled(loaded, ids: tuple[int, ...], applications: int, start: torch.Tensor | None = None) -> torch.Tensor:
    """ALBERT's shared block applied ``applications`` times to ``ids`` (from ``start`` when given, see
    :func:`unroll`): (applications + 1, T, H)."""
    return unroll(loaded.model, model_inputs(ids), applications, start)


def unrolled_to(loaded, ids: tuple[int, ...], repeat: int, layers: int, cache=direct) -> torch.Tensor:
    """The block applied repeat × L times, (repeat × L + 1, T, H), built from L-application rounds that each
    go through ``cache`` and start where the one before ended: moving the repeat slider up runs only the new
    rounds, moving it down runs nothing."""
    rounds = [cache(unrolled, loaded, ids, layers)]
    for _ in range(1, repeat):
        rounds.append(cache(unrolled, loaded, ids, layers, rounds[-1][-1]))
    return torch.cat([rounds[0]] + [r[1:] for r in rounds[1:]])


@dataclass(frozen=True)
class View:
    """One model's side of the lesson. series: l2, cosine, angle (L,) per layer, norm (L + 1,) per depth,
    entropy (L,); similarity: (L + 1, L + 1) under the chosen measure; turn: the (smallest, largest) mean
    angle a layer turns the tokens by (ALBERT: after its first layer, which starts from the projected
    embeddings); piece: the position of the followed word's first piece (None when truncated away);
    path: its trajectory (see :func:`trajectory`), None without a piece."""

    name: str  # ALBERT | BERT
    shown_as: str  # which model (Loaded.shown_as)
    tokens: tuple[str, ...]
    layers: int
    series: dict
    similarity: torch.Tensor
    calls: CallLog
    parameters: tuple[dict, ...]
    turn: tuple[float, float]
    piece: int | None
    path: dict | None


@dataclass(frozen=True)
class Unrolled:
    """ALBERT's block applied past L. check: the largest |difference| between our L-th application and the
    model's own output (0 up to float rounding); summary: convergence_summary, None when we stop at L."""

    applications: int
    steps: dict
    check: float
    summary: dict | None


@dataclass(frozen=True)
class Result:
    albert: View
    bert: View
    words: tuple[str, ...]  # split_words(text), counted from 0
    word: int  # the word followed (the asked one, or the last when it is beyond the text)
    measure: str
    unrolled: Unrolled | None  # None when the ALBERT does not share one block
    notes: tuple[Note, ...]


def _turn(angle: torch.Tensor, skip_first: bool) -> tuple[float, float]:
    later = angle[1:] if skip_first and len(angle) > 1 else angle
    return float(later.min()), float(later.max())


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Both models on the text (their forward passes through ``cache``), ALBERT's block unrolled to
    repeat × L applications (cached apart: moving the slider re-runs only that), then the cheap measures:
    per-layer statistics, the chosen similarity matrix and the followed word's path."""
    txt.require_text(inputs.text, DEFAULT_TEXT)
    words = txt.split_words(inputs.text)
    asked = txt.word_for_new_text(words, inputs.word) if inputs.new_text else int(inputs.word)  # never "." for new text
    word, why = txt.choose_word(len(words), asked, words)
    notes = [Note(why)] if why else []
    runs = {}
    for key in MODELS:
        loaded = models[key]
        name, tok = loaded.variant.label, loaded.tokenizer
        tk = txt.tokenize(tok, inputs.text, max_tokens(loaded.model))
        if tk.truncated:
            notes.append(
                Note(
                    f"{name}: your text is {tk.n_full} tokens; only the first {len(tk.ids)} (its limit here, "
                    "special tokens included) are used.",
                    "warning",
                )
            )
        notes += [Note(n) for n in txt.input_notes(tk, tok, inputs.text, name)]
        pieces = tk.pieces_of(word)
        if not pieces:
            read_to = max((e for _, e in tk.offsets), default=0)
            why = (
                "it lies beyond the part of the text it read (truncated)"
                if words[word][1] >= read_to
                else "it is part of a special token typed in the text"
            )
            notes.append(
                Note(
                    f"{name} has no word piece for word {word}, {txt.md(words[word][0])}: {why}, so there "
                    "is no path to follow."
                )
            )
        runs[key] = (loaded, tk, cache(forward, loaded, tk.ids), pieces[0] if pieces else None)

    albert_loaded, albert_tk, albert_fw, _ = runs["albert"]
    layers = albert_fw.hidden.shape[0] - 1
    unrolled_states, unroll = None, None
    if albert_fw.fully_shared:
        applications = int(inputs.repeat) * layers
        unrolled_states = unrolled_to(
            albert_loaded, albert_tk.ids, int(inputs.repeat), layers, cache
        )  # (applications + 1, T, H)
        s = steps(unrolled_states, layers)
        check = float((unrolled_states[layers] - albert_fw.hidden[layers]).abs().max())
        unroll = Unrolled(
            applications, s, check, convergence_summary(s["l2"], layers) if applications > layers else None
        )

    views = {}
    for key, (loaded, tk, fw, piece) in runs.items():
        t = transitions(fw.hidden)
        series = {**t, "norm": hidden_norms(fw.hidden), "entropy": fw.entropy}
        extra = unrolled_states[layers + 1 :] if key == "albert" and unrolled_states is not None else None
        views[key] = View(
            name=loaded.variant.label,
            shown_as=loaded.shown_as,
            tokens=tk.pieces,
            layers=fw.hidden.shape[0] - 1,
            series=series,
            similarity=similarity_matrix(fw.hidden, inputs.measure),
            calls=fw.calls,
            parameters=fw.parameters,
            turn=_turn(t["angle"], skip_first=key == "albert"),
            piece=piece,
            path=None if piece is None else trajectory(fw.hidden, piece, extra),
        )
    return Result(
        views["albert"], views["bert"], tuple(w for w, _, _ in words), word, inputs.measure, unroll, tuple(notes)
    )
