"""One way to load any catalogue variant: ``from_pretrained`` on a hub id, a local cache, or the bundled
folder — the same code path for all three. Three sources:

- ``auto`` (the default): the real checkpoint when it is complete in the local Hugging Face cache (a
  Space's ``preload_from_hub``, or ``python -m app.models.prefetch`` before class), else the bundled
  stand-in. It never touches the network, so it costs nothing offline.
- ``hub``: the cache, then the hub itself if it answers within ``HUB_PROBE_TIMEOUT_S`` and the download
  finishes within its deadline (``download.download_deadline``), and otherwise the bundled checkpoint with
  a notice saying why (such a result says when to ask the hub again: ``Loaded.retry_hub``).
- ``bundled``: always the stand-in in ``assets/models``.

Loads from disk take one lock (one at a time); the hub's download runs outside it, so a slow hub keeps
only its own visitor waiting. It never hangs on an unreachable network, never reads a cache folder that
leads outside the cache, and never enables ``trust_remote_code``. Models come back in float32 (or the
dtype asked for on GPU), in eval mode, with eager attention (so attentions can be read) and must not be
mutated by callers.
"""

from __future__ import annotations

from app.core import preload, startup

import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.models import device as devices
from app.models.catalogue import Variant, get
from app.models.download import cached_snapshot, fetch  # also loading.cached_snapshot, as lessons read it

