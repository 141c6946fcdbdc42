"""Counting an encoder's parameters exactly, and what they cost in compute and memory.

ALBERT (Lan et al., 2020) cut BERT's parameters two ways:

- **Factorized embeddings.** BERT's vocabulary embeds straight into the hidden size H: V·H
  parameters. ALBERT embeds into a small E and projects up: V·E + E·H (+ H for the projection's
  bias). With V = 30000, H = 768, E = 128 that is 3.9M instead of 23M.
- **Cross-layer sharing.** All L layers use one set of weights (``num_hidden_groups=1`` in
  transformers). The paper's ablation (Table 4) also shares only the attention sublayers or only the
  feed-forward sublayers; transformers has no switch for those, so they are counted here from the
  real modules: the shared part once, the unshared part L times.

Sharing divides parameters, not arithmetic: every token still passes through L layers, so the
multiply-adds per token are those of an unshared model of the same shape.

Counts come two ways that tests hold equal: closed-form formulas (``breakdown``) and real
transformers modules instantiated on the meta device (``count_on_meta``), which allocates no weights
(accelerate's ``init_empty_weights`` would break weight tying and over-count).

The lesson (pages/albert_params.py) calls :func:`run`: the encoder its settings describe, the released
models (their configs are data, app/lessons/albert_params_presets.json, written from the published sizes), and the
ALBERT loaded in the app, counted tensor by tensor beside the formula.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

preload.load()  # the heavy imports, once, in one thread, before this module's own (a page run outside the router too)

import json
from dataclasses import dataclass, fields, replace
from pathlib import Path

from app.core.lesson import Note, direct, inputs_from
from app.core.text import human_count  # noqa: F401  (also albert_params.human_count: the page's name)
from app.macs import flops_per_token, macs_per_sequence  # noqa: F401  (the count, shared with the experiments)
from app.core.state import Param, Spec, figure_param

ORDER = 20  # its place in teaching order (app/lessons/__init__.py lists lessons by it)
TITLE = 'ALBERT: parameters'
ICON = ':material/calculate:'
LINE = 'Factorized embeddings and cross-layer sharing: exact parameter counts, compute and memory.'

SHARING_MODES = ("none", "all", "attention", "ffn")
SHARING_LABELS = {
    "none": "not shared (BERT)",
    "all": "all layers shared (ALBERT)",
    "attention": "attention shared only",
    "ffn": "feed-forward shared only",
}
BYTES_PER_PARAM = {"float32": 4, "float16": 2, "bfloat16": 2}
ADAM_BYTES_PER_PARAM = 16  # fp32 training: weight, gradient and Adam's two moments


@dataclass(frozen=True)
class Limits:
    """What the page accepts. Everything inside counts in well under a second on the meta device."""

    vocab_size: tuple[int, int] = (2, 1_000_000)
    hidden_size: tuple[int, int] = (1, 16_384)
    embedding_size: tuple[int, int] = (1, 16_384)
    num_hidden_layers: tuple[int, int] = (0, 128)  # 0 is accepted so that it can be refused with a reason
    num_attention_heads: tuple[int, int] = (1, 256)
    intermediate_size: tuple[int, int] = (1, 65_536)
    max_position_embeddings: tuple[int, int] = (1, 16_384)
    type_vocab_size: tuple[int, int] = (0, 16)
    seq_len: tuple[int, int] = (1, 16_384)


LIMITS = Limits()


@dataclass(frozen=True)
class Arch:
    """An ALBERT/BERT-style encoder, in transformers' vocabulary (defaults: ALBERT-base).

    factorized: True = ALBERT's V·E + E·H embeddings (``AlbertEmbeddings`` plus the encoder's
    ``embedding_hidden_mapping_in``); False = BERT's V·H (``BertEmbeddings``, embedding_size ignored).
    sharing: one of SHARING_MODES. pooler: whether the base model has BERT's [CLS] pooler (H·H + H).
    """

    vocab_size: int = 30000
    hidden_size: int = 768
    embedding_size: int = 128
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    sharing: str = "all"
    factorized: bool = True
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    pooler: bool = True

    @property
    def E(self) -> int:
        """The width tokens are embedded at: embedding_size when factorized, else hidden_size."""
        return self.embedding_size if self.factorized else self.hidden_size


A, L = Arch(), LIMITS  # the defaults (ALBERT-base) and the ranges the page accepts
MODELS = ("albert",)  # the loaded ALBERT, counted in the last section


def _size(name: str, label: str, step: int, help: str | None = None) -> Param:
    lo, hi = getattr(L, name)
    return Param(name, "int", getattr(A, name), lo=lo, hi=hi, label=label, widget="number", step=step, help=help)


# the lesson's takeaway, one line: the page's last word (under the key figure on a projector), the handout's
TAKEAWAY = "Factorizing and sharing cut ALBERT's parameters and memory — not the compute per token."
SPEC = Spec(
    _size("vocab_size", "Vocabulary V", 1000),
    _size("hidden_size", "Hidden size H", 64),
    Param(
        "factorized",
        "bool",
        A.factorized,
        label="Factorize embeddings (E < H)",
        help="On: ALBERT's V·E + E·H. Off: BERT's V·H (E is ignored).",
    ),
    _size("embedding_size", "Embedding size E", 32),
    _size("num_hidden_layers", "Layers L", 1),
    _size("num_attention_heads", "Attention heads", 1),
    _size("intermediate_size", "Feed-forward size I", 256),
    Param(
        "sharing",
        "choice",
        A.sharing,
        choices=SHARING_MODES,
        labels=tuple(SHARING_LABELS.items()),
        label="Cross-layer sharing",
        help="The ALBERT paper's Table 4 ablation: share everything, only attention, only feed-forward, or nothing.",
    ),
    _size("max_position_embeddings", "Position table size", 64),
    _size("type_vocab_size", "Segment types", 1),
    Param(
        "seq_len",
        "int",
        512,
        lo=L.seq_len[0],
        hi=L.seq_len[1],
        label="Sequence length for compute",
        widget="number",
        step=64,
        help="FLOPs per token depend on it through attention (T² terms).",
    ),
    figure_param(
        (
            ("parts", "Parameters by part: yours beside BERT-style"),
            ("embedding", "Total parameters as E varies"),
            ("compute", "Parameters vs compute per token"),
        )
    ),
)
ARCH_FIELDS = tuple(f.name for f in fields(Arch) if f.name in {p.name for p in SPEC})  # what a preset sets


def problems(arch: Arch) -> list[str]:
    """Why these settings cannot be built, in plain words (empty when they can)."""
    out = []
    if arch.sharing not in SHARING_MODES:
        out.append(f"Sharing must be one of {', '.join(SHARING_MODES)}.")
    for name in (
        "vocab_size",
        "hidden_size",
        "embedding_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "max_position_embeddings",
        "type_vocab_size",
    ):
        lo, hi = getattr(LIMITS, name)
        value = getattr(arch, name)
        if name == "num_hidden_layers" and value < 1:
            out.append(
                "An encoder needs at least one layer (num_hidden_layers ≥ 1): with none, the embeddings "
                "would go straight to the output."
            )
        elif not lo <= value <= hi:
            out.append(f"{name} = {value:,} is outside what this page builds ({lo:,} to {hi:,}).")
    if arch.num_attention_heads >= 1 and arch.hidden_size % arch.num_attention_heads:
        out.append(
            f"The hidden size H = {arch.hidden_size} is not divisible by {arch.num_attention_heads} heads: each head "
            f"gets H / heads dimensions, so pick heads that divide H (e.g. {_divisor_hint(arch.hidden_size)})."
        )
    if arch.factorized and arch.embedding_size > arch.hidden_size:
        out.append(
            f"E = {arch.embedding_size} is larger than H = {arch.hidden_size}: factorization only saves parameters "
            "when E < H (V·E + E·H < V·H). Lower E, or switch factorization off."
        )
    return out


def _divisor_hint(h: int) -> str:
    divs = [d for d in (1, 2, 4, 8, 12, 16, 32, 64) if h % d == 0]
    return ", ".join(map(str, divs[-3:]))


# ----------------------------------------------------------------------------- closed-form counts


def embedding_counts(arch: Arch) -> dict[str, int]:
    """Parameters of the embedding block, by part. Factorized: word/position/type tables are V×E, P×E,
    types×E, a LayerNorm over E, then the E→H projection (E·H weights + H bias). Not: all at width H."""
    e, h = arch.E, arch.hidden_size
    return {
        "word": arch.vocab_size * e,
        "position": arch.max_position_embeddings * e,
        "token type": arch.type_vocab_size * e,
        "LayerNorm": 2 * e,
        "projection E→H": (e * h + h) if arch.factorized else 0,
    }


def attention_count(h: int) -> int:
    """One attention sublayer: query, key, value and output projections (H·H + H each) and its LayerNorm."""
    return 4 * (h * h + h) + 2 * h


def ffn_count(h: int, i: int) -> int:
    """One feed-forward sublayer: H→I and I→H linears with biases, and its LayerNorm."""
    return (h * i + i) + (i * h + h) + 2 * h


def copies(sharing: str, layers: int) -> tuple[int, int]:
    """How many distinct (attention, feed-forward) sublayers L layers hold under a sharing mode."""
    return {"none": (layers, layers), "all": (1, 1), "attention": (1, layers), "ffn": (layers, 1)}[sharing]


@dataclass(frozen=True)
class Breakdown:
    """Every parameter of the base model (and the masked-LM head beside it), by where it lives."""

    embeddings: dict[str, int]
    attention: int  # one attention sublayer
    ffn: int  # one feed-forward sublayer
    attention_copies: int
    ffn_copies: int
    pooler: int
    mlm_head: int  # dense + LayerNorm + output bias; the decoder weight is tied to the word embeddings

    @property
    def embedding_total(self) -> int:
        return sum(self.embeddings.values())

    @property
    def layer(self) -> int:
        return self.attention + self.ffn

    @property
    def encoder(self) -> int:
        return self.attention * self.attention_copies + self.ffn * self.ffn_copies

    @property
    def total(self) -> int:
        """The base model (AlbertModel / BertModel): embeddings + encoder + pooler."""
        return self.embedding_total + self.encoder + self.pooler

    @property
    def total_with_head(self) -> int:
        return self.total + self.mlm_head


def breakdown(arch: Arch) -> Breakdown:
    h, e = arch.hidden_size, arch.E
    a_copies, f_copies = copies(arch.sharing, arch.num_hidden_layers)
    # MLM head: BERT transforms at H (H·H + H, LayerNorm 2H); ALBERT projects down to E (H·E + E, 2E).
    return Breakdown(
        embeddings=embedding_counts(arch),
        attention=attention_count(h),
        ffn=ffn_count(h, arch.intermediate_size),
        attention_copies=a_copies,
        ffn_copies=f_copies,
        pooler=(h * h + h) if arch.pooler else 0,
        mlm_head=(h * e + e) + 2 * e + arch.vocab_size,
    )


def total_vs_embedding_size(arch: Arch, sizes) -> list[tuple[int, int]]:
    """(E, base-model total) for each E in sizes, everything else as in arch (factorized)."""
    return [(e, breakdown(replace(arch, embedding_size=int(e), factorized=True)).total) for e in sizes]


def embedding_sweep_sizes(hidden_size: int) -> list[int]:
    """E values worth plotting: powers of two and a few round numbers up to H, and H itself."""
    sizes = {
        s
        for s in (8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384)
        if s <= hidden_size
    }
    sizes.add(hidden_size)
    return sorted(sizes)


# ----------------------------------------------------------------------------- real modules on meta


def unique_numel(module) -> int:
    """Parameters of a module, each tensor counted once (tied weights are one Parameter object)."""
    seen, n = set(), 0
    for _, p in module.named_parameters(remove_duplicate=False):
        if id(p) not in seen:
            seen.add(id(p))
            n += p.numel()
    return n


def transformers_config(arch: Arch):
    """The real config: AlbertConfig when factorized (num_hidden_groups = 1 shares every layer, = L shares
    none), BertConfig otherwise. Attention-only / FFN-only sharing has no config; the groups are L then."""
    from transformers import AlbertConfig, BertConfig

    common = dict(
        vocab_size=arch.vocab_size,
        hidden_size=arch.hidden_size,
        num_hidden_layers=arch.num_hidden_layers,
        num_attention_heads=arch.num_attention_heads,
        intermediate_size=arch.intermediate_size,
        max_position_embeddings=arch.max_position_embeddings,
        type_vocab_size=arch.type_vocab_size,
        pad_token_id=0,
    )
    if arch.factorized:
        groups = 1 if arch.sharing == "all" else arch.num_hidden_layers
        return AlbertConfig(embedding_size=arch.embedding_size, num_hidden_groups=groups, inner_group_num=1, **common)
    return BertConfig(**common)


def whole_model_class(arch: Arch) -> str | None:
    """The transformers class that is exactly this base model, or None (then it is composed from modules)."""
    if arch.factorized and arch.sharing in ("all", "none"):
        return "AlbertModel"
    if not arch.factorized and arch.sharing == "none":
        return "BertModel"
    return None


def module_counts_on_meta(arch: Arch) -> dict[str, int]:
    """Counts of the real building blocks, instantiated on the meta device (no memory allocated).

    Returns embeddings (AlbertEmbeddings + embedding_hidden_mapping_in, or BertEmbeddings), attention
    (AlbertAttention, with its LayerNorm), ffn (the rest of AlbertLayer: ffn, ffn_output,
    full_layer_layer_norm) and pooler.
    """
    import torch
    from transformers import AlbertConfig
    from transformers.models.albert.modeling_albert import AlbertEmbeddings, AlbertLayer, AlbertTransformer
    from transformers.models.bert.modeling_bert import BertEmbeddings

    cfg = transformers_config(arch)
    layer_cfg = AlbertConfig(**{**cfg.to_dict(), "embedding_size": arch.E, "num_hidden_groups": 1})
    with torch.device("meta"):
        if arch.factorized:
            projection = AlbertTransformer(layer_cfg).embedding_hidden_mapping_in
            embeddings = unique_numel(AlbertEmbeddings(cfg)) + unique_numel(projection)
        else:
            embeddings = unique_numel(BertEmbeddings(cfg))
        layer = AlbertLayer(layer_cfg)
        pooler = torch.nn.Linear(arch.hidden_size, arch.hidden_size)
    attention = unique_numel(layer.attention)
    return {
        "embeddings": embeddings,
        "attention": attention,
        "ffn": unique_numel(layer) - attention,
        "pooler": unique_numel(pooler) if arch.pooler else 0,
    }


def count_on_meta(arch: Arch) -> tuple[int, str]:
    """(exact base-model parameters, how they were counted).

    The whole AlbertModel / BertModel is instantiated on the meta device when transformers can express
    the setting; attention-only and FFN-only sharing are composed from the real modules instead.
    """
    import torch
    import transformers

    name = whole_model_class(arch)
    if name is not None:
        cfg = transformers_config(arch)
        with torch.device("meta"):
            model = getattr(transformers, name)(cfg, add_pooling_layer=arch.pooler)
        groups = f", num_hidden_groups={cfg.num_hidden_groups}" if name == "AlbertModel" else ""
        return unique_numel(model), f"the whole `{name}`{groups}, instantiated on the meta device"
    parts = module_counts_on_meta(arch)
    a_copies, f_copies = copies(arch.sharing, arch.num_hidden_layers)
    total = parts["embeddings"] + parts["attention"] * a_copies + parts["ffn"] * f_copies + parts["pooler"]
    why = (
        "transformers has no attention-only or FFN-only sharing, so this is composed from the real "
        f"modules on the meta device: embeddings + {a_copies} × `AlbertAttention` + {f_copies} × the feed-forward "
        "part of `AlbertLayer` + pooler"
    )
    return total, why


# ----------------------------------------------------------------------------- compute (counted by app/macs.py)


def arch_compute_cfg(arch: Arch) -> tuple[str, dict]:
    """(family, cfg) for macs_per_sequence from the page's settings."""
    return ("albert" if arch.factorized else "bert"), {
        "hidden_size": arch.hidden_size,
        "intermediate_size": arch.intermediate_size,
        "num_hidden_layers": arch.num_hidden_layers,
        "embedding_size": arch.E,
        "pooler": arch.pooler,
    }


