"""The one cache of every lesson's expensive steps: ``cache(step, *args)`` is ``step(*args)``, kept by its arguments
(st.cache_data, shared by every session). A lesson gets it as the third argument of its ``run``; no page writes
its own cache. Above the steps, a lesson's whole Result is shared across visitors (:func:`shared_result`, kept in
``app.core.shared``): a rerun, or a second visitor, with the same inputs on the same models runs nothing at all.

Two kinds of argument are not hashable as they are and are kept by what identifies them: a loaded model by its
identity (key, source, location, device, dtype) and a tensor by its contents.
"""

from __future__ import annotations

import functools
import sys

import streamlit as st

from app.core import visitors
from app.core.shared import SharedResults, model_token


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
        raise TypeError(
            f"cache({getattr(step, '__qualname__', step)}, ...): an argument cannot key a cache "
            f"(pass a loaded model, a tensor or a hashable value): {e}"
        ) from e


# ----------------------------------------------------------------------------- whole Results, across visitors

_RESULTS = SharedResults()  # one per server process (app.core.shared: bounded, thread-safe, exact keys)


def result_key(fn, models: dict, inputs):
    """(the exact key of ``fn(models, inputs, cache)``'s Result, a check that its models are still the ones loaded),
    or None when it cannot be keyed exactly (an unhashable input, a model that is not a loaded one): then it is
    not shared. The key: ``fn`` by module and name, ``inputs`` itself (the text a visitor typed included), each
    model by catalogue key, identity (key, source, location, device, dtype) and the loaded object itself, held
    weakly (a model a visitor brought keys only Results computed on that very model)."""
    parts, checks = [], []
    for key in sorted(models):
        loaded = models[key]
        identity = getattr(loaded, "identity", None)
        if identity is None:
            return None
        token, alive = model_token(loaded.model)
        parts.append((key, identity, token))
        checks.append(alive)
    # what the Result depends on besides its inputs and models (files on disk): the lesson's shared_key(inputs)
    extra = getattr(sys.modules.get(fn.__module__), "shared_key", None)
    try:
        state = extra(inputs) if callable(extra) else ()
        hash((inputs, state))
    except TypeError:
        return None
    return ((fn.__module__, fn.__qualname__, inputs, tuple(parts), state), lambda: all(alive() for alive in checks))


def shared_result(fn, models: dict, inputs):
    """``fn(models, inputs, cache)``: the lesson's Result, computed once per process for the same inputs on the
    same models and shared by every session (``app.core.shared``); two sessions asking at once share one
    computation. A ``lesson.Stop`` is not kept: it is raised again for each. A rerun that computes a new Result
    first lets other visitors' openings go (``visitors.openings_first``, at most ``visitors.OPENING_FIRST_S``)."""
    keyed = result_key(fn, models, inputs)
    if keyed is None:
        return fn(models, inputs, cache)
    key, alive = keyed

    def compute():
        visitors.openings_first()  # a rerun computing something new lets other visitors' openings go first
        return fn(models, inputs, cache)

    return _RESULTS.get(key, compute, alive)


def keep_result(fn, models: dict, inputs, result) -> None:
    """Keep a Result computed elsewhere (the warm start's, through its own cache) as :func:`shared_result`
    would, unless one is kept already."""
    keyed = result_key(fn, models, inputs)
    if keyed is not None:
        _RESULTS.put(keyed[0], result, keyed[1])


def shared_counts() -> dict[str, int]:
    """How often a Result was computed, handed out kept, waited for, or put by the warm start (tests, benchmarks)."""
    return dict(_RESULTS.counts)