HUB_PROBE_TIMEOUT_S = 1.5
#: seconds a fallback after a failed hub is kept before the hub is asked again (callers that cache results
#: read ``Loaded.retry_hub``)
HUB_RETRY_S = 60.0
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
    source: str  # "bundled" | "hub" | "hub cache" | "folder" (your own checkpoint: app.models.own)
    location: str  # the hub id or the folder it was read from
    device: str
    dtype: str
    load_seconds: float
    notice: str | None = None  # why the result differs from what was asked for (markdown)
    retry_hub: float | None = None  # time.monotonic() after which the hub, which failed, is worth asking again

    @property
    def stale(self) -> bool:
        """A fallback after a failed hub, old enough that the hub should be asked again."""
        return self.retry_hub is not None and time.monotonic() >= self.retry_hub

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
        if self.source == "folder":  # your own checkpoint, from a folder on this computer (app.models.own)
            return f"{self.location} (a local folder)"
        return (
            f"{self.variant.hub_id} (from the local cache)"
            if self.source == "hub cache"
            else (self.variant.hub_id if self.source == "hub" else f"bundled stand-in for {self.variant.hub_id}")
        )

    def badge_line(self) -> tuple[str, str, str, float]:
        """(which model, device, dtype, load seconds) for the sidebar badge."""
        return ("bundled" if self.is_bundled else self.variant.hub_id), self.device, self.dtype, self.load_seconds


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def hub_reachable(hub_id: str, timeout: float = HUB_PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Ask the hub for the model's config, answered within ``timeout`` seconds in all (a hub that trickles its
    headers is given up on too). (reachable, reason if not)."""
    if hub_offline():
        return False, "HF_HUB_OFFLINE is set"
    url = f"{hub_endpoint()}/{hub_id}/resolve/main/config.json"
    answer: list[tuple[bool, str]] = []

    def ask() -> None:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout) as r:
                answer.append((200 <= r.status < 400, f"the hub answered {r.status}"))
        except urllib.error.HTTPError as e:
            answer.append((False, f"the hub answered {e.code}"))
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            reason = getattr(e, "reason", e)
            answer.append((False, f"the hub could not be reached ({type(reason).__name__})"))

    asking = threading.Thread(target=ask, name="bve-hub-probe", daemon=True)
    asking.start()
    asking.join(timeout + 0.25)  # its own socket timeout usually ends it first, with the precise reason
    return answer[0] if answer else (False, f"the hub did not answer within {timeout:g} s")


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
    model = _model_class(variant).from_pretrained(
        location, attn_implementation="eager", dtype="float32", **variant.load_kwargs, **kwargs
    )
    if variant.family == "xlnet":
        tokenizer.padding_side = "left"
    return model, tokenizer


def _try_cache(variant: Variant):
    """(model, tokenizer) from the local Hugging Face cache, or None when it is not complete there."""
    snapshot = cached_snapshot(variant.hub_id)
    if snapshot is None:
        return None
    try:
        return _from_pretrained(variant, snapshot, local_only=True)
    except Exception:  # a partial cache (no weights, a missing shard): never a half-loaded model
        return None


def _download(variant: Variant, progress: Callable[[int, int | None], None] | None) -> tuple[Path | None, str]:
    """(the downloaded snapshot, or None and why not, as markdown). Network only: call it without the lock.

    The download goes through ``download.fetch`` (the files the app loads, every request bounded, the whole
    within its deadline, a broken file kept as a partial to resume and never linked into the cache), without
    retries: a hub that breaks mid-file means the bundled stand-in at once. Whatever text the hub chose (a
    reason phrase) is escaped, since the notice is markdown.
    """
    from app.core.text import md

    ok, why = hub_reachable(variant.hub_id)
    if not ok:
        return None, why
    fetched = fetch(variant, retries=0, progress=False, wait_for_lock=False, on_progress=progress, quote=md)
    if not fetched.ok:
        return None, fetched.error
    return fetched.snapshot, ""


def load(
    key: str,
    source: str = "bundled",
    device: str = "cpu",
    dtype: str = "float32",
    progress: Callable[[int, int | None], None] | None = None,
) -> Loaded:
    """Load a catalogue variant on a device, from the hub (falling back to the bundled copy) or bundled.
    ``device`` and ``dtype`` are a resolved pair ("cpu" or "cuda"; float32 on the CPU): the caller resolves the
    visitor's choice once (``app.models.device.resolve``; a page: ``app.ui.model_settings.settings``, once per run).

    Loads from disk go one at a time; the hub source's download (the cache first, then the network) runs
    outside that lock, so others load meanwhile, and calls ``progress(done, total)`` (bytes) as it goes.
    Raises ModelUnavailable with a readable message when nothing can be loaded.
    """
    variant = get(key)
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}")
    devices.check_resolved(device, dtype)
    started = time.perf_counter()
    with _LOAD_LOCK:
        preload.load()
        cached = _try_cache(variant) if source in ("auto", "hub") else None
        if cached is not None or source != "hub":
            with startup.span("load", key=key):
                return _finish(variant, cached, "hub cache", [], device, dtype, started)
    snapshot, why = _download(variant, progress)
    with _LOAD_LOCK:
        got = None
        if snapshot is not None:
            try:
                got = _from_pretrained(variant, snapshot, local_only=True)
            except Exception as e:  # a file transformers needs that the hub does not have, ...
                why = f"loading {variant.hub_id} failed ({type(e).__name__})"
        notices = [] if got is not None else [f"{variant.hub_id} is unavailable: {why}. Using the bundled stand-in."]
        loaded = _finish(variant, got, "hub", notices, device, dtype, started)
    if got is None:
        loaded.retry_hub = time.monotonic() + HUB_RETRY_S
    return loaded


def _finish(
    variant: Variant, got: tuple | None, src: str, notices: list[str], device: str, dtype: str, started: float
) -> Loaded:
    """The Loaded result from ``got`` (model, tokenizer) read from ``src``, or the bundled stand-in when it is
    None; on the device asked for, or the CPU when that runs out of memory. Call with the lock held."""
    import torch

    model, tok = got if got is not None else (None, None)
    where = variant.hub_id
    if model is None:
        if not variant.bundled_available():
            raise ModelUnavailable(
                f"there is no bundled checkpoint at {variant.bundled_path}"
                + (f", and {notices[0]}" if notices else "")
                + " (build it with `python -m app.training`)"
            )
        model, tok = _from_pretrained(variant, variant.bundled_path, local_only=True)
        src, where = "bundled", str(variant.bundled_path)
    try:
        model = model.to(device=device, dtype=devices.torch_dtype(dtype))
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        model = model.to(device="cpu", dtype=torch.float32)
        notices.append(f"CUDA ran out of memory loading {variant.label}; running on CPU.")
        device, dtype = "cpu", "float32"
    model.eval()
    return Loaded(
        variant, model, tok, src, where, device, dtype, time.perf_counter() - started, " ".join(notices) or None
    )


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


#: Variants whose checkpoints share weights once loaded: ELECTRA's generator and discriminator share their token
#: embeddings (the checkpoints store two copies; :func:`tie_electra_pair` makes them one tensor again).
PAIRS = (("electra-generator", "electra-discriminator"),)


def paired(key: str) -> tuple[str, ...]:
    """The keys that load together with ``key``, itself included: its pair, else ``(key,)``. A cache keeps them as
    one entry, so that a shared tensor is never held twice and never untied."""
    return next((pair for pair in PAIRS if key in pair), (key,))


def tie_pairs(loaded: dict[str, Loaded], among=None) -> list[tuple[str, str]]:
    """Tie every pair of ``PAIRS`` whose two models are both in ``loaded`` ({catalogue key: Loaded}) and, when
    ``among`` is given, both among those keys (a brought pair: ``app.models.own.load_set`` ties its admitted models
    only with each other, never with a catalogue one). The one place a pair is tied, for the catalogue's pairs and
    brought ones alike (:func:`tie_electra_pair`). Returns the pairs that now share their embeddings."""
    tied = []
    for pair in PAIRS:
        if all(key in loaded and (among is None or key in among) for key in pair):
            if tie_electra_pair(*(loaded[key] for key in pair)):
                tied.append(pair)
    return tied


def load_set(
    keys,
    source: str = "bundled",
    device: str = "cpu",
    dtype: str = "float32",
    *,
    partial: bool = False,
    progress: Callable[[int, int | None], None] | None = None,
) -> dict[str, Loaded]:
    """{key: Loaded} for the catalogue variants ``keys``, in that order: each as :func:`load` gives it (the
    fallbacks and their notices), and every pair among them (``PAIRS``) tied again, so the generator and the
    discriminator share one embedding. The one way to load more than one variant.

    Raises what :func:`load` raises for a variant that cannot be loaded; ``partial=True`` leaves it out instead
    (its partner then loads alone, untied). ``progress`` goes to every :func:`load` (a hub download's bytes).
    """
    loaded = {}
    for key in dict.fromkeys(keys):
        try:
            loaded[key] = load(key, source=source, device=device, dtype=dtype, progress=progress)
        except Exception:
            if not partial:
                raise
    tie_pairs(loaded)
    return loaded
