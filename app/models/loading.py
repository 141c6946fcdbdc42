"""One way to load any catalogue variant: ``from_pretrained`` on a hub id, a local cache, or the bundled
folder — the same code path for all three. Three sources:

- ``auto`` (the default): the real checkpoint when it is complete in the local Hugging Face cache (a
  Space's ``preload_from_hub``, or ``python -m app.models.prefetch`` before class), else the bundled
  stand-in. It never touches the network, so it costs nothing offline.
- ``hub``: the cache, then the hub itself if it answers within ``HUB_PROBE_TIMEOUT_S``, and otherwise
  the bundled checkpoint with a notice saying why.
- ``bundled``: always the stand-in in ``assets/models``.

It never hangs on an unreachable network and never enables ``trust_remote_code``. Models come back in
float32 (or the dtype asked for on GPU), in eval mode, with eager attention (so attentions can be read)
and must not be mutated by callers.
"""

from __future__ import annotations

from app.core import preload

import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from app.models import device as devices
from app.models.catalogue import Variant, get

HUB_PROBE_TIMEOUT_S = 1.5
# transformers' lazy imports and from_pretrained are not safe in two threads at once (the warm-start
# thread and a page loading together gave "cannot import name AutoTokenizer" and meta-tensor copies)
_LOAD_LOCK = threading.RLock()
SOURCES = ("auto", "hub", "bundled")


class ModelUnavailable(RuntimeError):
    """Neither the hub nor the bundled folder could provide the model; the message says why."""


@dataclass
class Loaded:
    variant: Variant
    model: object  # a transformers PreTrainedModel, in eval mode
    tokenizer: object
    source: str  # "bundled" | "hub" | "hub cache"
    location: str  # the hub id or the folder it was read from
    device: str
    dtype: str
    load_seconds: float
    notice: str | None = None  # why the result differs from what was asked for

    @property
    def identity(self) -> tuple:
        """A hashable name for this exact model, for st.cache_data keys (pass the model as ``_loaded``)."""
        return (self.variant.key, self.source, self.location, self.device, self.dtype)

    @property
    def is_bundled(self) -> bool:
        return self.source == "bundled"

    @property
    def shown_as(self) -> str:
        """Which model this is, as a page says it: the hub id, or the bundled stand-in for it."""
        return f"{self.variant.hub_id} (from the local cache)" if self.source == "hub cache" else (
            self.variant.hub_id if self.source == "hub" else f"bundled stand-in for {self.variant.hub_id}")

    def badge_line(self) -> tuple[str, str, str, float]:
        """(which model, device, dtype, load seconds) for the sidebar badge."""
        return ("bundled" if self.is_bundled else self.variant.hub_id), self.device, self.dtype, self.load_seconds


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def hub_reachable(hub_id: str, timeout: float = HUB_PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Ask the hub for the model's config with a hard timeout. (reachable, reason if not)."""
    if hub_offline():
        return False, "HF_HUB_OFFLINE is set"
    url = f"{hub_endpoint()}/{hub_id}/resolve/main/config.json"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout) as r:
            return 200 <= r.status < 400, f"the hub answered {r.status}"
    except urllib.error.HTTPError as e:
        return False, f"the hub answered {e.code}"
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        reason = getattr(e, "reason", e)
        return False, f"the hub could not be reached ({type(reason).__name__})"


def _model_class(variant: Variant):
    import transformers

    return getattr(transformers, variant.model_class)


def _from_pretrained(variant: Variant, location: str | Path, local_only: bool):
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # load reports and progress bars are noise in a lecture
    hf_logging.disable_progress_bar()

    kwargs = dict(local_files_only=local_only, trust_remote_code=False)
    tokenizer = AutoTokenizer.from_pretrained(location, **kwargs)
    # float32 whatever the checkpoint stores (the bundled ones store float16); the device move casts later
    model = _model_class(variant).from_pretrained(location, attn_implementation="eager", dtype="float32",
                                                  **variant.load_kwargs, **kwargs)
    if variant.family == "xlnet":
        tokenizer.padding_side = "left"
    return model, tokenizer


def cached_snapshot(hub_id: str) -> Path | None:
    """The folder of ``hub_id``'s main revision in the local Hugging Face cache, found as huggingface_hub
    finds it (``refs/main`` -> ``snapshots/<commit>``), or None.

    The cache is read from that folder, not through the hub id: given a hub id, even with
    ``local_files_only=True``, transformers and huggingface_hub still reach for the network — a user-agent
    registry fetched from ``HF_ENDPOINT`` (up to 3 s on a dead network) and, for a repo with only
    ``pytorch_model.bin`` (microsoft/deberta-base), a background thread that asks the hub to convert it to
    safetensors. A folder is only files.
    """
    from huggingface_hub import constants

    storage = Path(constants.HF_HUB_CACHE) / f"models--{hub_id.replace('/', '--')}"
    try:
        commit = (storage / "refs" / "main").read_text().strip()
    except OSError:
        return None
    snapshot = storage / "snapshots" / commit
    return snapshot if commit and (snapshot / "config.json").is_file() else None


