"""URL state: values parse, bad values fall back with a note, and encode/parse round-trip."""

from hypothesis import given
from hypothesis import strategies as st

from app.state import Param, encode, parse

SPEC = (
    Param("text", "str", "The little girl found a red ball.", max_len=50),
    Param("seed", "int", 0, lo=0, hi=1000),
    Param("rate", "float", 0.15, lo=0.01, hi=0.9),
    Param("variant", "choice", "bert", choices=("bert", "roberta")),
    Param("on", "bool", False),
    Param("order", "ints", ()),
)


def test_missing_parameters_take_defaults_without_notes():
    values, notes = parse({}, SPEC)
    assert values == {p.name: p.default for p in SPEC} and notes == []


def test_good_values_parse():
    values, notes = parse({"seed": "7", "rate": "0.3", "variant": "roberta", "on": "true", "order": "2 0,1"}, SPEC)
    assert (values["seed"], values["rate"], values["variant"], values["on"], values["order"]) == (7, 0.3, "roberta", True, (2, 0, 1))
    assert notes == []


def test_malformed_and_stale_values_fall_back_with_a_note():
    bad = {"seed": "abc", "rate": "nan", "variant": "gpt2", "on": "maybe", "order": "1 x", "text": "x" * 51}
    values, notes = parse(bad, SPEC)
    assert values == {p.name: p.default for p in SPEC}
    assert len(notes) == len(bad)
    assert all(n.startswith("Ignored `") for n in notes)
    assert any("expected one of bert, roberta" in n for n in notes)


def test_out_of_range_numbers_are_refused():
    values, notes = parse({"seed": "-1", "rate": "2"}, SPEC)
    assert values["seed"] == 0 and values["rate"] == 0.15 and len(notes) == 2


def test_repeated_parameter_uses_the_last_value():
    values, _ = parse({"seed": ["1", "5"]}, SPEC)
    assert values["seed"] == 5


def test_encode_only_writes_what_differs_from_defaults():
    assert encode({p.name: p.default for p in SPEC}, SPEC) == {}


@given(
    text=st.text(max_size=50),
    seed=st.integers(0, 1000),
    rate=st.floats(0.01, 0.9),
    variant=st.sampled_from(["bert", "roberta"]),
    on=st.booleans(),
    order=st.lists(st.integers(0, 99), max_size=8).map(tuple),
)
def test_round_trip(text, seed, rate, variant, on, order):
    values = {"text": text, "seed": seed, "rate": float(f"{rate:g}"), "variant": variant, "on": on, "order": order}
    back, notes = parse(encode(values, SPEC), SPEC)
    assert notes == [] and back == values
