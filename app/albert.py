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
- a token's path through the layers, projected to 2-D by PCA (an exact SVD, signs fixed).

Shapes: T tokens, H hidden size, L layers. ``hidden`` is (L + 1, T, H) with hidden[0] the input to
the first layer (for ALBERT: the embeddings already projected from E up to H); ``attentions`` is
(L, heads, T, T). Everything returned is float32 on the CPU, whatever the model's device and dtype.
"""

from __future__ import annotations

from app import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import math
import re
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Defaults:
    text: str = "The little girl found a red ball in the park."
    repeat: int = 3  # unroll to repeat × L applications of the shared block
    max_repeat: int = 8
    token_cap: int = 256  # longest input the page runs (the model limit may be lower)


DEFAULTS = Defaults()


# ----------------------------------------------------------------------------- input


def encode(tokenizer, text: str, cap: int):
    """Tokenize ``text`` with offsets, truncated to ``cap`` tokens (specials included).

    Returns (inputs for the model: dict of (1, T) tensors, tokens: list of T strings, offsets: list of
    (start, end) character spans ((0, 0) for special tokens), untruncated length).
    """
    full = tokenizer(text, add_special_tokens=True)["input_ids"]
    enc = tokenizer(text, return_tensors="pt", truncation=True, max_length=cap, return_offsets_mapping=True)
    offsets = [tuple(map(int, o)) for o in enc.pop("offset_mapping")[0].tolist()]
    inputs = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist())
    return inputs, tokens, offsets, len(full)


def model_limit(loaded_model, tokenizer, cap: int = DEFAULTS.token_cap) -> int:
    """The most tokens this model takes here: its position table, its tokenizer's limit and our cap."""
    limits = [cap, getattr(loaded_model.config, "max_position_embeddings", cap)]
    tok_max = getattr(tokenizer, "model_max_length", None)
    if tok_max and tok_max < 10**9:
        limits.append(int(tok_max))
    return min(limits)


WORD = re.compile(r"\w+", re.UNICODE)


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for every run of letters/digits in text."""
    return [(m.group(), m.start(), m.end()) for m in WORD.finditer(text)]


def token_for_span(offsets: list[tuple[int, int]], start: int, end: int) -> int | None:
    """The first non-special token whose character span overlaps [start, end), or None (e.g. truncated)."""
    for i, (s, e) in enumerate(offsets):
        if e > s and s < end and e > start:
            return i
    return None


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
    with torch.no_grad():
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
    """Linear CKA between every pair of depths, tokens as samples: (D, T, H) -> (D, D)."""
    d = hidden.shape[0]
    out = torch.empty(d, d)
    for a in range(d):
        for b in range(a, d):
            out[a, b] = out[b, a] = linear_cka(hidden[a], hidden[b])
    return out


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
        return [(f"albert_layer_groups.{g}.albert_layers.{i}", layer)
                for g, group in enumerate(base.encoder.albert_layer_groups)
                for i, layer in enumerate(group.albert_layers)]
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
                calls.append({"call": len(calls) + 1, "module": name, "module_id": id(module),
                              "query_weight_ptr": _query_weight(module).data_ptr()})
            handles.append(layer.register_forward_hook(hook))
        with torch.no_grad():
            base(**{k: v.to(device) for k, v in inputs.items()})
    finally:
        for h in handles:
            h.remove()
    return CallLog([n for n, _ in named], calls)


def layer_parameters(model, index: int = 0) -> list[dict]:
    """The parameters of one layer module: name, shape, count and where its storage starts."""
    name, layer = layer_modules(model)[index]
    return [{"parameter": f"{name}.{n}", "shape": "×".join(map(str, p.shape)), "numel": p.numel(),
             "data_ptr": hex(p.data_ptr())} for n, p in layer.named_parameters()]


# ----------------------------------------------------------------------------- unrolling past L


def is_fully_shared(model) -> bool:
    base = base_model(model)
    cfg = base.config
    return getattr(cfg, "model_type", "") == "albert" and cfg.num_hidden_groups == 1 and cfg.inner_group_num == 1


def unroll(model, inputs: dict, applications: int) -> torch.Tensor:
    """Apply ALBERT's one shared block ``applications`` times to the (projected) embeddings.

    The same computation as ``AlbertTransformer.forward`` for the first L steps, continued past L.
    Reads the model, never changes it (no config edits, no hooks). Returns (applications + 1, T, H)
    float32: [0] is the input to the first application, [k] the output of the k-th.
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
    with torch.no_grad():
        emb = base.embeddings(inputs["input_ids"], token_type_ids=inputs.get("token_type_ids"))  # (1, T, E)
        mask = create_bidirectional_mask(config=base.config, inputs_embeds=emb,
                                         attention_mask=inputs.get("attention_mask"))
        h = base.encoder.embedding_hidden_mapping_in(emb)  # (1, T, H)
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
        ratio[: min(2, len(var))] = (var[:2] / total)
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
    extra_coords = None if extra is None else coords[d * t:]
    return {"path": cloud[:, token], "cloud": cloud, "extra": extra_coords, "explained": ratio}