# ----------------------------------------------------------------------------- memory


def memory_bytes(n_params: int, dtype: str) -> int:
    """Bytes to hold n_params weights in dtype (float32 4, float16/bfloat16 2)."""
    return n_params * BYTES_PER_PARAM[dtype]


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


# ----------------------------------------------------------------------------- released models, as data

PRESETS_FILE = Path(__file__).with_name("albert_params_presets.json")
SETTABLE = ("AlbertModel", "BertModel", "RobertaModel")  # base models the page's settings can express


@dataclass(frozen=True)
class Preset:
    """A released model: its config written from the published values (app/lessons/albert_params_presets.json) and its
    published size. family: for macs_per_sequence; config: keyword arguments of config_class."""

    name: str
    family: str
    config_class: str
    model_class: str
    config: dict
    published_m: float  # millions of parameters, as commonly quoted
    source: str
    note: str = ""

    @property
    def arch(self) -> Arch | None:
        """The same model as page settings (ALBERT, BERT and RoBERTa shapes, with the pooler), else None."""
        return arch_from_config(preset_config(self), pooler=True) if self.model_class in SETTABLE else None


def read_presets(path: Path = PRESETS_FILE) -> tuple[tuple[Preset, ...], tuple[dict, ...]]:
    """(the released models, the ALBERT paper's Table 4 rows {embedding_size, sharing, paper_m})."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return tuple(Preset(**p) for p in data["presets"]), tuple(data["albert_table4"])


PRESETS, PAPER_TABLE4 = read_presets()
SETTABLE_PRESETS = tuple(p.name for p in PRESETS if p.model_class in SETTABLE)
DEFAULT_PRESET = "ALBERT-base"  # the model whose sizes SPEC's defaults are (Arch()): the picker opens on it
PRESET = Param(
    "preset",
    "choice",
    DEFAULT_PRESET,
    choices=SETTABLE_PRESETS,
    label="Start from a released model",
    help="Copies that model's published sizes into the settings below.",
)
# PRESET is not in SPEC: it only picks what "Use its sizes" copies; the sizes themselves go in the link.


def preset(name: str) -> Preset:
    for p in PRESETS:
        if p.name == name:
            return p
    raise KeyError(name)


def preset_values(name: str) -> dict:
    """The page settings a preset sets ({SPEC name: value}), for the "Use its sizes" button."""
    arch = preset(name).arch
    if arch is None:
        raise ValueError(f"{name} has no page settings")
    return {f: getattr(arch, f) for f in ARCH_FIELDS}


def matching_preset(values: dict) -> str | None:
    """The released model whose sizes ``values`` ({SPEC name: value}) are, or None: what the picker shows when the
    page opens, so that it never names one model above another's sizes."""
    return next(
        (name for name in SETTABLE_PRESETS if all(values.get(k) == v for k, v in preset_values(name).items())), None
    )


