"""URL state: values parse strictly, bad values fall back with a note that shows them literally, a
repeated key is noted, and encode/parse round-trip."""

from hypothesis import given
from hypothesis import strategies as st

from app.core.state import Param, Spec, encode, fits, parse, unknown_keys

SPEC = Spec(
    Param("text", "str", "The little girl found a red ball.", max_len=50),
    Param("seed", "int", 0, lo=0, hi=1000),
    Param("rate", "float", 0.15, lo=0.01, hi=0.9),
    Param("variant", "choice", "bert", choices=("bert", "roberta"), labels=(("bert", "BERT"),)),
    Param("on", "bool", False),
)


def test_missing_parameters_take_defaults_without_notes():
    values, notes = parse({}, SPEC)
    assert values == SPEC.defaults() and notes == []


def test_good_values_parse():
    values, notes = parse({"seed": "7", "rate": "0.3", "variant": "roberta", "on": "1"}, SPEC)
    assert (values["seed"], values["rate"], values["variant"], values["on"]) == (7, 0.3, "roberta", True)
    assert notes == []


def test_malformed_and_stale_values_fall_back_with_a_note():
    bad = {"seed": "abc", "rate": "nan", "variant": "gpt2", "on": "maybe", "text": "x" * 51}
    values, notes = parse(bad, SPEC)
    assert values == SPEC.defaults()
    assert len(notes) == len(bad)
    assert all(n.startswith("Ignored `") for n in notes)
    assert any("expected one of bert, roberta" in n for n in notes)


def test_integers_and_numbers_are_ascii_digits_only():
    for raw in ("٥", "1_000", "５", "0x10", "1e3", " ", "+", "1.0"):
        values, notes = parse({"seed": raw}, SPEC)
        assert values["seed"] == 0 and len(notes) == 1, raw
    for raw in ("1_0.5", "٠.٥", "inf", "1e400"):
        values, notes = parse({"rate": raw}, SPEC)
        assert values["rate"] == 0.15 and len(notes) == 1, raw
    assert parse({"seed": "+7", "rate": "5e-2"}, SPEC)[0] | {} == {**SPEC.defaults(), "seed": 7, "rate": 0.05}


def test_out_of_range_numbers_are_refused():
    values, notes = parse({"seed": "-1", "rate": "2"}, SPEC)
    assert values["seed"] == 0 and values["rate"] == 0.15 and len(notes) == 2


def test_a_repeated_key_uses_its_last_value_and_says_so():
    values, notes = parse({"seed": ["1", "5"]}, SPEC)
    assert values["seed"] == 5 and len(notes) == 1 and "2 times" in notes[0] and "`1`" in notes[0]


def test_notes_show_hostile_values_literally_and_inertly():
    payloads = [
        "`![](http://evil.invalid/s.png)`",
        "`[Log in again](http://evil.invalid/x)`",
        ":red[**HACKED**]",
        "\u202e5 txet",
        "$\\frac{1}{2}$",
        "a\n\n# heading",
        "<img src=x onerror=alert(1)>",
    ]
    for raw in payloads:
        _, notes = parse({"seed": raw}, SPEC)
        note = notes[0]
        span = note[note.index("`") : note.index("` in the link") + 1]
        assert span.count("`") == 2, note  # one code span, never closed from inside
        assert "\u202e" not in note and "\n" not in note
    assert "⟨U+202E⟩" in parse({"seed": "\u202e5"}, SPEC)[1][0]


def test_unknown_keys_are_named():
    assert unknown_keys({"seed": "1", "colour": "red"}, {"seed"}) == [
        "Ignored `colour` in the link: this page has no such setting."
    ]


def test_fits_tells_a_value_this_parameter_can_hold():
    assert fits(SPEC.seed, 5) and not fits(SPEC.seed, 5000) and not fits(SPEC.text, "x" * 51)
    assert SPEC.variant.shown("bert") == "BERT" and SPEC.variant.shown("roberta") == "roberta"


def test_encode_only_writes_what_differs_from_defaults():
    assert encode(SPEC.defaults(), SPEC) == {}


@given(
    text=st.text(max_size=50),
    seed=st.integers(0, 1000),
    rate=st.floats(0.01, 0.9),
    variant=st.sampled_from(["bert", "roberta"]),
    on=st.booleans(),
)
def test_round_trip(text, seed, rate, variant, on):
    values = {"text": text, "seed": seed, "rate": float(f"{rate:g}"), "variant": variant, "on": on}
    back, notes = parse(encode(values, SPEC), SPEC)
    assert notes == [] and back == values
