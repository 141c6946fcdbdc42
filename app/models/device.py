"""Which device and dtype a model runs on: one answer, used by the sidebar, the loader and the badge.

CUDA is offered only when ``torch.cuda.is_available()`` says so. Asking that imports torch, which the
home page must not pay for, so two cheap facts answer "no" first without it: no NVIDIA driver on this
machine, or an installed torch built without CUDA (its ``torch/version.py`` says ``cuda = None``; the
CPU wheel this project pins). A host with a driver but a CPU-only torch therefore gets CPU everywhere
(it used to be offered CUDA, cache models under "cuda" and run them on the CPU). Where both are there, a
child process asks torch, so even a GPU host's home page does not import it.

Running on it: :func:`forward` is the one context every model call runs in (inference mode, autocast for
half precision), and :func:`fallback_to_cpu` turns the GPU running out of memory in a step into the same
step on the CPU.

Threads: a visitor's page computes with torch's default intra-op threads (one per core); the server's
background work (the warm start computing lessons ahead) with :data:`BACKGROUND_THREADS`, so that it leaves a
core to the pages and to a browser on the same machine. torch keeps the setting per thread but a new thread
starts with the last one set anywhere, and Streamlit runs every page in a new thread: so each lesson's run
sets its own (:func:`use_page_threads`), and timings run at the pages' count whoever takes them
(:func:`timing`), so a lesson computed ahead shows the times its page would have measured.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

DTYPES = ("float32", "float16", "bfloat16")
CHOICES = ("auto", "cpu", "cuda")
CUDA_PROBE_S = 90  # seconds a child process may take to import torch and ask for CUDA
#: torch threads of the server's background work. Measured with scripts/benchmark.py's walk through the lessons on
#: 2 cores with chromium beside the server, 3 interleaved runs each way (medians): with the warm start at torch's
#: default (2), opening the 11 lessons after the first from the sidebar took 21.9 s in all; with 1 (and every page
#: at torch's default, :func:`use_page_threads`), 20.0 s; NSP vs SOP 3.3 → 0.9 s, the lesson computed ahead being
#: ready sooner. With the pages at 1 thread as well (before use_page_threads, a page started after the warm start
#: inherited its 1) the walk took 17.7 s, but a page computing alone on 1 thread is slower where it has real work
#: (NSP vs SOP's first run, before its heads read pairs in chunks: 3.6 s on 2 threads, 5.8 s on 1)
BACKGROUND_THREADS = 1


def use_threads(n: int) -> None:
    """torch's intra-op threads for this thread (and, torch being what it is, for threads started after it)."""
    import torch

    if n > 0 and torch.get_num_threads() != n:
        torch.set_num_threads(n)


def use_page_threads(crowded: bool = False) -> None:
    """A visitor's page run: torch's default threads, whatever an earlier thread set (call after the imports);
    ``crowded`` (other visitors' pages are running at the same time): one thread, as the others' runs already keep
    every core busy and more threads than cores only wait on each other (a class opening a fresh server at once)."""
    from app.core import preload

    use_threads(1 if crowded else preload.torch_threads())


@contextlib.contextmanager
def timing():
    """Time a model at the threads a visitor's page computes with, in any thread (the warm start's included);
    this thread's own setting is back after the block."""
    import torch

    from app.core import preload

    before = torch.get_num_threads()
    use_threads(preload.torch_threads())
    try:
        yield
    finally:
        use_threads(before)


def nvidia_driver_present() -> bool:
    return Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidia0").exists()