def preset_config(p: Preset):
    """The transformers config of a preset, or None when the installed transformers lacks the class."""
    import transformers

    cls = getattr(transformers, p.config_class, None)
    return None if cls is None else cls(**p.config)


def count_preset(p: Preset) -> int | None:
    """Parameters of the preset's base model, instantiated from its config on the meta device."""
    import torch
    import transformers

    cfg, cls = preset_config(p), getattr(transformers, p.model_class, None)
    if cfg is None or cls is None:
        return None
    with torch.device("meta"):
        model = cls(cfg)
    return unique_numel(model)


def count_presets() -> tuple[tuple[str, int | None], ...]:
    """(name, base-model parameters) of every preset, on the meta device: the expensive, seq_len-free part."""
    return tuple((p.name, count_preset(p)) for p in PRESETS)


def preset_compute_cfg(p: Preset) -> dict:
    """The dimensions macs_per_sequence needs, read from the preset's config (whatever its names)."""
    c = p.config
    h = c.get("hidden_size", c.get("d_model", c.get("dim")))
    return {
        "hidden_size": h,
        "intermediate_size": c.get("intermediate_size", c.get("d_inner", c.get("hidden_dim"))),
        "num_hidden_layers": c.get("num_hidden_layers", c.get("n_layer", c.get("n_layers"))),
        "embedding_size": c.get("embedding_size", h),
        "pooler": p.model_class in SETTABLE,
        "position_buckets": c.get("position_buckets", 0),
        "max_position_embeddings": c.get("max_position_embeddings", 512),
    }


