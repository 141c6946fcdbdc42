"""app/core/text.py: the one word splitter, pieces aligned to words for every tokenizer family, and the one
markdown escape that no user value can break out of."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core import text


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_md_is_one_code_span_that_nothing_inside_can_close_or_make_invisible(value):
    out = text.md(value, max_chars=None)
    assert out.startswith("`") and out.endswith("`") and out.count("`") == 2
    assert "\n" not in out and "\r" not in out
    assert not any(text.unicodedata.category(c) == "Cf" for c in out)


def test_md_shows_format_characters_and_cuts_long_values():
    assert text.md("a\u202eb") == "`a⟨U+202E⟩b`"
    assert text.md("x" * 100, 10) == "`" + "x" * 9 + "…`"
    assert text.md("") == "` `" and text.md("a`b") == "`aˋb`"


def test_html_escapes_markup():
    # quotes as numeric references (issue 26: plotly showed "&quot;" as is): a browser and plotly both decode them
    assert text.html("<script>&\"") == "&lt;script&gt;&amp;&#34;"


PLOTLY_ENTITIES = {
    "mu": "\u03bc",
    "amp": "&",
    "lt": "<",
    "gt": ">",
    "nbsp": "\xa0",
    "times": "\xd7",
    "plusmn": "\xb1",
    "deg": "\xb0",
}  # all the named entities plotly.js decodes (svg_text_utils.convertEntities)


def plotly_shows(s: str) -> str:
    """What plotly.js draws for a text: its convertEntities, once (numeric references and the names above)."""

    def one(m):
        r = m.group(1)
        if r.startswith("#"):
            return chr(int(r[2:], 16) if r[1] == "x" else int(r[1:]))
        return PLOTLY_ENTITIES.get(r, m.group(0))

    return text.re.sub(r"&(#\d+|#x[\da-fA-F]+|[a-z]+);", one, s)


@pytest.mark.parametrize("piece", ['"', "'", "&", "<b>", "a€", "âĢľ", "Ġ\"", "&quot;", "[MASK]", "##'s"])
def test_a_piece_escaped_once_is_drawn_by_plotly_exactly_as_it_is(piece):
    """A guess such as '"' (BERT's for ".") or a byte-level piece: escaped exactly once, plotly shows the piece."""
    assert plotly_shows(text.html(piece)) == piece
    assert "<" not in text.html(piece) and '"' not in text.html(piece)


def test_a_new_text_moves_the_word_to_its_nearest_content_word():
    words = text.split_words("A cat sat on the mat.")  # A cat sat on the mat .
    assert text.word_for_new_text(words, 9) == 5  # beyond the text: not ".", but "mat"
    assert text.word_for_new_text(words, 6) == 5 and text.word_for_new_text(words, 2) == 2
    assert text.word_for_new_text(text.split_words("Hi , you"), 1) == 0  # a tie: the earlier word
    assert text.word_for_new_text(words, 6, among=[0, 6]) == 0  # only among the words allowed
    assert text.word_for_new_text(text.split_words("? !"), 1) == 1  # no content word at all: the index, clamped
    assert text.is_content_word("don") and text.is_content_word("3rd") and not text.is_content_word(".")


def test_words_and_windows():
    assert [w for w, _, _ in text.split_words("Don't stop, Lily!")] == ["Don", "'", "t", "stop", ",", "Lily", "!"]
    assert text.choose_word(3, 1) == (1, None)
    index, note = text.choose_word(3, 7)
    assert index == 2 and "counted from 0" in note
    with pytest.raises(ValueError):
        text.choose_word(0, 0)
    # given the words, an index past the end lands on the last content word, named in the note, not on "."
    words = text.split_words("The dog ran to the park .")
    index, note = text.choose_word(len(words), 99, words)
    assert index == 5 and "park" in note and "counted from 0" in note
    assert text.choose_word(3, 99, ["a", "b", "c"])[0] == 2  # the last word is a content word: it
    assert text.choose_word(2, 9, ["?", "!"])[0] == 1  # no content word at all: the last word
    assert text.choose_word(len(words), 2, words) == (2, None)  # in range: as asked
    assert list(text.word_window(100, 50, 10)) == list(range(45, 55)) and list(text.word_window(5, 4, 10)) == [
        0,
        1,
        2,
        3,
        4,
    ]
    index, note = text.choose_word(1, 9)  # a one-word text: the note's count agrees with its number
    assert index == 0 and "this text's 1 word (" in note and "its only word" in note and "1 words" not in note


def test_a_cut_text_says_what_it_kept_in_words():
    assert text.kept_words("The dog ran", "The dog ran to the park") == "the first 3 of its 6 words"
    assert text.kept_words("The", "The dog ran") == "the first of its 3 words"
    assert text.kept_words("The dog r", "The dog ran to") == "the first 2 of its 4 words and the start of the 3rd"
    assert text.kept_words("super", "supercalifragilistic") == "the start of its only word"  # not "1 of 1 words"
    assert text.kept_words("super", "supercalifragilistic and more") == "the start of its first word"


def test_counts_and_ordinals_in_prose():
    assert [text.count(n, "word") for n in (0, 1, 2, 1234)] == ["0 words", "1 word", "2 words", "1,234 words"]
    assert text.count(1, "child", "children") == "1 child" and text.count(3, "child", "children") == "3 children"
    assert [text.ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)] == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "23rd",
        "101st",
        "111th",
        "112th",
    ]


