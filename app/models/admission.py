"""Your own checkpoint: decide whether a hub id or a local folder may stand in for a lesson's model — before a
single weight is downloaded — and say why not in one sentence.

A *role* is the part a model plays in a lesson (:data:`ROLES`): the masked LM of the masking lab, attention and
side by side; ELECTRA's generator and discriminator; XLNet's permutation LM; DeBERTa; ModernBERT. Admission reads
the repository's file list (with sizes, from the hub's API) and its ``config.json`` (at most
``CONFIG_CAP`` bytes, read into memory through :func:`app.models.download.read_small`: bounded requests, the
deadline, checksums, no redirect to another host), then applies the rules in this order:

1. **allow-list** — when the host sets ``BVE_ALLOW_MODELS`` (ids or globs, comma-separated), only those; checked
   before the hub is asked anything;
2. **no remote code** — a config with ``auto_map`` needs ``trust_remote_code``, which this app never enables;
3. **family** — its ``model_type`` must be one the role's lesson reads (:attr:`Role.model_types`), and its
   ``architectures`` (when named) must carry the head the role needs (a masked-LM head, ELECTRA's
   discriminator head, XLNet's LM head);
4. **safetensors** — weights in ``model.safetensors`` (or its shards); a repository with only pickled
   ``pytorch_model.bin`` is refused (unpickling can run code), and only safetensors are ever loaded;
5. **a tokenizer** — a file transformers builds one from;
6. **a config that adds up** — its sizes are whole numbers in a sane range;
7. **size** — the parameters (estimated from the config, :func:`estimate_parameters`) in float32, or the bytes of
   the weights when larger, must fit this host's limit (:func:`host_limit`: 40 % of free memory on a CPU; on a
   GPU also half its free memory; ``BVE_MODEL_LIMIT=2GB`` or ``=off`` overrides), and the download must fit the
   cache's disk; and the weights' bytes may not be far smaller than the parameters the config claims (a config
   claiming 10 B parameters over a few kilobytes of weights is a lie, even where the host turned the limit off).

Every rule reads only what ``decide`` is given, and ``decide`` never raises: a value it cannot read (Infinity, a
list where a name goes, a config nested deeper than ``MAX_DEPTH``) is a Refusal. The tokenizer counts too: a
tokenizer file over ``TOKENIZER_CAP`` is refused from the file list, and ``TOKENIZER_FACTOR`` x its bytes is added
to the memory it needs. Hub ids follow the hub's own ASCII rules; folders are matched only by folder rules
(``BVE_MODEL_FOLDERS``, or an allow-list pattern starting with ``/``, ``~`` or ``.``), hub ids only by hub-id
patterns; a sentence names what the visitor typed, never a path this computer resolved it to.

Then, for a model the rules admit: 7b. **the exact count** (:func:`measure`) — the model is built from its config
on the meta device in a box (:mod:`app.models.box`: a child process with the host's limit and a deadline), since a
config can size a model through fields no estimate reads; its parameters, buffers and tokenizer must fit the limit.
One deadline (``ADMIT_DEADLINE_S``) covers admission's reads, response headers included (:func:`within`).
And one more read: 8. **the head's weights** — the tensor names in the weights'
safetensors header (a ``Range`` read of a few KB, or the shards' index) must include the head the role needs
(:func:`check_head`): a config naming a masked-LM head over weights without one (DeBERTa v3) is refused, since the
head would start from random weights.

The answer is an :class:`Admitted` spec (what to fetch, how to load it, its estimates) or a :class:`Refusal`:
one sentence naming the rule and what would work, e.g.

- ``evil/remote is refused: its config.json asks for remote code (auto_map), and this app never runs code from
  a model repository; choose a checkpoint that transformers supports natively.``
- ``xlnet/xlnet-base-cased is refused for the masked LM of the masking lab, attention and side by side: its
  model_type is "xlnet", and that lesson reads bert, roberta, xlm-roberta, camembert, distilbert, albert,
  electra, deberta, deberta-v2 or modernbert; use it as XLNet's permutation LM instead.``
- ``some/pickle is refused: it ships its weights only as pickle (pytorch_model.bin), which can run code when
  loaded; choose a checkpoint with model.safetensors (or its safetensors conversion, e.g. revision refs/pr/1).``
- ``evil/ten-billion is refused: it needs about 38.2 GB of memory (10.3 B parameters in float32), more than this
  host's limit of 6.9 GB (40% of the 17.2 GB of memory free on this computer); choose a smaller checkpoint (a
  base-size one needs about 0.5 GB), or ask the host to raise BVE_MODEL_LIMIT.``

How the UI uses it (admit -> progress/cancel -> load; :mod:`app.models.own` holds the last two):

    from app.models import admission, own
    spec = admission.admit(text, role)            # a network read of a few KB, bounded (ADMIT_DEADLINE_S)
    if isinstance(spec, admission.Refusal):
        st.warning(spec.sentence)                  # one sentence; nothing was downloaded, nothing is loaded
    else:
        cancel = threading.Event()                 # a "Cancel" button sets it
        fetched = own.fetch_admitted(spec, on_file=lambda p: bar.progress(...p.file, p.file_done, p.file_size,
                                                                          p.bytes_per_s...), cancel=cancel)
        if fetched.ok:
            models = own.load_set(lesson.MODELS, own={spec.replaces: spec}, device=..., dtype=...)
        else:
            st.warning(fetched.error)              # a sentence: cancelled, stalled, lied about its size, ...

``own.fetch_admitted`` downloads one model at a time per process: a second visitor asking for the same model
waits on the first download, one asking for another waits in line for it to end (``own.in_progress()`` and
``own.waiting()`` say who is downloading and waiting for what), and each may cancel only its own wait. Afterwards the
model is in the standard Hugging Face cache and :func:`own.load_admitted` reads it offline. For ELECTRA the pair is
admitted together (:func:`admit_pair`), refused when their embeddings cannot be tied.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first, as in every app module; nothing heavy is imported here)

import fnmatch
import json
import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from app.models import download
from app.models.catalogue import CATALOGUE, Variant

#: every model_type a lesson can read, and the catalogue family it behaves as in the lessons' code
FAMILIES = {
    "bert": "bert",
    "roberta": "roberta",
    "xlm-roberta": "roberta",
    "camembert": "roberta",
    "distilbert": "distilbert",
    "albert": "albert",
    "electra": "electra",
    "deberta": "deberta",
    "deberta-v2": "deberta-v2",
    "modernbert": "modernbert",
    "xlnet": "xlnet",
}
MASKED_LM_TYPES = (
    "bert",
    "roberta",
    "xlm-roberta",
    "camembert",
    "distilbert",
    "albert",
    "electra",
    "deberta",
    "deberta-v2",
    "modernbert",
)
TOKENIZER_KINDS = {
    "bert": "WordPiece",
    "distilbert": "WordPiece",
    "electra": "WordPiece",
    "roberta": "byte-level BPE",
    "deberta": "byte-level BPE",
    "modernbert": "byte-level BPE",
    "xlm-roberta": "SentencePiece (XLM-R)",
    "camembert": "SentencePiece (CamemBERT)",
    "albert": "SentencePiece (Unigram)",
    "deberta-v2": "SentencePiece (DeBERTa v2/v3)",
    "xlnet": "SentencePiece (Unigram, cased)",
}
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model", "spm.model")


@dataclass(frozen=True)
class Role:
    name: str  # how the UI, the URL and the command line name it
    lesson: str  # where it is used, as a sentence says it
    model_types: tuple[str, ...]
    replaces: str  # the catalogue key it stands in for (and falls back to)
    heads: tuple[str, ...]  # suffixes of config.architectures that carry the head it needs ("" any)
    variant_role: str  # the catalogue Variant.role of what it loads


ROLES: dict[str, Role] = {
    r.name: r
    for r in [
        Role(
            "masked-lm",
            "the masked LM of the masking lab, attention and side by side",
            MASKED_LM_TYPES,
            "bert",
            ("ForMaskedLM", "BertForPreTraining", "AlbertForPreTraining"),
            "masked-lm",
        ),
        Role(
            "electra-generator",
            "ELECTRA's generator",
            ("electra",),
            "electra-generator",
            ("ElectraForMaskedLM",),
            "generator",
        ),
        Role(
            "electra-discriminator",
            "ELECTRA's discriminator",
            ("electra",),
            "electra-discriminator",
            ("ElectraForPreTraining",),
            "discriminator",
        ),
        Role("xlnet", "XLNet's permutation LM", ("xlnet",), "xlnet", ("XLNetLMHeadModel",), "permutation-lm"),
        Role(
            "deberta",
            "the DeBERTa lesson (it reads DeBERTa v1's disentangled attention)",
            ("deberta",),
            "deberta",
            ("ForMaskedLM",),
            "masked-lm",
        ),
        Role("modernbert", "the ModernBERT lesson", ("modernbert",), "modernbert", ("ForMaskedLM",), "masked-lm"),
    ]
}
ALLOW_ENV, LIMIT_ENV = "BVE_ALLOW_MODELS", "BVE_MODEL_LIMIT"
#: the folders (os.pathsep-separated) under which a visitor may name a local folder; unset: none, unless the
#: allow-list names the folder itself. Off by default: on a public server any visitor could otherwise make the app
#: read a folder of the host's (only config.json, the file list and safetensors, but still the host's)
FOLDERS_ENV = "BVE_MODEL_FOLDERS"
CONFIG_CAP = 1 << 20  # the largest config.json read, in bytes
ADMIT_DEADLINE_S = 20.0  # the file list and the config, together
MEMORY_SHARE, GPU_SHARE = 0.4, 0.5  # of free memory, of free GPU memory: the default limit
FLOAT32 = 4
#: the sane range of every size a config gives (a config outside it is refused, never estimated)
BOUNDS = (1, 1 << 24)
#: the hub's own rule for a repository id (ASCII letters, digits, ``_ . -``; not starting or ending with ``.`` or
#: ``-``; at most 96 characters a part): a look-alike id in Cyrillic letters never reaches the hub
_ID_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?"
HUB_ID = re.compile(rf"(?:{_ID_PART}/)?{_ID_PART}", re.ASCII)
#: tokenizer files a brought model may have, and the largest read: the largest published tokenizer of a family
#: here (xlm-roberta's tokenizer.json) is 17 MB; a 252 MB one held 4.1 GB and froze the server for minutes
TOKENIZER_CAP = 32 << 20
#: memory a tokenizer holds per byte of its files (a 252 MB tokenizer.json: 4.13 GB kept, 5.59 GB at its peak)
TOKENIZER_FACTOR = 20
#: the deepest nesting of objects and lists a config may have (published configs: 3, e.g. task_specific_params)
MAX_DEPTH = 12


@dataclass(frozen=True)
class Refusal:
    """Why a model may not play a role: ``rule`` (allow-list, source, hub, remote-code, family, head, safetensors,
    tokenizer, config, size, disk, pair, head-weights) and one sentence for a person."""

    source: str
    role: str
    rule: str
    sentence: str

    def __str__(self) -> str:
        return self.sentence


@dataclass(frozen=True)
class Admitted:
    """A model admitted for a role: where it is, what to fetch, how to load it, what it costs."""

    source: str  # the hub id, or the folder (absolute)
    kind: str  # "hub" | "folder"
    revision: str  # as asked ("main")
    commit: str | None  # the commit the decision was made on (hub); fetching pins it
    role: str
    model_type: str
    family: str  # the catalogue family the lessons treat it as
    model_class: str  # the transformers class that loads it
    files: tuple[tuple[str, int], ...]  # (file, bytes) to fetch: config, tokenizer, safetensors weights
    parameters: int  # estimated from the config
    download_bytes: int  # of those files
    memory_bytes: int  # needed to hold it in float32 (or the weights' bytes, when larger)
    limit: int | None  # the host's limit it was checked against (None: off)
    embeddings: tuple[int, int]  # (vocabulary, embedding width): what tying ELECTRA's pair needs to agree
    config_overrides: tuple[tuple[str, object], ...] = ()
    tokenizer_bytes: int = 0  # what its tokenizer is estimated to hold (TOKENIZER_FACTOR x its files' bytes)
    shown: str = ""  # the name as the visitor typed it (a sentence says this, never a resolved path)
    measured: bool = False  # parameters and memory_bytes counted on the meta device (measure), not estimated

    @property
    def name(self) -> str:
        """What a sentence calls it: what the visitor typed."""
        return self.shown or self.source

    @property
    def replaces(self) -> str:
        """The catalogue key it stands in for in a lesson's models."""
        return ROLES[self.role].replaces

    @property
    def key(self) -> str:
        """Its name among models and in cache keys: role, source and the commit decided on."""
        return f"own:{self.role}:{self.source}@{(self.commit or 'folder')[:12]}"

    @property
    def variant(self) -> Variant:
        """A catalogue-like entry for it, so that loading, lessons and caches treat it as they treat the catalogue's
        (no bundled stand-in: ``bundled`` names no folder)."""
        label = self.source if self.kind == "hub" else Path(self.source).name
        return Variant(
            self.key,
            label,
            self.family,
            ROLES[self.role].variant_role,
            self.source,
            "",
            self.model_class,
            TOKENIZER_KINDS[self.model_type],
            f"your own checkpoint ({self.model_type}), for {ROLES[self.role].lesson}",
            config_overrides=self.config_overrides,
        )

    def summary(self) -> str:
        return (
            f"{self.source}: {self.model_type}, about {_count(self.parameters)} parameters, "
            f"{download._human(self.download_bytes)} of files"
        )