def preset_rows(counts, seq_len: int) -> list[dict]:
    """One row per preset the installed transformers builds: computed and published parameters, the
    difference, FLOPs per token at seq_len, memory. counts: count_presets()."""
    rows = []
    for p, (name, n) in zip(PRESETS, counts):
        if n is None:
            continue
        flops = flops_per_token(p.family, preset_compute_cfg(p), seq_len)
        rows.append(
            {
                "model": name,
                "computed (M)": round(n / 1e6, 2),
                "published (M)": p.published_m,
                "difference": f"{(n / 1e6 - p.published_m) / p.published_m:+.1%}",
                "source": p.source,
                "note": p.note or "rounding",
                "GFLOPs / token": round(flops / 1e9, 3),
                "fp32": human_bytes(memory_bytes(n, "float32")),
                "fp16 / bf16": human_bytes(memory_bytes(n, "float16")),
                "params": n,
                "flops": flops,
            }
        )
    return rows


def table4_rows() -> list[dict]:
    """The ALBERT paper's sharing ablation recomputed: ALBERT-base, E = 768 and 128, four sharing modes."""
    rows = []
    for t in PAPER_TABLE4:
        n = breakdown(Arch(embedding_size=t["embedding_size"], sharing=t["sharing"])).total
        rows.append(
            {
                "E": t["embedding_size"],
                "sharing": SHARING_LABELS[t["sharing"]],
                "computed (M)": round(n / 1e6, 2),
                "paper (M)": t["paper_m"],
                "difference (M)": round(n / 1e6 - t["paper_m"], 2),
            }
        )
    return rows


