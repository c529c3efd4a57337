from collections import Counter

from textkit import top_words, word_count
from textkit.stats import STOPWORDS, Concordance

TEXT = "The cat sat on the mat and the cat slept"


def test_word_count():
    assert word_count("It's a dog's life, isn't it?") == 6
    assert word_count("") == 0
    assert word_count("one two") + word_count("three") == 3


def test_top_words():
    text = "the cat and the hat; a cat, a bat, a cat"
    assert top_words(text, n=2) == [("cat", 3), ("bat", 1)]
    assert [word for word, _ in top_words("the end of the story")] == ["end", "story"]


def test_stopwords_are_lowercase():
    assert all(w == w.lower() for w in STOPWORDS)


def test_concordance_positions_and_frequency():
    concordance = Concordance(TEXT)
    assert concordance.positions("cat") == [1, 8]
    assert concordance.positions("Dog") == []
    assert concordance.frequency("the") == 0.3
    assert Concordance("").frequency("the") == 0.0


def test_concordance_context_and_neighbours():
    concordance = Concordance(TEXT)
    assert concordance.context("cat", width=1) == ["the cat sat", "the cat slept"]
    assert concordance.context("the", width=0) == ["the", "the", "the"]
    assert concordance.neighbours("cat") == Counter({"the": 2, "sat": 1, "slept": 1})


def test_concordance_positions_ignore_case():
    assert Concordance(TEXT).positions("THE") == [0, 4, 7]


def test_concordance_frequency_of_a_missing_word():
    assert Concordance(TEXT).frequency("dog") == 0.0


def test_concordance_context_at_the_edges():
    assert Concordance(TEXT).context("slept", width=2) == ["the cat slept"]


def test_concordance_neighbours_within_a_width():
    assert Concordance(TEXT).neighbours("mat", width=2) == Counter({"the": 2, "on": 1, "and": 1})