def _try_cache(variant: Variant):
    """(model, tokenizer) from the local Hugging Face cache, or None when it is not complete there."""
    snapshot = cached_snapshot(variant.hub_id)
    if snapshot is None:
        return None
    try:
        return _from_pretrained(variant, snapshot, local_only=True)
    except Exception:  # a partial cache (no weights, a missing shard): never a half-loaded model
        return None


def _try_hub(variant: Variant) -> tuple[object, object, str, str | None]:
    """(model, tokenizer, source, failure reason). The cache first, then the network.

    The download goes through ``prefetch.fetch`` (the files the app loads, every request bounded, a broken
    file kept as a partial to resume and never linked into the cache), without retries: a hub that breaks
    mid-file means the bundled stand-in at once. The model is then read from the cache like Auto reads it.
    """
    cached = _try_cache(variant)
    if cached is not None:
        return *cached, "hub cache", None
    ok, why = hub_reachable(variant.hub_id)
    if not ok:
        return None, None, "", why
    from app.models import prefetch

    fetched = prefetch.fetch(variant, retries=0, progress=False, wait_for_lock=False)
    if not fetched.ok:
        return None, None, "", fetched.error
    try:
        model, tok = _from_pretrained(variant, fetched.snapshot, local_only=True)
        return model, tok, "hub", None
    except Exception as e:  # a file transformers needs that the hub does not have, ...
        return None, None, "", f"loading {variant.hub_id} failed ({type(e).__name__})"


def load(key: str, source: str = "bundled", device: str = "cpu", dtype: str = "float32") -> Loaded:
    """Load a catalogue variant on a device, from the hub (falling back to the bundled copy) or bundled.

    Raises ModelUnavailable with a readable message when nothing can be loaded. One load at a time.
    """
    with _LOAD_LOCK:
        return _load(key, source, device, dtype)


def _load(key: str, source: str, device: str, dtype: str) -> Loaded:
    preload.load()
    import torch

    variant = get(key)
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}")
    started = time.perf_counter()
    notices: list[str] = []
    model = tok = None
    where = ""
    if source == "auto":
        cached = _try_cache(variant)
        if cached is not None:
            (model, tok), src, where = cached, "hub cache", variant.hub_id
    if source == "hub":
        model, tok, src, why = _try_hub(variant)
        if model is not None:
            where = variant.hub_id
        else:
            notices.append(f"{variant.hub_id} is unavailable: {why}. Using the bundled stand-in.")
    if model is None:
        if not variant.bundled_available():
            raise ModelUnavailable(
                f"there is no bundled checkpoint at {variant.bundled_path}"
                + (f", and {notices[0]}" if notices else "")
                + " (build it with `python -m app.training`)"
            )
        model, tok = _from_pretrained(variant, variant.bundled_path, local_only=True)
        src, where = "bundled", str(variant.bundled_path)
    device, dtype, why = devices.resolve(device, dtype)
    if why:
        notices.append(why)
    try:
        model = model.to(device=device, dtype=devices.torch_dtype(dtype))
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        model = model.to(device="cpu", dtype=torch.float32)
        notices.append(f"CUDA ran out of memory loading {variant.label}; running on CPU.")
        device, dtype = "cpu", "float32"
    model.eval()
    return Loaded(variant, model, tok, src, where, device, dtype, time.perf_counter() - started,
                  " ".join(notices) or None)


def tie_electra_pair(generator: Loaded, discriminator: Loaded) -> bool:
    """ELECTRA's generator and discriminator share token embeddings; checkpoints store two copies.

    Point the generator's embedding module at the discriminator's (one tensor again) when their
    shapes agree, as they do for the bundled pair and for google/electra-small-*. Returns whether
    the pair now shares its embeddings. Call once, right after loading, before caching.
    """
    g_emb = generator.model.electra.embeddings
    d_emb = discriminator.model.electra.embeddings
    if g_emb.word_embeddings.weight.shape != d_emb.word_embeddings.weight.shape:
        return False
    if generator.model.device != discriminator.model.device or generator.model.dtype != discriminator.model.dtype:
        return False
    generator.model.electra.embeddings = d_emb
    generator.model.generator_lm_head.weight = d_emb.word_embeddings.weight
    return True