def table4_story(rows: list[dict], hidden: int = 768) -> str:
    """What the recomputed Table 4 shows against the paper, computed from its rows: how many agree to the paper's
    rounding (whole millions), how many more would without the pooler (H² + H, which the paper may not count), and
    which differ by more than either explains."""
    pooler = (hidden * hidden + hidden) / 1e6
    close = lambda d: abs(d) <= 0.5 + 1e-9  # noqa: E731  (the paper's figures are whole millions)
    agree = [r for r in rows if close(r["difference (M)"])]
    pooled = [r for r in rows if not close(r["difference (M)"]) and close(r["difference (M)"] - pooler)]
    rest = [r for r in rows if r not in agree and r not in pooled]
    out = [f"{len(agree)} of {len(rows)} rows agree with the paper to its rounding (whole millions: within 0.5M)"]
    if pooled:
        out.append(
            f"{len(pooled)} more do without the pooler ({pooler:.2f}M = H² + H), which our counts include and "
            "the paper may not"
        )
    if rest:
        out.append(
            "and "
            + ", ".join(f"E = {r['E']}, {r['sharing']} ({r['difference (M)']:+.2f}M)" for r in rest)
            + (" differs" if len(rest) == 1 else " differ")
            + " by more than that explains"
        )
    return "; ".join(out) + "."


