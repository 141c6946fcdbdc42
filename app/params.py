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
"""

from __future__ import annotations

from app import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

from dataclasses import dataclass, replace

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


def problems(arch: Arch) -> list[str]:
    """Why these settings cannot be built, in plain words (empty when they can)."""
    out = []
    if arch.sharing not in SHARING_MODES:
        out.append(f"Sharing must be one of {', '.join(SHARING_MODES)}.")
    for name in ("vocab_size", "hidden_size", "embedding_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "max_position_embeddings", "type_vocab_size"):
        lo, hi = getattr(LIMITS, name)
        value = getattr(arch, name)
        if name == "num_hidden_layers" and value < 1:
            out.append("An encoder needs at least one layer (num_hidden_layers ≥ 1): with none, the embeddings "
                       "would go straight to the output.")
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
    sizes = {s for s in (8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384)
             if s <= hidden_size}
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
        vocab_size=arch.vocab_size, hidden_size=arch.hidden_size, num_hidden_layers=arch.num_hidden_layers,
        num_attention_heads=arch.num_attention_heads, intermediate_size=arch.intermediate_size,
        max_position_embeddings=arch.max_position_embeddings, type_vocab_size=arch.type_vocab_size, pad_token_id=0,
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
    full_layer_layer_norm), pooler, mlm_head (AlbertMLMHead/BertOnlyMLMHead less its tied decoder).
    """
    import torch
    from transformers import AlbertConfig
    from transformers.models.albert.modeling_albert import (
        AlbertEmbeddings, AlbertLayer, AlbertMLMHead, AlbertTransformer)
    from transformers.models.bert.modeling_bert import BertEmbeddings, BertOnlyMLMHead

    cfg = transformers_config(arch)
    layer_cfg = AlbertConfig(**{**cfg.to_dict(), "embedding_size": arch.E, "num_hidden_groups": 1})
    with torch.device("meta"):
        if arch.factorized:
            projection = AlbertTransformer(layer_cfg).embedding_hidden_mapping_in
            embeddings = unique_numel(AlbertEmbeddings(cfg)) + unique_numel(projection)
            head = AlbertMLMHead(cfg)
            head_count = unique_numel(head) - head.decoder.weight.numel() - head.decoder.bias.numel()
        else:
            embeddings = unique_numel(BertEmbeddings(cfg))
            head = BertOnlyMLMHead(cfg)
            decoder = head.predictions.decoder
            head_count = unique_numel(head) - decoder.weight.numel() - (
                decoder.bias.numel() if decoder.bias is not None and decoder.bias is not head.predictions.bias else 0)
        layer = AlbertLayer(layer_cfg)
        pooler = torch.nn.Linear(arch.hidden_size, arch.hidden_size)
    attention = unique_numel(layer.attention)
    return {
        "embeddings": embeddings,
        "attention": attention,
        "ffn": unique_numel(layer) - attention,
        "pooler": unique_numel(pooler) if arch.pooler else 0,
        "mlm_head": head_count,
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
    why = ("transformers has no attention-only or FFN-only sharing, so this is composed from the real "
           f"modules on the meta device: embeddings + {a_copies} × `AlbertAttention` + {f_copies} × the feed-forward "
           "part of `AlbertLayer` + pooler")
    return total, why


# ----------------------------------------------------------------------------- compute


def macs_per_sequence(family: str, cfg: dict, seq_len: int) -> int:
    """Multiply-accumulates of the matrix products in one forward pass of the base model over seq_len
    tokens (what torch's FlopCounterMode counts, halved): linears, QKᵀ and attention·V. Layer norms,
    softmax, activations and embedding look-ups are left out (a few percent).

    family: "bert" (BERT, RoBERTa, DistilBERT, ELECTRA), "albert", "xlnet", "deberta", "modernbert".
    cfg keys: hidden_size H, intermediate_size I, num_hidden_layers L, and per family embedding_size E,
    pooler (bool), position_buckets / max_position_embeddings (DeBERTa). Sharing changes none of it.
    """
    t, h, i, layers = seq_len, cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    attention_scores = 2 * t * t * h  # QKᵀ and attention·V, all heads together
    if family in ("bert", "albert"):
        per_layer = 4 * t * h * h + 2 * t * h * i + attention_scores
        e = cfg.get("embedding_size", h)
        projection = t * e * h if (family == "albert" or e != h) else 0  # ALBERT always has the E→H linear
        pooler = h * h if cfg.get("pooler", True) else 0  # once per sequence, on [CLS]
        return layers * per_layer + projection + pooler
    if family == "modernbert":  # GLU feed-forward (H→2I, I→H), no pooler; local attention computed densely
        return layers * (4 * t * h * h + 3 * t * h * i + attention_scores)
    if family == "xlnet":  # q,k,v,o; the relative-position projection of 2T positions; content and position scores
        return layers * (4 * t * h * h + 2 * t * h * h + 2 * t * h * i + 4 * t * t * h)
    if family == "deberta":  # plus key/query projections of 2k relative embeddings and c2p, p2c scores
        span = cfg.get("position_buckets", 0) or cfg.get("max_position_embeddings", 512)
        rel = 2 * span
        return layers * (4 * t * h * h + 2 * t * h * i + attention_scores + 2 * rel * h * h + 2 * t * rel * h)
    raise ValueError(f"unknown family {family!r}")


def flops_per_token(family: str, cfg: dict, seq_len: int) -> float:
    """FLOPs (2 per multiply-accumulate) per token of a forward pass over seq_len tokens."""
    return 2 * macs_per_sequence(family, cfg, seq_len) / seq_len


def arch_compute_cfg(arch: Arch) -> tuple[str, dict]:
    """(family, cfg) for macs_per_sequence from the page's settings."""
    return ("albert" if arch.factorized else "bert"), {
        "hidden_size": arch.hidden_size, "intermediate_size": arch.intermediate_size,
        "num_hidden_layers": arch.num_hidden_layers, "embedding_size": arch.E, "pooler": arch.pooler,
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


def human_count(n: float) -> str:
    """12,345,678 -> '12.3M'."""
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            return f"{n / div:.1f}{unit}" if n / div < 100 else f"{n / div:.0f}{unit}"
    return f"{n:.0f}"


# ----------------------------------------------------------------------------- presets


@dataclass(frozen=True)
class Preset:
    """A real released model: its config written from the published values, and its published size.

    family: for macs_per_sequence. arch: the same model as page settings, when the page's controls can
    express it (ALBERT/BERT/RoBERTa shapes), else None.
    """

    name: str
    family: str
    config_class: str
    model_class: str
    config: dict
    published_m: float  # millions of parameters, as commonly quoted
    source: str
    note: str = ""
    arch: Arch | None = None


def _albert(name, h, layers, heads, inter, published, note=""):
    arch = Arch(30000, h, 128, layers, heads, inter, "all", True)
    cfg = dict(vocab_size=30000, embedding_size=128, hidden_size=h, num_hidden_layers=layers, num_attention_heads=heads,
               intermediate_size=inter, num_hidden_groups=1)
    return Preset(name, "albert", "AlbertConfig", "AlbertModel", cfg, published, "Lan et al. 2020, Table 1", note, arch)


def _bert(name, h, layers, heads, inter, published, source, note="", vocab=30522, positions=512, types=2,
          classes=("BertConfig", "BertModel")):
    arch = Arch(vocab, h, h, layers, heads, inter, "none", False, positions, types)
    cfg = dict(vocab_size=vocab, hidden_size=h, num_hidden_layers=layers, num_attention_heads=heads,
               intermediate_size=inter, max_position_embeddings=positions, type_vocab_size=types)
    return Preset(name, "bert", *classes, cfg, published, source, note, arch)


PRESETS: tuple[Preset, ...] = (
    _bert("BERT-base", 768, 12, 12, 3072, 110, "Devlin et al. 2019"),
    _bert("BERT-large", 1024, 24, 16, 4096, 340, "Devlin et al. 2019",
          "The BERT paper rounds up; the ALBERT paper lists the same model as 334M."),
    _albert("ALBERT-base", 768, 12, 12, 3072, 12),
    _albert("ALBERT-large", 1024, 24, 16, 4096, 18),
    _albert("ALBERT-xlarge", 2048, 24, 16, 8192, 60,
            "The paper rounds loosely: the released config gives 58.7M, and the masked-LM head adds only 0.3M."),
    _albert("ALBERT-xxlarge", 4096, 12, 64, 16384, 235,
            "Not reproducible from the released config (H=4096, 12 layers, E=128): the MLM and SOP heads add "
            "only 0.6M, and the paper does not say what its 235M counts."),
    _bert("RoBERTa-base", 768, 12, 12, 3072, 125, "Liu et al. 2019", vocab=50265, positions=514, types=1,
          classes=("RobertaConfig", "RobertaModel")),
    Preset("DistilBERT", "bert", "DistilBertConfig", "DistilBertModel",
           dict(vocab_size=30522, dim=768, n_layers=6, n_heads=12, hidden_dim=3072),
           66, "Sanh et al. 2019"),
    Preset("ELECTRA-small", "bert", "ElectraConfig", "ElectraModel",
           dict(vocab_size=30522, embedding_size=128, hidden_size=256, num_hidden_layers=12, num_attention_heads=4,
                intermediate_size=1024),
           14, "Clark et al. 2020", "13.5M rounds to 14M (the discriminator; its 1-output head adds 66K)."),
    Preset("ELECTRA-base", "bert", "ElectraConfig", "ElectraModel",
           dict(vocab_size=30522, embedding_size=768, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                intermediate_size=3072),
           110, "Clark et al. 2020",
           "The paper quotes BERT-base's figure for the same shape; ELECTRA has no pooler (−0.6M)."),
    Preset("XLNet-base", "xlnet", "XLNetConfig", "XLNetModel",
           dict(vocab_size=32000, d_model=768, n_layer=12, n_head=12, d_inner=3072),
           110, "often quoted (“same size as BERT-base”)",
           "Every layer has a relative-position projection (12 × 768² = 7.1M) and biases BERT lacks, and the "
           "vocabulary is 32000; there are no absolute position embeddings."),
    Preset("DeBERTa-v3-base", "deberta", "DebertaV2Config", "DebertaV2Model",
           dict(vocab_size=128100, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                intermediate_size=3072,
                max_position_embeddings=512, relative_attention=True, position_buckets=256, max_relative_positions=-1,
                pos_att_type=["p2c", "c2p"], position_biased_input=False, norm_rel_ebd="layer_norm", share_att_key=True,
                type_vocab_size=0, layer_norm_eps=1e-7),
           184, "He et al. 2021 (86M backbone + 98M embeddings)"),
    Preset("ModernBERT-base", "modernbert", "ModernBertConfig", "ModernBertModel",
           dict(vocab_size=50368, hidden_size=768, num_hidden_layers=22, num_attention_heads=12, intermediate_size=1152,
                max_position_embeddings=8192, global_attn_every_n_layers=3, local_attention=128),
           149, "Warner et al. 2024"),
)

# The ALBERT paper's sharing ablation (Table 4): ALBERT-base shapes, millions of parameters.
PAPER_TABLE4 = {
    (768, "all"): 31, (768, "attention"): 83, (768, "ffn"): 57, (768, "none"): 108,
    (128, "all"): 12, (128, "attention"): 64, (128, "ffn"): 38, (128, "none"): 89,
}


def preset(name: str) -> Preset:
    for p in PRESETS:
        if p.name == name:
            return p
    raise KeyError(name)


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


def preset_compute_cfg(p: Preset) -> dict:
    """The dimensions macs_per_sequence needs, read from the preset's config (whatever its names)."""
    c = p.config
    h = c.get("hidden_size", c.get("d_model", c.get("dim")))
    return {
        "hidden_size": h,
        "intermediate_size": c.get("intermediate_size", c.get("d_inner", c.get("hidden_dim"))),
        "num_hidden_layers": c.get("num_hidden_layers", c.get("n_layer", c.get("n_layers"))),
        "embedding_size": c.get("embedding_size", h),
        "pooler": p.model_class in ("BertModel", "RobertaModel", "AlbertModel"),
        "position_buckets": c.get("position_buckets", 0),
        "max_position_embeddings": c.get("max_position_embeddings", 512),
    }


def preset_rows(seq_len: int) -> list[dict]:
    """One row per preset: computed and published parameters, the difference, FLOPs per token, memory."""
    rows = []
    for p in PRESETS:
        n = count_preset(p)
        if n is None:
            continue
        flops = flops_per_token(p.family, preset_compute_cfg(p), seq_len)
        rows.append({
            "model": p.name,
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
        })
    return rows


def table4_rows() -> list[dict]:
    """The ALBERT paper's sharing ablation recomputed: ALBERT-base, E = 768 and 128, four sharing modes."""
    rows = []
    for (e, mode), paper in PAPER_TABLE4.items():
        arch = Arch(embedding_size=e, sharing=mode)
        n = breakdown(arch).total
        rows.append({"E": e, "sharing": SHARING_LABELS[mode], "computed (M)": round(n / 1e6, 2),
                     "paper (M)": paper, "difference (M)": round(n / 1e6 - paper, 2)})
    return rows


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
        vocab_size=config.vocab_size, hidden_size=config.hidden_size,
        embedding_size=getattr(config, "embedding_size", config.hidden_size), num_hidden_layers=layers,
        num_attention_heads=config.num_attention_heads, intermediate_size=config.intermediate_size,
        sharing=sharing, factorized=factorized, max_position_embeddings=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size, pooler=pooler,
    )


def loaded_counts(model) -> dict:
    """A loaded AlbertForMaskedLM / AlbertModel (or BERT): its real parameter count, summed over unique
    tensors, beside the formula's count from its config. Works on any device and dtype."""
    base = getattr(model, "albert", None) or getattr(model, "bert", None) or model
    has_pooler = getattr(base, "pooler", None) is not None
    arch = arch_from_config(model.config, has_pooler)
    b = breakdown(arch)
    has_head = base is not model
    formula = b.total_with_head if has_head else b.total
    return {"real": unique_numel(model), "formula": formula, "arch": arch, "with_head": has_head,
            "pooler": has_pooler, "breakdown": b}
