"""Load in a box: whatever a brought repository's files make the process that reads them do — build a model of a
billion parameters from a 1 KB config, allocate gigabytes for a tokenizer, panic in native code, parse for minutes —
happens in a child process with a memory limit and a deadline, never in the server that answers every visitor.

Two jobs run there (:func:`measure_config`, :func:`measure_load`), each in a fresh child forked from a
``forkserver`` that imported torch and transformers once (so a child starts in milliseconds, single-threaded,
with nothing of the server's state). The child:

- caps its own address space (``RLIMIT_AS``) at what it had plus the job's memory allowance, so an allocation past
  it fails in the child (a Python ``MemoryError``, or a native abort that ends the child) instead of swapping the
  host;
- resets its peak-memory counter, runs the job, and reports the job's answer with the peak memory the job added
  (``VmHWM`` - ``VmRSS`` at start: what loading these files costs, tokenizer included);
- turns every ``BaseException`` (a ``pyo3_runtime.PanicException`` from the tokenizers library is one) into a line.

The parent waits without holding the GIL and kills the child at the deadline. The answer is a :class:`Boxed`:
``ok`` with the job's ``value``, or ``error`` as a short sentence (out of memory, too slow, died, what was raised).
Nothing here imports torch into the server.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first, as in every app module; nothing heavy is imported here)

import multiprocessing
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

#: what the forkserver imports once, so that each child starts with them (the modeling modules of every family a
#: brought model may be: building one on the meta device then takes a fraction of a second)
PRELOAD = (
    "torch",
    "transformers",
    "tokenizers",
    "app.models.box",
    "transformers.models.bert.modeling_bert",
    "transformers.models.roberta.modeling_roberta",
    "transformers.models.xlm_roberta.modeling_xlm_roberta",
    "transformers.models.albert.modeling_albert",
    "transformers.models.distilbert.modeling_distilbert",
    "transformers.models.electra.modeling_electra",
    "transformers.models.deberta.modeling_deberta",
    "transformers.models.deberta_v2.modeling_deberta_v2",
    "transformers.models.modernbert.modeling_modernbert",
    "transformers.models.xlnet.modeling_xlnet",
    "transformers.models.camembert.modeling_camembert",
)
#: address space a child may add beyond its allowance (glibc arenas, thread stacks, the job's own bookkeeping)
SLACK = 768 << 20
CONFIG_DEADLINE_S = 60.0  # building a model on the meta device from a config (a base model: ~0.3 s)
LOAD_DEADLINE_S = 120.0  # reading the tokenizer and the weights of a model that fits the limit
_START_LOCK = threading.Lock()
_CONTEXT = None


@dataclass(frozen=True)
class Boxed:
    """What a job in the box came to: ``value`` (its answer) when ``error`` is None; ``peak`` the bytes of memory
    the job added at its highest; ``seconds`` its time in the child."""

    value: object = None
    error: str | None = None
    peak: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def _context():
    """The forkserver context, its server started once with :data:`PRELOAD` imported."""
    global _CONTEXT
    with _START_LOCK:
        if _CONTEXT is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(list(PRELOAD))
            _CONTEXT = ctx
    return _CONTEXT


def run(job: str, args: tuple, *, memory: int, seconds: float) -> Boxed:
    """Run ``JOBS[job](*args)`` in a fresh child allowed ``memory`` more bytes than it starts with and ``seconds``;
    never raises for anything the job does."""
    started = time.monotonic()
    try:
        ctx = _context()
        here, there = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_child, args=(there, job, args, int(memory)), daemon=True)
        child.start()
    except Exception as e:  # noqa: BLE001 — no process could be made (no file descriptors, no memory): refuse
        return Boxed(error=f"no worker process could be started ({type(e).__name__})")
    there.close()
    try:
        if not here.poll(seconds):
            return Boxed(error=f"it did not finish within {seconds:.0f} s", seconds=time.monotonic() - started)
        try:
            kind, value, peak, took = here.recv()
        except (EOFError, OSError):
            child.join(1.0)
            return Boxed(error=_death(child.exitcode, memory), seconds=time.monotonic() - started)
        if kind == "ok" and peak > memory:  # finished, but held more than it was allowed (within the slack)
            return Boxed(None, f"it needs {_human(peak)} of memory, more than the allowed {_human(memory)}", peak, took)
        return Boxed(value, None, peak, took) if kind == "ok" else Boxed(None, value, peak, took)
    finally:
        here.close()
        if child.is_alive():
            child.kill()
        child.join(5.0)
        child.close() if child.exitcode is not None else None


def _death(code: int | None, memory: int) -> str:
    if code is not None and code < 0:
        import signal

        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        why = (
            " (most likely its memory, past the allowed " + _human(memory) + ")"
            if name in ("SIGABRT", "SIGKILL", "SIGSEGV")
            else ""
        )
        return f"the process reading it died ({name}){why}"
    return f"the process reading it ended without an answer (exit code {code})"


def _human(n: int) -> str:
    from app.models.download import _human as human

    return human(n)


# -- in the child --------------------------------------------------------------------------------------------------


def _status(field: str) -> int:
    """A ``/proc/self/status`` field in bytes (VmRSS, VmHWM, VmSize); 0 where there is none."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _child(conn, job: str, args: tuple, memory: int) -> None:
    import resource

    os.environ["HF_HUB_OFFLINE"] = "1"  # a job reads only what it was given
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    try:
        import torch

        torch.set_num_threads(1)
    except Exception:  # noqa: BLE001 — the job says what is missing
        pass
    try:
        Path("/proc/self/clear_refs").write_text("5")  # the peak counter (VmHWM) starts here
    except OSError:
        pass
    base = _status("VmRSS")
    size = _status("VmSize")
    if size:
        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            cap = size + memory + SLACK
            resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
        except (ValueError, OSError):
            pass
    started = time.perf_counter()
    try:
        value = JOBS[job](*args)
        answer = ("ok", value)
    except MemoryError:
        answer = ("error", f"it needs more memory than the allowed {_human(memory)}")
    except BaseException as e:  # noqa: BLE001 — a native panic (pyo3's PanicException) is a BaseException too
        answer = ("error", f"{type(e).__name__}: {_first_line(e)}")
    peak = max(_status("VmHWM") - base, 0)
    try:
        conn.send((*answer, peak, time.perf_counter() - started))
    finally:
        conn.close()


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return (text[0] if text else "")[:200]