# ----------------------------------------------------------------------------- a loaded model


def arch_from_config(config, pooler: bool) -> Arch:
    """Page settings for a loaded ALBERT/BERT config. ALBERT: sharing "all" when num_hidden_groups is 1,
    "none" when it equals num_hidden_layers (other groupings have no page setting: ValueError)."""
    factorized = getattr(config, "model_type", "") == "albert"
    layers = config.num_hidden_layers
    if factorized:
        groups, inner = config.num_hidden_groups, getattr(config, "inner_group_num", 1)
        if inner != 1 or groups not in (1, layers):
            raise ValueError(f"num_hidden_groups={groups}, inner_group_num={inner} has no page setting")
        sharing = "all" if groups == 1 else "none"
    else:
        sharing = "none"
    return Arch(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        embedding_size=getattr(config, "embedding_size", config.hidden_size),
        num_hidden_layers=layers,
        num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size,
        sharing=sharing,
        factorized=factorized,
        max_position_embeddings=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        pooler=pooler,
    )


@dataclass(frozen=True)
class LoadedCount:
    """A loaded model's real parameter count (Σ numel over unique tensors, tied ones once) beside the formula's
    count from its config. formula and arch are None when its layer grouping has no page setting (problem)."""

    shown_as: str  # which model (Loaded.shown_as)
    model_class: str  # e.g. AlbertForMaskedLM: the base model and the masked-LM head, decoder tied
    real: int
    formula: int | None
    arch: Arch | None
    pooler: bool  # whether its base model has BERT's [CLS] pooler
    with_head: bool  # whether the masked-LM head is part of the model
    problem: str | None = None


def loaded_counts(loaded) -> LoadedCount:
    """Count a loaded AlbertForMaskedLM / AlbertModel (or BERT), on any device and dtype."""
    model = loaded.model
    base = getattr(model, "albert", None) or getattr(model, "bert", None) or model
    has_pooler = getattr(base, "pooler", None) is not None
    has_head = base is not model
    real = unique_numel(model)
    try:
        arch = arch_from_config(model.config, has_pooler)
    except ValueError as e:
        return LoadedCount(loaded.shown_as, type(model).__name__, real, None, None, has_pooler, has_head, str(e))
    b = breakdown(arch)
    return LoadedCount(
        loaded.shown_as,
        type(model).__name__,
        real,
        b.total_with_head if has_head else b.total,
        arch,
        has_pooler,
        has_head,
    )


