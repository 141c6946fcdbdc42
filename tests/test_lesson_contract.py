"""The lesson contract's unwritten rule on caching, written and checked: every argument of ``cache(step, *args)`` is a
loaded model (kept by its identity), a tensor (by its contents) or a hashable value — never a model's parts. A raw
tokenizer used to reach Streamlit's hashing and fail there (UnhashableParamError, in eight page tests, far from the
lesson that passed it); now the page's cache and the tests' ``direct`` both stop at the call, naming the step and
the argument."""

from __future__ import annotations

import pytest
import torch

from app.core.lesson import cache_argument_problem, direct


def predictions_of(tok, text: str) -> int:  # a step written the wrong way: it takes the tokenizer itself
    return len(tok(text)["input_ids"])


def logits_of(loaded, text: str) -> int:  # the right way: the loaded model, whose identity keys the cache
    return len(loaded.tokenizer(text)["input_ids"])


def test_a_tokenizer_passed_to_the_cache_is_named_with_its_step_and_argument(bundled):
    tok = bundled("bert").tokenizer
    with pytest.raises(TypeError) as raised:
        direct(predictions_of, tok, "The little girl")
    said = str(raised.value)
    assert "predictions_of" in said and "argument 1 `tok`" in said and type(tok).__name__ in said, said
    assert "Pass the loaded model" in said


def test_a_torch_module_is_refused_and_a_loaded_model_a_tensor_and_plain_values_are_kept(bundled):
    loaded = bundled("bert")
    problem = cache_argument_problem(lambda model, x: None, (loaded.model, 1))
    assert problem and "argument 1 `model`" in problem and "Module" in problem
    for args in ((loaded, "text"), (torch.zeros(2), 3), (("a", "b"), {"k": 1}, None)):
        assert cache_argument_problem(lambda *a: None, args) is None, args
    assert direct(logits_of, loaded, "The little girl") > 0


def test_the_pages_cache_says_the_same_before_streamlit_hashes_anything(bundled):
    from app.ui.cache import cache

    with pytest.raises(TypeError, match="argument 1 `tok`"):
        cache(predictions_of, bundled("bert").tokenizer, "The little girl")
