"""Which device and dtype a model runs on: one answer, used by the sidebar, the loader and the badge.

CUDA is offered only when ``torch.cuda.is_available()`` says so. Asking that imports torch, which the
home page must not pay for, so two cheap facts answer "no" first without it: no NVIDIA driver on this
machine, or an installed torch built without CUDA (its ``torch/version.py`` says ``cuda = None``; the
CPU wheel this project pins). A host with a driver but a CPU-only torch therefore gets CPU everywhere
(it used to be offered CUDA, cache models under "cuda" and run them on the CPU).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import re
from pathlib import Path

DTYPES = ("float32", "float16", "bfloat16")
CHOICES = ("auto", "cpu", "cuda")


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
    """``torch.cuda.is_available()``, answered without importing torch whenever it must be False."""
    if not (nvidia_driver_present() and torch_built_with_cuda()):
        return False
    import torch

    return bool(torch.cuda.is_available())


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
