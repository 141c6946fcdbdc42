"""Admission never raises (issue 47): a property-based sweep over config values — inf, nan, huge, negative, wrong
types, lists, nesting — for every model_type a lesson reads, and over tokenizer file sizes. Every answer is a
Refusal with a sentence, or an admission whose count, made on the meta device in the box, stays within the limit.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.models import admission
from app.models.admission import Admitted, Refusal

LIMIT = 500_000_000
ENV = {"BVE_MODEL_LIMIT": "500MB"}

#: a small config of each model_type, every size field present (what a sweep then spoils one or two of)
BASE = {
    "bert": dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        type_vocab_size=2,
    ),
    "roberta": dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=66,
        type_vocab_size=1,
        pad_token_id=1,
    ),
    "xlm-roberta": dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=66,
        type_vocab_size=1,
        pad_token_id=1,
    ),
    "camembert": dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=66,
        type_vocab_size=1,
        pad_token_id=1,
    ),
    "distilbert": dict(dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64),
    "albert": dict(
        hidden_size=32,
        embedding_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_hidden_groups=1,
        inner_group_num=1,
    ),
    "electra": dict(
        hidden_size=32,
        embedding_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    ),
    "deberta": dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        relative_attention=True,
        pos_att_type=["c2p", "p2c"],
        max_relative_positions=-1,
        type_vocab_size=0,
    ),
    "deberta-v2": dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        relative_attention=True,
        pos_att_type=["p2c", "c2p"],
        position_buckets=16,
        share_att_key=True,
        norm_rel_ebd="layer_norm",
        type_vocab_size=0,
    ),
    "modernbert": dict(
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        local_attention=16,
        global_attn_every_n_layers=3,
    ),
    "xlnet": dict(d_model=32, n_layer=2, n_head=2, d_inner=64, d_head=16),
}
ROLE = {"xlnet": "xlnet"}  # every other model_type: the masked LM
#: fields that size a model beyond the common ones (what the report's crafted repositories used), for every type
EXTRA = (
    "conv_kernel_size",
    "attention_head_size",
    "max_relative_positions",
    "position_buckets",
    "inner_group_num",
    "num_hidden_groups",
    "embedding_size",
    "mem_len",
    "clamp_len",
    "local_attention",
    "vocab_size",
)

hostile = st.one_of(
    st.sampled_from(
        [
            math.inf,
            -math.inf,
            math.nan,
            0,
            -1,
            1 << 24,
            10**7,
            400_001,
            2**63,
            10**30,
            True,
            None,
            "",
            "12",
            [1],
            [],
            {},
            {"a": 1},
            1e6,
            0.5,
        ]
    ),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=3),
    st.recursive(
        st.integers(),
        lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2),
        max_leaves=6,
    ),
)


def _config(model_type: str, spoiled: dict) -> dict:
    return {"model_type": model_type, "vocab_size": 128, **BASE[model_type], **spoiled}


def _files(tokenizer: int = 4_000) -> dict:
    return {"config.json": 900, "tokenizer.json": tokenizer, "model.safetensors": 400_000_000}


def _answer(config, files=None):
    model_type = config.get("model_type") if isinstance(config, dict) else None
    role = ROLE.get(model_type, "masked-lm") if isinstance(model_type, str) else "masked-lm"
    got = admission.decide("sweep/model", role, config, files or _files(), environ=ENV, disk=1 << 40)
    assert isinstance(got, (Admitted, Refusal)), got
    if isinstance(got, Refusal):
        assert got.sentence.startswith("sweep/model is refused") and "\n" not in got.sentence, got.sentence
    return got


@pytest.mark.parametrize("model_type", list(BASE))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_admission_answers_every_config_with_a_refusal_or_a_fit(model_type, data):
    fields = sorted(set(BASE[model_type]) | set(EXTRA))
    spoiled = data.draw(st.dictionaries(st.sampled_from(fields), hostile, min_size=1, max_size=2))
    _answer(_config(model_type, spoiled))


@pytest.mark.parametrize("model_type", list(BASE))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_what_admission_lets_through_is_counted_within_the_limit(model_type, data):
    """The costly half: an admitted config is built on the meta device in the box, and what comes out is a
    Refusal or an admission whose exact memory fits the limit."""
    fields = sorted(set(BASE[model_type]) | set(EXTRA))
    big = st.sampled_from([1, 2, 64, 4096, 400_001, 10**6, 10**7, 1 << 24])
    spoiled = data.draw(st.dictionaries(st.sampled_from(fields), big, min_size=1, max_size=2))
    config = _config(model_type, spoiled)
    got = _answer(config)
    if isinstance(got, Admitted):
        counted = admission.measure(got, config)
        assert isinstance(counted, (Admitted, Refusal)), counted
        if isinstance(counted, Admitted):
            assert counted.measured and counted.memory_bytes <= LIMIT, counted


@settings(max_examples=60, deadline=None)
@given(
    config=st.one_of(
        hostile,
        st.dictionaries(
            st.sampled_from(["model_type", "architectures", "auto_map", "hidden_size", "vocab_size"]), hostile
        ),
    )
)
def test_any_json_value_as_a_config_is_answered(config):
    _answer(config)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.dictionaries(
        st.sampled_from(
            [
                "tokenizer.json",
                "vocab.txt",
                "vocab.json",
                "merges.txt",
                "spiece.model",
                "model.safetensors",
                "config.json",
            ]
        ),
        st.one_of(st.none(), st.integers(min_value=-5, max_value=1 << 40)),
        min_size=1,
    )
)
def test_any_file_list_is_answered(sizes):
    got = _answer(_config("bert", {}), {**_files(), **sizes})
    if isinstance(got, Admitted):
        assert got.memory_bytes <= LIMIT, got
        assert all(
            n is not None and n <= admission.TOKENIZER_CAP for f, n in got.files if f in admission.TOKENIZER_FILES
        )
