"""On a host with a usable CUDA GPU (marker ``gpu``; skipped cleanly without one, as on CI): every lesson in
float32, float16 and bfloat16 on the card with no NaN or inf that float32 does not have; the masked LMs' top-5
in half precision agree with float32 on the default sentence; and the out-of-memory fallback with the card
really full. Run them with ``python -m pytest -m gpu`` on a GPU host."""

from __future__ import annotations

import pytest

from app.lecture import deck, handout
from app.lessons import LESSONS
from app.models import catalogue, device as devices, loading
from tests.test_forward_context import nonfinite, run

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not devices.cuda_available(), reason="no usable CUDA GPU on this machine"),
]
MASKED_LMS = [k for k, v in catalogue.CATALOGUE.items() if v.is_masked_lm]
SENTENCE = "The little girl found a red {mask} in the park."


@pytest.fixture(scope="module")
def on_cuda():
    """on_cuda(keys, dtype) -> the bundled models on the GPU in that precision, loaded once per module."""
    cache: dict = {}

    def get(keys, dtype: str) -> dict:
        if (tuple(keys), dtype) not in cache:
            cache[tuple(keys), dtype] = loading.load_set(tuple(keys), "bundled", "cuda", dtype)
        return cache[tuple(keys), dtype]

    return get


@pytest.mark.parametrize("dtype", devices.DTYPES)
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.slug)
def test_every_lesson_runs_on_the_gpu(lesson, dtype, on_cuda):
    keys = handout.models_for(deck.View(lesson.slug))
    models = on_cuda(keys, dtype)
    assert all(m.device == "cuda" and m.dtype == dtype for m in models.values())
    assert nonfinite(run(lesson, models)) <= nonfinite(run(lesson, on_cuda(keys, "float32")))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("key", MASKED_LMS)
def test_half_precision_guesses_agree_with_float32(key, dtype, on_cuda):
    from app import mlm

    def top5(loaded):
        tok = loaded.tokenizer
        enc = tok(SENTENCE.format(mask=tok.mask_token), return_tensors="pt").to("cuda")
        at = enc["input_ids"][0].tolist().index(tok.mask_token_id)
        return mlm.top_k(mlm.probabilities_at(loaded.model, dict(enc), [at])[0], tok, 5).ids  # (5,)

    full, half = top5(on_cuda([key], "float32")[key]), top5(on_cuda([key], dtype)[key])
    assert half[0] == full[0] and len(set(half) & set(full)) >= 3, (key, dtype, full, half)


def test_a_full_card_moves_the_lesson_to_the_cpu():
    import torch

    from app.lessons import xlnet

    models = loading.load_set(xlnet.MODELS, "bundled", "cuda", "float32")
    free, _ = torch.cuda.mem_get_info()
    hog = torch.empty(max(0, free - 8 * 2**20), dtype=torch.uint8, device="cuda")  # all but 8 MiB
    try:
        result, moved, why = devices.fallback_to_cpu(
            lambda ms: xlnet.run(ms, xlnet.Inputs(), lambda step, *a: step(*a)),
            models,
            lambda keys: loading.load_set(keys, "bundled", "cpu", "float32"),
        )
    finally:
        del hog
        torch.cuda.empty_cache()
    assert moved and "out of memory" in why.lower() and result is not None
