import pytest
from textkit import slugify


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello World", "hello-world"),
        ("  Café au lait  ", "cafe-au-lait"),
        ("C'est déjà l'été!", "cest-deja-lete"),
        ("multiple   ---  separators", "multiple-separators"),
        ("", ""),
    ],
)
def test_slugify(text, expected):
    assert slugify(text) == expected


def test_slugify_output_alphabet():
    slug = slugify("Ünïcödé, punctuation & CAPITALS: all gone?")
    assert set(slug) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
    assert slug.split("-") == ["unicode", "punctuation", "capitals", "all", "gone"]


def test_slugify_separator():
    assert slugify("Hello big World", separator="_") == "hello_big_world"


def test_slugify_max_length_cuts_at_word_boundary():
    assert slugify("the quick brown fox", max_length=12) == "the-quick"
    assert slugify("the quick brown fox", max_length=9) == "the-quick"
