"""Which device and dtype a model runs on. CUDA when present, else CPU; half precision only on GPU."""

from __future__ import annotations

from pathlib import Path

DTYPES = ("float32", "float16", "bfloat16")


def cuda_present() -> bool:
    """A cheap check that does not import torch (the home page must stay light)."""
    return Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidia0").exists()


def available_devices() -> list[str]:
    import torch

    return ["cuda", "cpu"] if torch.cuda.is_available() else ["cpu"]


def default_device() -> str:
    return available_devices()[0]


def resolve(device: str, dtype: str) -> tuple[str, str, str | None]:
    """(device, dtype, notice): an unavailable device falls back to CPU, and CPU runs in float32."""
    notice = None
    if device not in available_devices():
        notice = f"{device} is not available here; running on CPU."
        device = "cpu"
    if dtype not in DTYPES:
        notice, dtype = f"unknown dtype {dtype!r}; using float32.", "float32"
    if device == "cpu" and dtype != "float32":
        notice, dtype = "half precision is only offered on GPU; running float32 on CPU.", "float32"
    return device, dtype, notice


def torch_dtype(name: str):
    import torch

    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]