@pytest.mark.parametrize("key", ["bert", "roberta", "albert", "xlnet"])
def test_every_family_aligns_its_pieces_to_the_same_words(bundled, key):
    tok = bundled(key).tokenizer
    sentence = "The unbelievably happy puppy jumped."
    tk = text.tokenize(tok, sentence)
    words = text.split_words(sentence)
    assert {w for w in tk.word_of if w is not None} == set(range(len(words)))
    for i, w in enumerate(tk.word_of):
        if w is not None:
            s, e = tk.offsets[i]
            assert words[w][1] <= max(s, words[w][1]) and min(e, words[w][2]) <= words[w][2]
    assert not tk.truncated and tk.typed_special == ()


def test_typed_special_tokens_and_unknown_pieces_are_named(bundled):
    tok = bundled("bert").tokenizer
    sentence = f"the {tok.mask_token} ate 😀 cake"
    tk = text.tokenize(tok, sentence)
    assert tk.typed_special == (tok.mask_token,)
    notes = " ".join(text.input_notes(tk, tok, sentence, "BERT"))
    assert f"`{tok.mask_token}`" in notes and "`😀`" in notes and f"`{tok.unk_token}`" in notes
    assert "emoji" not in notes.lower()


def test_tokenize_caps_and_fit_text_cuts_at_a_word(bundled):
    tok = bundled("bert").tokenizer
    long = " ".join(["the dog ran home"] * 100)
    tk = text.tokenize(tok, long, max_tokens=20)
    assert len(tk.ids) == 20 and tk.truncated and tk.n_full > 20
    fitted, note = text.fit_text(long, {"BERT": tok})
    assert len(tok(fitted)["input_ids"]) <= text.token_limit(tok) and fitted.endswith(("dog", "ran", "home", "the"))
    assert note and "BERT" in note
    assert text.fit_text("short", {"BERT": tok}) == ("short", None)


@pytest.mark.parametrize("blank", ["", "   ", "\n\t "])
def test_require_text_stops_on_an_empty_box_in_one_wording(blank):
    from app.core.lesson import Stop

    with pytest.raises(Stop, match="Type a sentence to start: the box is empty or only whitespace.") as stop:
        text.require_text(blank)
    assert stop.value.note.level == "warning"
    with pytest.raises(Stop) as stop:
        text.require_text(blank, "A `red` [ball](x)", "two sentences (A and B)")
    note = stop.value.note.text
    assert note.startswith("Type two sentences (A and B) to start") and text.md("A `red` [ball](x)", None) in note
    assert note.endswith(".") and not note.endswith("..")
    with pytest.raises(Stop) as stop:  # an example with its own full stop ends the sentence once
        text.require_text(blank, "The boy went home with his mom.")
    assert stop.value.note.text.endswith("his mom.`"), stop.value.note.text
    assert text.require_text(" a ") == " a "
