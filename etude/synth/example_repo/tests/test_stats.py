from textkit import top_words, word_count
from textkit.stats import STOPWORDS


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