# -- the jobs ------------------------------------------------------------------------------------------------------


def _build_meta(model_class: str, config: dict):
    import torch
    import transformers

    cfg = transformers.AutoConfig.for_model(**{k: v for k, v in config.items() if k != "auto_map"})
    cls = getattr(transformers, model_class)
    with torch.device("meta"):
        return cls.from_config(cfg) if model_class.startswith("Auto") else cls(cfg)


def _count_config(model_class: str, config: dict) -> dict:
    """The model a config describes, built on the meta device (no weights): its exact parameter count, the bytes
    of its buffers, and the names of its head's own parameters (not the encoder's, not the embeddings' ties)."""
    model = _build_meta(model_class, config)
    seen, parameters = set(), 0
    for p in model.parameters():  # tied weights once
        if id(p) not in seen:
            seen.add(id(p))
            parameters += p.numel()
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    base = model.base_model_prefix
    tied = set(getattr(model, "_tied_weights_keys", None) or ())
    head = tuple(k for k in model.state_dict() if not k.startswith(base + ".") and k not in tied)
    return {"parameters": int(parameters), "buffers": int(buffers), "head": head}


def _load_folder(folder: str, model_class: str, load_kwargs: dict) -> dict:
    """Read a model as the server would (tokenizer, then weights in float32, eager attention, safetensors only,
    never remote code) from a local folder, and say what it held."""
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    kwargs = dict(local_files_only=True, trust_remote_code=False)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, **kwargs)
    model = getattr(transformers, model_class).from_pretrained(
        folder, attn_implementation="eager", dtype="float32", **load_kwargs, **kwargs
    )
    return {"parameters": int(sum(p.numel() for p in model.parameters())), "vocabulary": int(len(tokenizer))}


JOBS = {"count": _count_config, "load": _load_folder}


# -- what the server calls -----------------------------------------------------------------------------------------


def measure_config(model_class: str, config: dict, memory: int, seconds: float = CONFIG_DEADLINE_S) -> Boxed:
    """The exact parameter count (``value["parameters"]``), buffer bytes and head names of the model ``config``
    describes, built on the meta device in the box: a config whose build allocates past ``memory`` or outlasts
    ``seconds`` comes back as an error, the server untouched."""
    return run("count", (model_class, config), memory=memory, seconds=seconds)


def measure_load(
    folder: str | Path, model_class: str, load_kwargs: dict, memory: int, seconds: float = LOAD_DEADLINE_S
) -> Boxed:
    """Load a downloaded model (tokenizer and weights) in the box: ``peak`` is what it costs to hold, measured; an
    error when it needs more than ``memory``, takes more than ``seconds``, or cannot be read at all (a native panic
    included)."""
    return run("load", (str(folder), model_class, dict(load_kwargs)), memory=memory, seconds=seconds)
