"""Out of memory in a forward is never a traceback (app.models.device.fallback_to_cpu): the step runs again on
the models reloaded on the CPU in float32, and says which moved and why. Simulated on a CPU machine by a step
that raises what torch raises when the card is full; any other error, or one on the CPU, is raised as it was."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from app.models import device as devices


class AcceleratorError(RuntimeError):  # the name torch gives an out-of-memory inside a kernel
    pass


@pytest.mark.parametrize(
    "error",
    [
        torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"),
        AcceleratorError("CUDA error: out of memory\nCompile with TORCH_USE_CUDA_DSA"),
        RuntimeError("CUDA error: out of memory"),
    ],
)
def test_out_of_memory_is_recognised(error):
    assert devices.is_out_of_memory(error)


@pytest.mark.parametrize(
    "error",
    [RuntimeError("expected scalar type Float but found Half"), ValueError("memory"), KeyError("out of memory")],
)
def test_other_errors_are_not(error):
    assert not devices.is_out_of_memory(error)


def on(device: str, loaded):
    return dataclasses.replace(loaded, device=device)


def test_a_full_gpu_moves_the_step_to_the_cpu_once(bundled):
    gpu = {"bert": on("cuda", bundled("bert")), "xlnet": on("cuda", bundled("xlnet"))}
    calls, reloaded = [], []

    def step(models):
        calls.append({k: m.device for k, m in models.items()})
        if any(m.device == "cuda" for m in models.values()):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB")
        return "figure"

    def reload_on_cpu(keys):
        reloaded.append(keys)
        return {k: bundled(k) for k in keys}

    result, moved, why = devices.fallback_to_cpu(step, gpu, reload_on_cpu)
    assert result == "figure" and set(moved) == {"bert", "xlnet"} and why.startswith("CUDA out of memory")
    assert calls == [{"bert": "cuda", "xlnet": "cuda"}, {"bert": "cpu", "xlnet": "cpu"}] and len(reloaded) == 1


def test_nothing_moves_when_the_gpu_has_room_or_the_models_are_on_the_cpu(bundled):
    assert devices.fallback_to_cpu(lambda m: 1, {"bert": on("cuda", bundled("bert"))}, None) == (1, (), None)

    def full(models):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    with pytest.raises(torch.cuda.OutOfMemoryError):  # on the CPU already: nothing to fall back to
        devices.fallback_to_cpu(full, {"bert": bundled("bert")}, lambda keys: pytest.fail("reloaded"))
    with pytest.raises(ValueError):  # not a memory problem: raised as it was
        devices.fallback_to_cpu(
            lambda m: (_ for _ in ()).throw(ValueError("bad")),
            {"bert": on("cuda", bundled("bert"))},
            lambda keys: pytest.fail("reloaded"),
        )