# ----------------------------------------------------------------------------- the lesson: inputs -> run -> result


@inputs_from(SPEC)
class Inputs:
    @property
    def arch(self) -> Arch:
        return Arch(**{f: getattr(self, f) for f in ARCH_FIELDS})


@dataclass(frozen=True)
class Yours:
    """Everything about the encoder the settings describe (only when it can be built).

    counted / how: the exact count from real modules on the meta device, and how it was counted;
    bert_like: the same shape with V·H embeddings and no sharing; table: the breakdown, one row per part
    ({part, formula, parameters}); bars: {label, embeddings, attention, ffn, pooler} per sharing mode
    (yours marked), BERT-style first when factorized; sweep: (E, total) as E varies; word_saving: V·H minus
    the factorized word embeddings and projection (0 unfactorized); flops / flops_unshared: forward FLOPs
    per token at seq_len, with this sharing and with none; memory: the weights' bytes per precision."""

    counted: int
    how: str
    breakdown: Breakdown
    bert_like: Breakdown
    table: tuple[dict, ...]
    bars: tuple[dict, ...]
    sweep: tuple[tuple[int, int], ...]
    unfactorized_total: int
    word_saving: int
    flops: float
    flops_unshared: float
    memory: tuple[dict, ...]


@dataclass(frozen=True)
class Result:
    arch: Arch
    seq_len: int
    yours: Yours | None  # None when the settings cannot be built (the notes say why)
    presets: tuple[dict, ...]  # preset_rows at seq_len
    table4: tuple[dict, ...]
    loaded: LoadedCount | None  # None when no ALBERT was loaded
    notes: tuple[Note, ...]

    def preset(self, name: str) -> dict | None:
        return next((r for r in self.presets if r["model"] == name), None)


def breakdown_table(arch: Arch, b: Breakdown) -> list[dict]:
    """The breakdown as rows a person reads: {part, formula (with this arch's numbers), parameters}."""
    e, h, v = arch.E, arch.hidden_size, arch.vocab_size
    emb = b.embeddings
    return [
        {
            "part": "word embeddings",
            "formula": f"V·E = {v:,}·{e:,}" if arch.factorized else f"V·H = {v:,}·{h:,}",
            "parameters": emb["word"],
        },
        {
            "part": "E→H projection",
            "formula": f"E·H + H = {e:,}·{h:,} + {h:,}" if arch.factorized else "— (none)",
            "parameters": emb["projection E→H"],
        },
        {
            "part": "positions, segments, LayerNorm",
            "formula": f"({arch.max_position_embeddings:,} + {arch.type_vocab_size}) · {e:,} + 2·{e:,}",
            "parameters": emb["position"] + emb["token type"] + emb["LayerNorm"],
        },
        {"part": "one attention sublayer", "formula": f"4(H² + H) + 2H, H = {h:,}", "parameters": b.attention},
        {
            "part": "one feed-forward sublayer",
            "formula": f"2·H·I + I + H + 2H, I = {arch.intermediate_size:,}",
            "parameters": b.ffn,
        },
        {"part": "one layer", "formula": "attention + feed-forward", "parameters": b.layer},
        {
            "part": f"all {arch.num_hidden_layers} layers ({SHARING_LABELS[arch.sharing]})",
            "formula": f"{b.attention_copies} × attention + {b.ffn_copies} × feed-forward",
            "parameters": b.encoder,
        },
        {"part": "pooler ([CLS] → H)", "formula": "H² + H", "parameters": b.pooler},
        {"part": "base model total", "formula": "embeddings + layers + pooler", "parameters": b.total},
        {
            "part": "masked-LM head (beside the base model)",
            "formula": ("H·E + E + 2E + V" if arch.factorized else "H² + H + 2H + V") + " (output matrix tied)",
            "parameters": b.mlm_head,
        },
    ]


def _bar(label: str, b: Breakdown) -> dict:
    return {
        "label": label,
        "embeddings": b.embedding_total,
        "attention": b.attention * b.attention_copies,
        "ffn": b.ffn * b.ffn_copies,
        "pooler": b.pooler,
    }


