import pytest
from textkit import indent_lines, wrap_text


def test_wrap_text_greedy():
    text = "the quick brown fox jumps over the lazy dog"
    assert wrap_text(text, width=10) == ["the quick", "brown fox", "jumps over", "the lazy", "dog"]


def test_wrap_text_long_word_on_its_own_line():
    assert wrap_text("a supercalifragilistic word", width=5) == [
        "a",
        "supercalifragilistic",
        "word",
    ]


def test_wrap_text_rejects_bad_width():
    with pytest.raises(ValueError, match="width"):
        wrap_text("x", width=0)


def test_wrap_text_respects_width():
    lines = wrap_text("lorem ipsum dolor sit amet consectetur adipiscing elit", width=12)
    assert max(len(line) for line in lines) <= 12


def test_indent_lines():
    assert indent_lines("a\n\nb\n", "> ") == "> a\n\n> b\n"
    assert indent_lines("a\n\nb", "> ", skip_blank=False) == "> a\n> \n> b"
    assert indent_lines("x\ny\n").count("    ") == 2
