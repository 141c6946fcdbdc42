"""What every lesson's ``run`` speaks: notes for the reader, the signal that there is nothing to show, and
how it asks for its expensive steps to be cached. Pure: no streamlit.

Every lesson library (``app/lessons/<slug>.py``, one per page ``pages/<slug>.py``, its figures in
``app/figures/<slug>.py``; rules it shares with training or experiments live in a concept module,
``app/<concept>.py``) exposes

    ORDER, TITLE, ICON, LINE              # plain literals: its place, title, icon and one line (app.lessons)
    SPEC                                  # its URL parameters (app.core.state.Spec)
    MODELS                                # the catalogue keys it runs on
    Inputs.from_values(values) -> Inputs  # frozen dataclass made from SPEC (@inputs_from(SPEC)), built from the
                                          # URL/widget values
    Result                                # frozen dataclass: everything its figures draw
    run(models, inputs, cache=direct) -> Result
    TAKEAWAY                              # its one-line takeaway

``models`` maps catalogue keys to loaded models (``app.models.loading.Loaded``). ``run`` calls its
expensive steps through ``cache(step, *args)`` (the page passes a cache keyed by the arguments and each
model's identity; tests pass nothing and get plain calls), so moving a cheap slider re-runs only the
cheap part. ``run`` raises :class:`Stop` when the inputs leave nothing to show, and returns notes
(markdown, user values already escaped with ``app.core.text.md``) with its result.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

LEVELS = ("info", "warning", "error")


@dataclass(frozen=True)
class Note:
    text: str  # markdown; anything a user typed went through app.core.text.md
    level: str = "info"  # info | warning | error

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}")


class Stop(Exception):
    """Raised by ``run`` when the inputs leave nothing to show: the page shows ``note`` and stops."""

    def __init__(self, text: str, level: str = "warning"):
        super().__init__(text)
        self.note = Note(text, level)


Cache = Callable[..., object]


#: a model's parts cannot key a cache (their state is not their identity): (the class's top package, its name)
MODEL_PARTS = {("transformers", "PreTrainedTokenizerBase"), ("tokenizers", "Tokenizer"), ("torch", "Module")}


def cache_argument_problem(step: Callable, args: tuple) -> str | None:
    """Why ``cache(step, *args)`` cannot keep its result, naming the step and the argument, or None. The rule:
    every argument is a loaded model (``app.models.loading.Loaded``, kept by its identity), a tensor (by its
    contents) or a value Streamlit can hash — never a model's parts: its tokenizer or its torch module."""
    try:
        names = list(inspect.signature(step).parameters)
    except (TypeError, ValueError):
        names = []
    for i, arg in enumerate(args):
        part = next((c for c in type(arg).__mro__ if (c.__module__.split(".")[0], c.__name__) in MODEL_PARTS), None)
        if part is not None:
            name = f" `{names[i]}`" if i < len(names) else ""
            return (
                f"cache({getattr(step, '__qualname__', step)}, ...): argument {i + 1}{name} is a "
                f"{type(arg).__name__} (a {part.__name__}), which cannot key a cache. Pass the loaded model "
                "(its identity keys the cache) and read its .tokenizer or .model inside the step."
            )
    return None


def direct(step: Callable, *args):
    """The cache for tests and scripts: call the step — after the check the page's cache makes
    (:func:`cache_argument_problem`), so a test of ``run`` fails where the page would, and says why."""
    problem = cache_argument_problem(step, args)
    if problem:
        raise TypeError(problem)
    return step(*args)


def from_values(cls, values: dict):
    """An ``Inputs`` dataclass from a page's values, by field name. In a lesson:
    ``from_values = classmethod(lesson.from_values)``."""
    return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})


#: The Python type of a parameter's value, by its kind (a choice's: its default's type).
KIND_TYPES = {"str": str, "int": int, "float": float, "bool": bool}


def inputs_from(spec, leave_out: tuple[str, ...] = ("figure",)):
    """A class decorator that makes a lesson's ``Inputs`` from its ``SPEC``: one declaration of each parameter.

        @inputs_from(SPEC)
        class Inputs:
            new_text: bool = False  # what the page adds that is no URL parameter (after the SPEC's fields)

    gives a frozen (hashable: the shared Results cache keys on it) dataclass with one field per parameter of
    ``spec``, in its order, typed by its kind (``KIND_TYPES``; a choice by its default's type) and defaulting to its
    default, then the fields the class declares itself (each with a default). ``leave_out``: parameters that choose
    what is shown, not what is computed (the stage figure, ``app.core.state.figure_param``). The class gets
    ``from_values = classmethod(from_values)`` unless it defines its own."""

    def make(cls):
        own = dict(cls.__dict__.get("__annotations__", {}))
        annotations = {}
        for p in spec:
            if p.name in leave_out:
                continue
            if p.name in own:
                raise TypeError(f"{cls.__qualname__}.{p.name} is stated by the SPEC already: declare it once")
            annotations[p.name] = KIND_TYPES.get(p.kind) or type(p.default)
            setattr(cls, p.name, p.default)
        for name, kind in own.items():
            if name not in cls.__dict__:
                raise TypeError(f"{cls.__qualname__}.{name} needs a default (it follows the SPEC's fields)")
            annotations[name] = kind
        cls.__annotations__ = annotations
        if "from_values" not in cls.__dict__:
            cls.from_values = classmethod(from_values)
        return dataclass(frozen=True)(cls)

    return make


@runtime_checkable
class LessonModule(Protocol):
    """The lesson contract as a type: what a lesson library (``app/lessons/<slug>.py``) states. A module is checked
    against it by :func:`app.lessons.contract_problems` (tests/test_layering.py does, for every lesson), which says
    what is missing or of the wrong shape in words that name the cause."""

    ORDER: int  # its place in teaching order
    TITLE: str
    ICON: str
    LINE: str  # what a student sees there, in one line
    SPEC: Any  # app.core.state.Spec: each URL parameter once
    MODELS: tuple[str, ...]  # the catalogue keys it always runs on (the page loads them all); a lesson whose model is
    # the visitor's choice states none and has a ``variant`` parameter instead (the masking lab, attention)
    Inputs: type  # frozen dataclass made from SPEC (@inputs_from(SPEC)); Inputs.from_values(values)
    Result: type  # frozen dataclass: everything its figures draw
    TAKEAWAY: str

    def run(self, models: Mapping[str, Any], inputs: Any, cache: Cache = direct) -> Any: ...