def sharing_bars(arch: Arch) -> list[dict]:
    """One stacked bar per sharing mode, most to fewest parameters (yours marked ◀), after a BERT-style
    bar (V·H, not shared) when arch is factorized."""
    bars = [
        _bar(SHARING_LABELS[m] + (" ◀ yours" if m == arch.sharing else ""), breakdown(replace(arch, sharing=m)))
        for m in ("none", "attention", "ffn", "all")
    ]
    if arch.factorized:
        bars.insert(0, _bar("BERT-style: V·H, not shared", breakdown(replace(arch, factorized=False, sharing="none"))))
    return bars


def memory_rows(counted: int, bert_like: int) -> list[dict]:
    return [
        {
            "precision": d,
            "bytes per parameter": BYTES_PER_PARAM[d],
            "your base model": human_bytes(memory_bytes(counted, d)),
            "same shape, BERT-style": human_bytes(memory_bytes(bert_like, d)),
        }
        for d in BYTES_PER_PARAM
    ]


def your_encoder(arch: Arch, counted: int, how: str, seq_len: int) -> Yours:
    """Everything the page shows about the settings' encoder, from its meta-device count (cheap formulas)."""
    b = breakdown(arch)
    bert_like = breakdown(replace(arch, factorized=False, sharing="none"))
    emb = b.embeddings
    word_saving = arch.vocab_size * arch.hidden_size - (emb["word"] + emb["projection E→H"]) if arch.factorized else 0
    return Yours(
        counted=counted,
        how=how,
        breakdown=b,
        bert_like=bert_like,
        table=tuple(breakdown_table(arch, b)),
        bars=tuple(sharing_bars(arch)),
        sweep=tuple(total_vs_embedding_size(arch, embedding_sweep_sizes(arch.hidden_size))),
        unfactorized_total=breakdown(replace(arch, factorized=False)).total,
        word_saving=word_saving,
        flops=flops_per_token(*arch_compute_cfg(arch), seq_len),
        flops_unshared=flops_per_token(*arch_compute_cfg(replace(arch, sharing="none")), seq_len),
        memory=tuple(memory_rows(counted, bert_like.total)),
    )


def run(models: dict, inputs: Inputs, cache=direct) -> Result:
    """Count the settings' encoder on the meta device (cached by its shape), every released model (cached
    once: only their FLOPs follow seq_len), and the loaded ALBERT when ``models`` has one.

    Settings that cannot be built are not an error: their reasons become warnings, and the released models
    and the loaded one are shown all the same."""
    arch, seq_len = inputs.arch, int(inputs.seq_len)
    wrong = problems(arch)
    notes = [Note(p, "warning") for p in wrong]
    yours = None
    if not wrong:
        if arch.factorized and arch.embedding_size == arch.hidden_size:
            notes.append(
                Note(
                    "E = H: the E→H projection adds H² + H parameters and saves nothing — factorization "
                    "pays only when E is well below H."
                )
            )
        counted, how = cache(count_on_meta, arch)
        yours = your_encoder(arch, counted, how, seq_len)
    presets = preset_rows(cache(count_presets), seq_len)
    loaded = cache(loaded_counts, models["albert"]) if "albert" in models else None
    return Result(arch, seq_len, yours, tuple(presets), tuple(table4_rows()), loaded, tuple(notes))


# ----------------------------------------------------------------------------- ask the class


def _millions(n: int) -> str:
    return f"{n / 1e6:.1f} M" if n >= 1e5 else f"{n:,}"


def question(result: Result):
    """ "How many parameters does E = 128 save here?": BERT's V·H embeddings against ALBERT's V·E + E·H + H at this
    page's V and H, with three computed distractors (forgetting the projection, the whole V·H, the projection
    alone). None when the four values do not read apart."""
    from app.classroom.question import Question

    arch = result.arch
    v, h, e = arch.vocab_size, arch.hidden_size, 128
    if e >= h:
        return None
    saved = v * h - (v * e + e * h + h)
    options = {"saved": saved, "no projection": v * (h - e), "all of V·H": v * h, "the projection": e * h + h}
    labels = {k: _millions(n) for k, n in options.items()}
    if len(set(labels.values())) < 4:
        return None
    return Question(
        "albert_params",
        f"Vocabulary V = {v:,}, hidden size H = {h:,}. How many parameters does a "
        f"factorized embedding with E = {e} save against BERT's V·H?",
        "choice",
        tuple(labels[k] for k in sorted(options, key=options.get)),
        (labels["saved"],),
        (),
        f"V·H − (V·E + E·H + H) = {v * h:,} − {v * e + e * h + h:,} = {saved:,}.",
    )