def torch_built_with_cuda() -> bool:
    """Read from torch's own version file, without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return False
    version = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    try:
        found = re.search(r"^cuda\s*(?::[^=]*)?=\s*(.+)$", version.read_text(), re.M)
    except OSError:
        return False
    return bool(found) and found.group(1).strip() not in ("None", "''", '""')


@functools.cache
def cuda_available() -> bool:
    """``torch.cuda.is_available()``, answered without importing torch into this process unless it already
    has: no driver or a CPU-only torch answers "no" from files; otherwise a child process asks torch (once per
    server, a few seconds on a GPU host only), so the home page of a GPU host stays torch-free too."""
    if not (nvidia_driver_present() and torch_built_with_cuda()):
        return False
    if "torch" in sys.modules:  # a lesson already paid for torch: ask it here
        return bool(sys.modules["torch"].cuda.is_available())
    try:
        asked = subprocess.run(
            [sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
            capture_output=True,
            text=True,
            timeout=CUDA_PROBE_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return asked.returncode == 0 and asked.stdout.strip().endswith("True")


def resolve(device: str, dtype: str) -> tuple[str, str, str | None]:
    """(device, dtype, notice): "auto" is CUDA when available else CPU; an unavailable device falls back
    to CPU, and CPU runs in float32 (half precision is offered on GPU only)."""
    notice = None
    if device == "auto":
        device = "cuda" if cuda_available() else "cpu"
    if device not in CHOICES[1:]:
        notice, device = f"unknown device {device!r}; running on CPU.", "cpu"
    if device == "cuda" and not cuda_available():
        notice, device = "CUDA is not available here; running on CPU.", "cpu"
    if dtype not in DTYPES:
        notice, dtype = f"unknown dtype {dtype!r}; using float32.", "float32"
    if device == "cpu" and dtype != "float32":
        notice, dtype = "half precision is only offered on GPU; running float32 on CPU.", "float32"
    return device, dtype, notice


def check_resolved(device: str, dtype: str) -> None:
    """Raise ValueError unless (device, dtype) is what :func:`resolve` gives: a concrete device ("cpu" or "cuda",
    never "auto") and a dtype it offers there (float32 on the CPU). A loader takes the pair as resolved once by
    its caller; it never resolves it again."""
    if device not in CHOICES[1:] or dtype not in DTYPES or (device == "cpu" and dtype != "float32"):
        raise ValueError(
            f"device {device!r} with dtype {dtype!r} is not resolved: pass what app.models.device.resolve gives"
        )


def torch_dtype(name: str):
    import torch

    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]


@contextlib.contextmanager
def forward(model):
    """The one context every model call runs in, like nanoGPT's ``ctx``: no autograd (``torch.inference_mode``)
    and, for a model in half precision (float16 or bfloat16), autocast to its dtype on its device. Ops that
    cannot take half inputs — XLNet's relative-position einsum meeting a float32 buffer, a float32 mask
    added to float16 scores — then run in the precision autocast picks instead of failing; a float32 model
    runs exactly as it is. ``model``: a module (a whole model, or one block of it) or a loaded model."""
    import torch

    module = getattr(model, "model", model)  # app.models.loading.Loaded, or a torch module
    param = next(module.parameters(), None)
    kind, dtype = (param.device.type, param.dtype) if param is not None else ("cpu", torch.float32)
    half = dtype in (torch.float16, torch.bfloat16)
    with torch.inference_mode(), torch.autocast(kind, dtype=dtype, enabled=half):
        yield


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is the GPU running out of memory: ``torch.cuda.OutOfMemoryError`` (an allocation
    refused), or a CUDA ``AcceleratorError``/``RuntimeError`` whose message says "out of memory" (one inside
    a kernel or a library call)."""
    return type(error).__name__ == "OutOfMemoryError" or (
        isinstance(error, RuntimeError) and "out of memory" in str(error).lower()
    )


def fallback_to_cpu(step, models: dict, reload_on_cpu):
    """``step(models)``; when the GPU runs out of memory in it, the same step again on the models reloaded on
    the CPU in float32 (``reload_on_cpu(keys) -> {key: loaded}``), so a lesson never ends in a traceback
    because a browser or a video call holds the card. Returns (result, the keys moved to the CPU, the error's
    first line); ``()`` and None when nothing moved. Any other error, or one on a CPU, is raised as it was."""
    try:
        return step(models), (), None
    except Exception as error:
        on_gpu = tuple(k for k, m in models.items() if getattr(m, "device", "cpu") != "cpu")
        if not on_gpu or not is_out_of_memory(error):
            raise
        why = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
    _release_gpu_memory()
    return step({**models, **reload_on_cpu(tuple(models))}), on_gpu, why


def _release_gpu_memory() -> None:
    """Hand the memory of the failed step back to the card (what the caching allocator kept)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and cuda_available():
        torch.cuda.empty_cache()
