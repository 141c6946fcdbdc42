"""The one cache of every lesson's expensive steps: ``cache(step, *args)`` is ``step(*args)``, kept by its arguments
(st.cache_data, shared by every session). A lesson gets it as the third argument of its ``run``; no page writes
its own cache.

Two kinds of argument are not hashable as they are and are kept by what identifies them: a loaded model by its
identity (key, source, location, device, dtype) and a tensor by its contents.
"""

from __future__ import annotations

import functools

import streamlit as st


def _identity(loaded) -> tuple:
    return loaded.identity


def _tensor_bytes(tensor) -> tuple:
    """A tensor argument (e.g. the state an earlier step reached) by its contents: dtype, shape, bytes (as
    uint8, which every dtype can be viewed as, bfloat16 included)."""
    import torch  # only reached when a lesson, which has imported torch, passes a tensor

    t = tensor.detach().cpu().contiguous()
    return str(t.dtype), tuple(t.shape), t.view(-1).view(torch.uint8).numpy().tobytes()


_HASH_FUNCS = {"app.models.loading.Loaded": _identity, "torch.Tensor": _tensor_bytes}


@functools.cache
def _cached(step):
    return st.cache_data(step, max_entries=128, show_spinner=False, hash_funcs=_HASH_FUNCS)


def cache(step, *args):
    """``step(*args)``, cached by its arguments (a loaded model by its identity: key, source, location,
    device, dtype; a tensor by its contents). The one cache of every lesson's expensive steps; no page
    writes its own. An argument that cannot key it (a tokenizer, a torch module, anything Streamlit cannot hash)
    raises a TypeError naming the step and the argument, here rather than deep in Streamlit's hashing."""
    from streamlit.runtime.caching.cache_errors import UnhashableParamError

    from app.core.lesson import cache_argument_problem

    problem = cache_argument_problem(step, args)
    if problem:
        raise TypeError(problem)
    try:
        return _cached(step)(*args)
    except UnhashableParamError as e:
        raise TypeError(f"cache({getattr(step, '__qualname__', step)}, ...): an argument cannot key a cache "
                        f"(pass a loaded model, a tensor or a hashable value): {e}") from e