# -- the host's limits ---------------------------------------------------------------------------------------------


def parse_size(text: str) -> int | None:
    """Bytes from a size a person writes ("2GB", "500 MB", "1.5G", "2GiB", "123"); None for "off"/"none"/"0".
    Raises ValueError for anything else."""
    t = text.strip().lower().replace(" ", "")
    if t in ("off", "none", "no", "unlimited", "0"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]?)(i?)b?", t)
    if not m or float(m[1]) <= 0:
        raise ValueError(f"{text!r} is not a size (write e.g. 2GB, 500MB or off)")
    base = 1024 if m[3] else 1000
    return int(float(m[1]) * base ** " kmgt".index(m[2] or " "))


def free_memory() -> int:
    """Bytes of memory this computer has free now (MemAvailable; else free pages)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def free_gpu_memory(device: str) -> int | None:
    """Bytes free on the CUDA device (None on a CPU, or when torch cannot tell)."""
    if not device.startswith("cuda"):
        return None
    try:
        import torch

        return int(torch.cuda.mem_get_info(torch.device(device))[0])
    except Exception:  # noqa: BLE001 — no card, no driver: the CPU's limit stands
        return None


def host_limit(
    device: str = "cpu", environ=os.environ, memory: int | None = None, gpu: int | None = None
) -> tuple[int | None, str]:
    """(the most bytes a model may need, the reason as a sentence says it). ``BVE_MODEL_LIMIT`` when set (None for
    "off"); else ``MEMORY_SHARE`` of free memory, and on a GPU at most ``GPU_SHARE`` of its free memory too
    (it loads on the CPU first, then moves). Raises ValueError for a malformed BVE_MODEL_LIMIT."""
    setting = environ.get(LIMIT_ENV, "").strip()
    if setting:
        limit = parse_size(setting)
        return limit, f"{LIMIT_ENV}={setting}"
    memory = free_memory() if memory is None else memory
    limit, why = (
        int(memory * MEMORY_SHARE),
        (f"{MEMORY_SHARE:.0%} of the {download._human(memory)} of memory free on this computer"),
    )
    gpu = free_gpu_memory(device) if gpu is None else gpu
    if gpu is not None and gpu * GPU_SHARE < limit:
        limit, why = int(gpu * GPU_SHARE), f"{GPU_SHARE:.0%} of the {download._human(gpu)} free on the GPU"
    return limit, why


def _patterns(environ) -> tuple[list[str], list[str]]:
    """``BVE_ALLOW_MODELS`` split into (hub-id patterns, folder patterns): a folder pattern starts with ``/``,
    ``~`` or ``.``; every other one is a hub id or a glob of ids."""
    patterns = [p.strip() for p in environ.get(ALLOW_ENV, "").split(",") if p.strip()]
    folders = [p for p in patterns if p.startswith(("/", "~", "."))]
    return [p for p in patterns if p not in folders], folders


def allowed(source: str, environ=os.environ) -> bool:
    """Whether ``BVE_ALLOW_MODELS`` (ids or globs, comma-separated; unset: everything) lets the hub id ``source``
    in. Only its hub-id patterns count: ``*bert*`` names hub ids, never a folder of this computer."""
    if not environ.get(ALLOW_ENV, "").strip():
        return True
    ids, _ = _patterns(environ)
    return any(fnmatch.fnmatchcase(source.lower(), p.lower()) for p in ids)


def folder_allowed(folder: str, environ=os.environ) -> bool:
    """Whether a local folder (resolved) may be loaded: inside a root of ``BVE_MODEL_FOLDERS``, or matched by a
    folder pattern of the allow-list (one the host wrote starting with ``/``, ``~`` or ``.``). A hub-id pattern
    never opens a folder."""
    path = Path(folder).resolve()
    roots = [Path(os.path.expanduser(r)).resolve() for r in environ.get(FOLDERS_ENV, "").split(os.pathsep) if r.strip()]
    if any(path == r or r in path.parents for r in roots):
        return True
    _, folders = _patterns(environ)
    return any(fnmatch.fnmatchcase(str(path), str(Path(os.path.expanduser(p)).absolute())) for p in folders)


# -- the parameters a config describes -----------------------------------------------------------------------------

_SIZES = {  # the config fields that size a model, by model_type (what transformers calls them there)
    "distilbert": dict(hidden="dim", layers="n_layers", inner="hidden_dim"),
    "xlnet": dict(hidden="d_model", layers="n_layer", inner="d_inner"),
}


def config_sizes(config: dict) -> dict[str, int]:
    """The sizes that count parameters: vocab, hidden, embedding, layers (distinct, ALBERT shares), inner,
    positions, types; each a whole number in ``BOUNDS``. Raises ValueError naming the field otherwise."""
    names = {
        "hidden": "hidden_size",
        "layers": "num_hidden_layers",
        "inner": "intermediate_size",
        **_SIZES.get(config.get("model_type"), {}),
    }
    out = {}
    for key, field in [("vocab", "vocab_size"), *((k, names[k]) for k in ("hidden", "layers", "inner"))]:
        value = config.get(field)
        if isinstance(value, bool) or not isinstance(value, int) or not BOUNDS[0] <= value <= BOUNDS[1]:
            raise ValueError(f"{field}={json.dumps(value)[:40]}")
        out[key] = value
    for key, field, default in [
        ("embedding", "embedding_size", out["hidden"]),
        ("positions", "max_position_embeddings", 0),
        ("types", "type_vocab_size", 0),
        ("groups", "num_hidden_groups", 1),
        ("buckets", "position_buckets", 0),
        ("inner_groups", "inner_group_num", 1),
    ]:
        value = config.get(field, default)
        if value is None or value == -1:
            value = default
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= BOUNDS[1]:
            raise ValueError(f"{field}={json.dumps(value)[:40]}")
        out[key] = value
    return out


def estimate_parameters(config: dict) -> int:
    """The parameters of the model a config describes, with its head, without building it (no torch): within a
    few percent of ``sum(p.numel())`` for every family here (tests/models/test_admission.py checks the published
    configs against a model built on the meta device). Raises ValueError for a config that does not add up."""
    c = config_sizes(config)
    mt = config.get("model_type")
    v, h, e, n, i, p, t = c["vocab"], c["hidden"], c["embedding"], c["layers"], c["inner"], c["positions"], c["types"]
    if mt == "albert":
        n = c["groups"] * max(c["inner_groups"], 1)  # one set of weights per group
    attention = 4 * (h * h + h)  # q, k, v, output
    if mt == "deberta" and config.get("relative_attention"):
        attention += 2 * h * h  # pos_proj, pos_q_proj
    if mt == "deberta-v2" and config.get("relative_attention") and not config.get("share_att_key"):
        attention += 2 * h * h
    feed_forward = (3 if mt == "modernbert" else 2) * h * i + i + h  # ModernBERT's GLU: Wi is H x 2I
    layer = attention + feed_forward + 4 * h  # two layer norms
    if mt == "xlnet":
        layer = 5 * h * h + 2 * h * i + i + 10 * h  # q, k, v, o, r; relative biases; segment embeddings
    embeddings = (
        v * e
        + (p * e if mt not in ("modernbert", "xlnet", "deberta-v2") or config.get("position_biased_input") else 0)
        + t * e
        + 2 * e
    )
    if mt == "deberta-v2" and config.get("relative_attention"):
        embeddings += 2 * (c["buckets"] or p) * h
    if e != h:
        embeddings += e * h + h  # the projection to the hidden width
    head = h * e + 3 * e + v  # transform, layer norm, decoder bias (the decoder shares the embeddings)
    return embeddings + n * layer + head


def depth(value, limit: int = MAX_DEPTH) -> int:
    """How deeply objects and lists nest in ``value`` (a scalar: 0), counted no further than ``limit + 1``."""
    deepest, level, todo = 0, 0, [(value, 0)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (dict, list)) and level <= limit:
            deepest = max(deepest, level + 1)
            todo.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _count(n: int) -> str:
    return f"{n / 1e9:.1f} B" if n >= 1e9 else f"{n / 1e6:.0f} M" if n >= 1e6 else f"{n / 1e3:.0f} K"


# -- the decision --------------------------------------------------------------------------------------------------


def decide(
    source: str,
    role: str,
    config: dict,
    files: dict[str, int | None],
    *,
    kind: str = "hub",
    commit: str | None = None,
    revision: str = "main",
    device: str = "cpu",
    environ=os.environ,
    memory: int | None = None,
    gpu: int | None = None,
    disk: int | None = None,
    shown: str | None = None,
) -> Admitted | Refusal:
    """The rules (see the module's docstring) applied to what was read: ``config`` (config.json) and ``files``
    ({file: bytes} of the repository or folder). Pure: no network; ``memory``, ``gpu`` and ``disk`` (bytes free)
    are measured when not given. ``shown`` is the name a sentence says (what the visitor typed; default
    ``source``). Never raises for anything the config or the file list holds."""
    try:
        return _decide(
            source,
            role,
            config,
            files,
            kind=kind,
            commit=commit,
            revision=revision,
            device=device,
            environ=environ,
            memory=memory,
            gpu=gpu,
            disk=disk,
            shown=shown or source,
        )
    except (ValueError, TypeError, OverflowError, KeyError, AttributeError, RecursionError) as e:
        return Refusal(
            shown or source,
            role,
            "config",
            f"{shown or source} is refused: its config.json holds values "
            f"this app cannot read ({type(e).__name__}), so it cannot be checked.",
        )


def _config_problem(config, files, r, role: str) -> tuple[str, str] | None:
    """(rule, why) where the config or the file list refuses a checkpoint for role ``r``: not a config, remote code,
    another family, or a head the lesson cannot use; None where they pass."""
    if not isinstance(config, dict):
        return ("config", "its config.json is not a JSON object, so it cannot be checked")
    if depth(config) > MAX_DEPTH:
        return ("config", f"its config.json nests objects more than {MAX_DEPTH} deep, which no model config does")
    if not isinstance(files, dict) or not all(
        isinstance(f, str) and (n is None or isinstance(n, int) and n >= 0) for f, n in files.items()
    ):
        return ("config", "its file list is not a list of files with sizes")
    if config.get("auto_map") or config.get("trust_remote_code"):
        return (
            "remote-code",
            "its config.json asks for remote code (auto_map), and this app never runs code "
            "from a model repository; choose a checkpoint that transformers supports natively",
        )
    mt = config.get("model_type")
    if not isinstance(mt, str) or mt not in r.model_types:
        other = next((o.lesson for o in ROLES.values() if mt in o.model_types and o.name != role), None)
        what = f"its model_type is {json.dumps(mt)[:40]}" if mt else "its config.json names no model_type"
        return (
            "family",
            f"{what}, and that lesson reads {_either(r.model_types)}"
            + (f"; use it as {other} instead" if other else ""),
        )
    named = config.get("architectures") or []
    if not isinstance(named, list):
        return ("config", "its config.json's architectures is not a list of class names")
    architectures = [a for a in named if isinstance(a, str)]
    discriminator = any(a == "ElectraForPreTraining" for a in architectures)
    if (
        architectures
        and not any(a.endswith(h) for a in architectures for h in r.heads)
        or (r.variant_role != "discriminator" and discriminator)
    ):
        fits = next(
            (
                o
                for o in ROLES.values()
                if mt in o.model_types and any(a.endswith(h) for a in architectures for h in o.heads)
            ),
            None,
        )
        return (
            "head",
            f"its config names {', '.join(architectures)[:80]}, which has no "
            f"{_head_of(r)}; "
            + (f"use it as {fits.lesson} instead" if fits else "choose a checkpoint pre-trained with that head"),
        )
    return None


def _file_sets(files: dict) -> tuple[list[str], list[str], list[str]]:
    """(weight files, every file to fetch, tokenizer files) of a checkpoint's file list."""
    chosen = list(download.files_to_fetch(list(files)))
    weights = [
        f
        for f in chosen
        if f.endswith((".safetensors", ".bin", ".json")) and f not in download.CONFIG_AND_TOKENIZER_FILES
    ]
    tokenizer_files = [f for f in chosen if f in TOKENIZER_FILES or f in ("merges.txt", "added_tokens.json")]
    return weights, chosen, tokenizer_files


def _files_problem(files: dict) -> tuple[str, str] | None:
    """(rule, why) where the files refuse a checkpoint: no safetensors weights, no tokenizer, sizes unknown, or a
    tokenizer too large to read; None where they pass."""
    weights, chosen, tokenizer_files = _file_sets(files)
    if not any(f.endswith(".safetensors") for f in weights):
        pickled = [f for f in files if f.endswith((".bin", ".pt", ".pth", ".ckpt"))]
        return (
            "safetensors",
            (
                "it ships its weights only as pickle ("
                + ", ".join(sorted(pickled)[:2])
                + "), which can run code when loaded; choose a checkpoint with "
                "model.safetensors (or its safetensors conversion, e.g. revision refs/pr/1)"
            )
            if pickled
            else "it has no weights transformers can load (model.safetensors)",
        )
    if not any(f in files for f in TOKENIZER_FILES):
        return (
            "tokenizer",
            "it has no tokenizer (tokenizer.json, vocab.txt, vocab.json or a SentencePiece "
            "model); choose a checkpoint that ships its tokenizer",
        )
    if any(files.get(f) is None for f in chosen):
        return ("size", "the hub did not say how large its files are, so its size cannot be checked before downloading")
    big = next((f for f in tokenizer_files if files[f] > TOKENIZER_CAP), None)
    if big is not None:
        return (
            "tokenizer",
            f"its {big} is {download._human(files[big])}, more than the "
            f"{download._human(TOKENIZER_CAP)} this app reads for a tokenizer (the largest "
            "published tokenizer of a family here, XLM-RoBERTa's, is 17 MB)",
        )
    return None


def _decide(
    source: str,
    role: str,
    config,
    files: dict,
    *,
    kind: str,
    commit: str | None,
    revision: str,
    device: str,
    environ,
    memory: int | None,
    gpu: int | None,
    disk: int | None,
    shown: str,
) -> Admitted | Refusal:
    r = ROLES[role]

    def refuse(rule: str, why: str) -> Refusal:
        return Refusal(shown, role, rule, f"{shown} is refused{for_role(rule)}: {why}.")

    def for_role(rule: str) -> str:
        return f" for {r.lesson}" if rule in ("family", "head", "pair") else ""

    problem = _config_problem(config, files, r, role) or _files_problem(files)
    if problem:
        return refuse(*problem)
    mt = config["model_type"]
    architectures = [a for a in config.get("architectures") or [] if isinstance(a, str)]
    weights, chosen, tokenizer_files = _file_sets(files)
    try:
        parameters = estimate_parameters(config)
    except ValueError as e:
        return refuse("config", f"its config.json gives {e}, which is not a size a model of this family has")
    weight_bytes = sum(files[f] for f in weights if f.endswith(".safetensors"))
    tokenizer_bytes = TOKENIZER_FACTOR * sum(files[f] for f in tokenizer_files)
    memory_bytes = max(parameters * FLOAT32, weight_bytes) + tokenizer_bytes
    download_bytes = sum(files[f] for f in chosen)
    try:
        limit, why = host_limit(device, environ, memory, gpu)
    except ValueError as e:
        return refuse("size", f"this host's {LIMIT_ENV} is malformed ({e})")
    if limit is not None and memory_bytes > limit:
        return refuse(
            "size",
            f"it needs about {download._human(memory_bytes)} of memory ({_count(parameters)} "
            f"parameters in float32{_and_tokenizer(tokenizer_bytes)}), more than this host's limit of "
            f"{download._human(limit)} "
            f"({why}); choose a smaller checkpoint (a base-size one needs about 0.5 GB), or ask "
            f"the host to raise {LIMIT_ENV}",
        )
    if weight_bytes < parameters // 2:  # even 8-bit weights take a byte a parameter
        return refuse(
            "config",
            f"its config.json describes about {_count(parameters)} parameters, but its weights "
            f"are only {download._human(weight_bytes)}: they do not match",
        )
    if kind == "hub":
        from huggingface_hub import constants

        cache = Path(constants.HF_HUB_CACHE)
        free = disk if disk is not None else shutil.disk_usage(_existing(cache)).free
        if download_bytes > free:
            return refuse(
                "disk",
                f"its files take {download._human(download_bytes)} and the cache at {cache} has "
                f"{download._human(free)} free; free some space or point HF_HOME elsewhere",
            )
    overrides = dict(CATALOGUE[r.replaces].config_overrides) if mt == CATALOGUE[r.replaces].family else {}
    overrides["use_safetensors"] = True  # never a pickle, even one lying beside the safetensors
    return Admitted(
        source,
        kind,
        revision,
        commit,
        role,
        mt,
        FAMILIES[mt],
        _model_class(role, mt, architectures),
        tuple((f, files[f]) for f in chosen),
        parameters,
        download_bytes,
        memory_bytes,
        limit,
        (config_sizes(config)["vocab"], config_sizes(config)["embedding"]),
        tuple(overrides.items()),
        tokenizer_bytes,
        shown,
    )


def _and_tokenizer(tokenizer_bytes: int) -> str:
    return f", and about {download._human(tokenizer_bytes)} for its tokenizer" if tokenizer_bytes >= 1 << 20 else ""


def _model_class(role: str, model_type: str, architectures: list[str]) -> str:
    """The transformers class a role loads: XLNet's LM head (not an Auto class's: DESIGN), ELECTRA's discriminator,
    else the masked LM."""
    if model_type == "xlnet":
        return "XLNetLMHeadModel"
    if role == "electra-discriminator":
        return "ElectraForPreTraining"
    return "AutoModelForMaskedLM"


def _head_of(role: Role) -> str:
    return {"discriminator": "replaced-token (discriminator) head", "permutation-lm": "language-model head"}.get(
        role.variant_role, "masked-LM head"
    )


def _either(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


# -- reading a repository or a folder ------------------------------------------------------------------------------


def read_folder(folder: Path) -> tuple[dict, dict[str, int]]:
    """(config, {file: bytes}) of a local folder. Raises OSError / ValueError."""
    files = {p.name: p.stat().st_size for p in folder.iterdir() if p.is_file()}
    if files.get("config.json", 0) > CONFIG_CAP:
        raise ValueError(f"config.json is larger than {download._human(CONFIG_CAP)}")
    return json.loads((folder / "config.json").read_text()), files


def read_hub(
    repo_id: str, revision: str = "main", deadline: float = ADMIT_DEADLINE_S, budget=None
) -> tuple[str, dict, dict[str, int | None]]:
    """(commit, config, {file: bytes}) of a hub repository: its file list from the hub's API and its config.json,
    read into memory, within ``deadline`` seconds (or ``budget``: ``budget.step`` names the read under way);
    nothing is written. Raises what the downloader raises."""
    budget = budget or download._Budget(deadline)
    budget.step = f"the file list of {repo_id}"
    info = download._repo_info(repo_id, budget, revision)
    if not isinstance(info.sha, str) or not download.CHECKSUM.fullmatch(info.sha):
        raise download.Refused(f"the hub named a commit for {repo_id} that is not a commit id (40 or 64 hex digits)")
    files = {s.rfilename: s.size for s in info.siblings or [] if "/" not in s.rfilename}
    if "config.json" not in files:
        raise download.Refused(f"{repo_id} has no config.json, so what it is cannot be checked")
    budget.step = f"config.json of {repo_id}"
    config = json.loads(download.read_small(repo_id, info.sha, "config.json", CONFIG_CAP, budget))
    if depth(config) > MAX_DEPTH:
        raise download.Refused(f"its config.json nests objects more than {MAX_DEPTH} deep, which no model config does")
    budget.step = None
    return info.sha, config, files


# -- the head's weights -------------------------------------------------------------------------------------------
# A config can name a masked-LM architecture over weights that have no masked-LM head: microsoft/deberta-v3-base
# is published so (loaded as DebertaV2ForMaskedLM, transformers reports the masked-LM head's tensors as newly
# initialized). transformers then starts the head from random weights with a warning nobody in a lecture reads, and the
# masking lab would show random guesses as the model's. The safetensors header names every tensor: admission reads it (a
# Range read of a few KB, or the shards' index) and refuses such a checkpoint.

HEADER_CAP = 16 << 20  # the largest safetensors header read (bert-large's is ~40 KB)


def safetensors_names(read) -> set[str] | None:
    """The tensor names in a safetensors file's header, given ``read(start, length) -> bytes``; None when the
    header cannot be read or is not one (too large, cut short, not a JSON object)."""
    head = read(0, 8)
    if len(head) < 8:
        return None
    n = int.from_bytes(head, "little")
    if not 2 <= n <= HEADER_CAP:
        return None
    body = read(8, n)
    if len(body) < n:
        return None
    try:
        header = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return {k for k in header if k != "__metadata__"} if isinstance(header, dict) else None


def _index_names(text: bytes) -> set[str] | None:
    """The tensor names of a sharded checkpoint, from ``model.safetensors.index.json``'s weight map."""
    try:
        index = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return None
    weights = index.get("weight_map") if isinstance(index, dict) else None
    return set(weights) if isinstance(weights, dict) else None


def tensor_names(adm: Admitted, deadline: float = ADMIT_DEADLINE_S) -> set[str] | None:
    """Every tensor name in an admitted model's weights (hub: a Range read of the header, or the shards' index;
    folder: the files themselves), or None when they cannot be read (then nothing is refused for it)."""
    names = dict(adm.files)
    try:
        if adm.kind == "folder":
            return folder_tensor_names(Path(adm.source), names)

        def read(budget):
            budget.step = f"the header of {adm.source}'s weights"
            if "model.safetensors.index.json" in names:
                return _index_names(
                    download.read_small(adm.source, adm.commit, "model.safetensors.index.json", CONFIG_CAP * 8, budget)
                )
            if "model.safetensors" not in names:
                return None
            return safetensors_names(
                lambda start, length: download.read_range(
                    adm.source, adm.commit, "model.safetensors", start, length, budget
                )
            )

        return within(deadline, read)
    except Exception:  # noqa: BLE001 — unreadable names refuse nothing; loading says what is wrong
        return None


def folder_tensor_names(folder: Path, files) -> set[str] | None:
    """Every tensor name in the weights of a model in a local folder (or a cached snapshot); None when unreadable."""
    try:
        if "model.safetensors.index.json" in files:
            with open(folder / "model.safetensors.index.json", "rb") as f:
                return _index_names(f.read(CONFIG_CAP * 8))
        if "model.safetensors" not in files:
            return None
        with open(folder / "model.safetensors", "rb") as f:

            def read(start: int, length: int) -> bytes:
                f.seek(start)
                return f.read(length)

            return safetensors_names(read)
    except (OSError, ValueError):
        return None


def _normal(name: str) -> str:
    """A tensor name as transformers loads it: the legacy LayerNorm names gamma/beta are weight/bias."""
    return re.sub(r"\.gamma$", ".weight", re.sub(r"\.beta$", ".bias", name))


def head_parameters(model_class: str, config: dict) -> tuple[str, ...]:
    """The names of the head's own parameters (not the encoder's, not those tied to the embeddings) of
    ``model_class`` built from ``config`` — built on the meta device: no memory, no weights."""
    import torch
    import transformers

    cfg = transformers.AutoConfig.for_model(**{k: v for k, v in config.items() if k != "auto_map"})
    cls = getattr(transformers, model_class)
    with torch.device("meta"):
        model = cls.from_config(cfg) if model_class.startswith("Auto") else cls(cfg)
    base = model.base_model_prefix
    tied = set(getattr(model, "_tied_weights_keys", None) or ())
    return tuple(k for k in model.state_dict() if not k.startswith(base + ".") and k not in tied)


def missing_head(model_class: str, config: dict, names: set[str]) -> tuple[str, ...]:
    """The head's parameters when the weights (``names``) hold none of them (the head would start from random
    weights), else ()."""
    head = head_parameters(model_class, config)
    have = {_normal(n) for n in names}
    return () if not head or any(h in have for h in head) else head


def check_head(
    adm: Admitted, config: dict, names: set[str] | None, head: tuple[str, ...] | None = None
) -> Refusal | None:
    """A Refusal when the admitted model's weights carry no head for its role (:func:`missing_head`); ``head``:
    the head's parameter names when already counted (:func:`measure`, in the box)."""
    if not names:
        return None
    if head is not None:
        have = {_normal(n) for n in names}
        head = () if not head or any(h in have for h in head) else head
    else:
        try:
            head = missing_head(adm.model_class, config, names)
        except Exception:  # noqa: BLE001 — a config transformers cannot build is the loader's to report
            return None
    if not head:
        return None
    r = ROLES[adm.role]
    common = os.path.commonprefix(list(head)).rpartition(".")[0]
    prefix = f"{common}.*" if common else ", ".join(sorted({f"{h.split('.')[0]}.*" for h in head}))
    return Refusal(
        adm.name,
        adm.role,
        "head-weights",
        f"{adm.name} is refused for {r.lesson}: its weights carry no {_head_of(r)} (none of the "
        f"{len(head)} tensors {prefix} is in its safetensors), so that head would start from random "
        f"weights and its guesses would mean nothing; choose a checkpoint published with the head "
        f"(its model card says it was pre-trained with it)",
    )


# -- the exact count, in the box -------------------------------------------------------------------------------------
# The estimate above reads the fields every family has; a config can add others that size the model too
# (DeBERTa v2's conv_kernel_size=400001, attention_head_size=1e6, max_relative_positions=1e7 with position_buckets
# 0): 1.29 MB of files admitted as "1.2 MB in memory" took the server to 9.9 GB. So an admitted model is built from
# its config on the meta device — no weights, no memory — in a child process with a memory limit and a deadline
# (app.models.box: building can allocate too), and its exact count decides.


def measure(adm: Admitted, config: dict, names=None) -> Admitted | Refusal:
    """``adm`` with its parameters and memory counted exactly (the model built from ``config`` on the meta device
    in the box: parameters in float32, buffers, the tokenizer's estimate), or a Refusal: the build failed or
    outlasted its deadline, the count is past the host's limit, or the weights are far smaller than it; then the
    head check on the tensor ``names`` of its weights (:func:`check_head`; ``names`` may be a function that reads
    them, called only once the count has admitted the model: a refused one costs no read of its weights)."""
    from app.models import box

    allowance = adm.limit if adm.limit is not None else int(free_memory() * MEMORY_SHARE)
    got = box.measure_config(adm.model_class, config, allowance)
    if not got.ok or not isinstance(got.value, dict):
        return Refusal(
            adm.name,
            adm.role,
            "config",
            f"{adm.name} is refused: a model built from its config.json (on the meta device, with no "
            f"weights) could not be counted — {got.error}; choose a checkpoint whose config transformers "
            "builds as published.",
        )
    parameters, buffers = got.value["parameters"], got.value["buffers"]
    weight_bytes = sum(n or 0 for f, n in adm.files if f.endswith(".safetensors"))
    memory_bytes = max(parameters * FLOAT32, weight_bytes) + buffers + adm.tokenizer_bytes
    if adm.limit is not None and memory_bytes > adm.limit:
        return Refusal(
            adm.name,
            adm.role,
            "size",
            f"{adm.name} is refused: built from its config.json it has {_count(parameters)} parameters, "
            f"so it needs about {download._human(memory_bytes)} of memory (in float32, with its buffers"
            f"{_and_tokenizer(adm.tokenizer_bytes)}), more than this host's limit of "
            f"{download._human(adm.limit)}; choose a smaller checkpoint, or ask the host to raise "
            f"{LIMIT_ENV}.",
        )
    if weight_bytes < parameters // 2:
        return Refusal(
            adm.name,
            adm.role,
            "config",
            f"{adm.name} is refused: its config.json describes {_count(parameters)} parameters, but its "
            f"weights are only {download._human(weight_bytes)}: they do not match.",
        )
    import dataclasses

    counted = dataclasses.replace(adm, parameters=parameters, memory_bytes=memory_bytes, measured=True)
    names = names() if callable(names) else names
    return check_head(counted, config, names, head=tuple(got.value["head"])) or counted


def _source_kind(source: str) -> str | None:
    """ "folder" for an existing directory (or a path-like text), "hub" for a hub id (the hub's own character
    rules: :data:`HUB_ID`, no ``--`` or ``..``, not ending ``.git``), None for neither."""
    if source.startswith(("/", "./", "../", "~")) or os.path.isdir(os.path.expanduser(source)):
        return "folder"
    ok = HUB_ID.fullmatch(source) and ".." not in source and "--" not in source and not source.endswith(".git")
    return "hub" if ok else None


def said(source: str) -> str:
    """What the visitor typed, as a sentence may quote it: invisible and direction characters shown as code
    points, at most 100 characters. Never a path this computer resolved it to."""
    from app.core.text import visible

    text = visible(source.strip())
    return text if len(text) <= 100 else text[:99] + "…"


#: hub reads of admission abandoned at their deadline and still waiting on the hub (a hub that trickles its headers
#: keeps a connection open past any read timeout); past ``MAX_LINGERING``, new hub admissions are refused until
#: they end, so a slow hub cannot pile up threads on the server
MAX_LINGERING = 8
_LINGERING: set[threading.Thread] = set()
_LINGERING_LOCK = threading.Lock()


class AdmissionTimeout(RuntimeError):
    """Admission's reads of the hub did not end within their deadline; ``step`` says which was under way."""

    def __init__(self, step: str, seconds: float):
        super().__init__(f"the hub did not finish sending {step} within {seconds:.0f} s")
        self.step, self.seconds = step, seconds


def within(deadline: float, work, *args):
    """``work(budget, *args)`` with one deadline over every request it makes, response headers included: it runs in
    a thread of its own, and at the deadline the caller gets :class:`AdmissionTimeout` naming the step that was
    under way (``budget.step``) while the thread is told to stop (it ends at its next byte)."""
    with _LINGERING_LOCK:
        _LINGERING.difference_update([t for t in _LINGERING if not t.is_alive()])
        if len(_LINGERING) >= MAX_LINGERING:
            raise download.Refused(
                f"this server is still waiting on {len(_LINGERING)} slow answers from the hub; try again in a minute"
            )
    budget = download._Budget(deadline)
    answer: dict = {}

    def run() -> None:
        try:
            answer["value"] = work(budget, *args)
        except BaseException as e:  # noqa: BLE001 — handed to the caller
            answer["error"] = e

    thread = threading.Thread(target=run, name="admission-read", daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        budget.cancelled = True
        with _LINGERING_LOCK:
            _LINGERING.add(thread)
        raise AdmissionTimeout(budget.step or "its answer", deadline)
    if "error" in answer:
        raise answer["error"]
    return answer["value"]


def _gather(source: str, revision: str, environ) -> tuple[str, str, str | None, dict, dict, str] | Refusal:
    """(source as kept, kind, commit, config, files, the name as typed) or a Refusal (role left blank) for the
    checks before the rules: allow-list, what the text names, and reading it. A Refusal names what the visitor
    typed, never the path this computer resolved it to."""
    source = source.strip()
    shown = said(source)
    kind = _source_kind(source)

    def refuse(rule: str, why: str) -> Refusal:
        return Refusal(shown, "", rule, f"{shown or 'an empty name'} is refused: {why}.")

    if kind is None:
        return refuse(
            "source",
            "it is neither a hub id (organisation/name in ASCII letters, digits, - _ and ., e.g. "
            "google-bert/bert-large-uncased) nor a folder on this computer",
        )
    if kind == "folder":
        resolved = str(Path(os.path.expanduser(source)).resolve())
        if not folder_allowed(resolved, environ):
            return refuse(
                "source",
                f"this server does not load local folders named by visitors; the host lists the "
                f"folders they may load from in {FOLDERS_ENV} (e.g. {FOLDERS_ENV}=~/checkpoints), "
                f"or names the folder in {ALLOW_ENV} (starting with / or ~)",
            )
        folder = Path(resolved)
        if not (folder / "config.json").is_file():
            return refuse("source", "that folder has no config.json (save a model there with save_pretrained)")
        try:
            config, files = read_folder(folder)
        except (OSError, ValueError, RecursionError) as e:
            return refuse("config", f"its config.json cannot be read ({type(e).__name__})")
        return resolved, kind, None, config, files, shown
    if not allowed(source, environ):
        return refuse(
            "allow-list",
            f"this host allows only the models in {ALLOW_ENV} "
            f"({environ.get(ALLOW_ENV, '').strip()[:120]}); ask the host to add it",
        )
    if download_offline(environ):
        return refuse("hub", "HF_HUB_OFFLINE is set, so the hub cannot be asked; unset it, or give a folder")
    from huggingface_hub import constants

    from app.core.text import visible

    try:
        commit, config, files = within(ADMIT_DEADLINE_S, _read_hub, source, revision)
    except AdmissionTimeout as e:
        return refuse(
            "hub",
            f"it could not be checked: {e} (admission reads the file list and config.json "
            "before anything is downloaded); nothing was downloaded or kept",
        )
    except (json.JSONDecodeError, RecursionError):
        return refuse("config", "its config.json is not JSON this app can read")
    except Exception as e:  # noqa: BLE001 — every failure is one sentence
        why, _ = download._describe(e, constants.ENDPOINT, visible)
        return refuse("hub", f"it could not be checked ({why})")
    return source, kind, commit, config, files, shown


def _read_hub(budget, repo_id: str, revision: str):
    return read_hub(repo_id, revision, budget=budget)


def download_offline(environ=os.environ) -> bool:
    return environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def admit(
    source: str, role: str | None = None, *, revision: str = "main", device: str = "cpu", environ=os.environ
) -> Admitted | Refusal:
    """Whether ``source`` (a hub id or a local folder) may play ``role`` (a key of :data:`ROLES`; None: the first
    role its config fits), decided from its file list, config.json, the model built from that config on the meta
    device (:func:`measure`, in a box) and the tensor names in its weights' header — never the weights themselves.
    Never raises for anything the hub, the folder or the config does: the Refusal says it in one sentence."""
    if role is not None and role not in ROLES:
        raise ValueError(f"unknown role {role!r}; the roles are {', '.join(ROLES)}")
    got = _gather(source, revision, environ)
    if isinstance(got, Refusal):
        return Refusal(got.source, role or "", got.rule, got.sentence)
    source, kind, commit, config, files, shown = got
    roles = (
        [role]
        if role
        else [n for n, r in ROLES.items() if isinstance(config, dict) and config.get("model_type") in r.model_types]
        or ["masked-lm"]
    )
    answers = [
        decide(
            source,
            r,
            config,
            files,
            kind=kind,
            commit=commit,
            revision=revision,
            device=device,
            environ=environ,
            shown=shown,
        )
        for r in roles
    ]
    chosen = next((a for a in answers if isinstance(a, Admitted)), answers[0])
    if isinstance(chosen, Admitted):  # counted exactly; the weights' own tensor names: a head may be absent
        return measure(chosen, config, lambda: tensor_names(chosen))
    return chosen


def pair(generator: Admitted, discriminator: Admitted) -> tuple[Admitted, Admitted] | Refusal:
    """ELECTRA's generator and discriminator, each admitted for its role, checked together: they must share a
    vocabulary and embeddings of one shape (the lesson feeds the generator's samples to the discriminator, and ties
    their token embeddings as the paper does), and together fit the host's limit; else a Refusal. The one rule for
    a pair, wherever its two answers came from (the hub, the cache, a folder)."""
    g, d = generator, discriminator
    both = f"{g.name} + {d.name}"
    if g.embeddings != d.embeddings:
        return Refusal(
            both,
            "electra-discriminator",
            "pair",
            f"{g.name} and {d.name} cannot be paired for ELECTRA's lesson: their token embeddings are "
            f"{g.embeddings[0]} x {g.embeddings[1]} and {d.embeddings[0]} x {d.embeddings[1]}, so they "
            "cannot be tied and the generator's samples would not be the discriminator's words; choose "
            "a generator and discriminator released together (e.g. google/electra-base-generator with "
            "google/electra-base-discriminator).",
        )
    need = g.memory_bytes + d.memory_bytes  # the pair together must fit the limit each fitted alone
    limit = min((x for x in (g.limit, d.limit) if x is not None), default=None)
    if limit is not None and need > limit:
        return Refusal(
            both,
            "electra-discriminator",
            "size",
            f"{g.name} and {d.name} are refused together: they need about {download._human(need)} of "
            f"memory, more than this host's limit of {download._human(limit)}; choose a smaller pair, "
            f"or ask the host to raise {LIMIT_ENV}.",
        )
    return g, d


def admit_pair(
    generator: str, discriminator: str, *, revision: str = "main", device: str = "cpu", environ=os.environ
) -> tuple[Admitted, Admitted] | Refusal:
    """ELECTRA's generator and discriminator, admitted together: each for its role, then :func:`pair`."""
    g = admit(generator, "electra-generator", revision=revision, device=device, environ=environ)
    if isinstance(g, Refusal):
        return g
    d = admit(discriminator, "electra-discriminator", revision=revision, device=device, environ=environ)
    if isinstance(d, Refusal):
        return d
    return pair(g, d)
