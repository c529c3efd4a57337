"""Word statistics."""

import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z']+")
STOPWORDS = frozenset({"a", "an", "and", "in", "is", "of", "on", "the", "to"})


def _words(text: str) -> list[str]:
    return [w.lower().strip("'") for w in _WORD.findall(text) if w.strip("'")]


def word_count(text: str) -> int:
    """Number of words in `text` (runs of letters and apostrophes)."""
    return len(_words(text))


def _content_words(text: str) -> list[str]:
    """Words of `text` that are not stopwords."""
    return [w for w in _words(text) if w not in STOPWORDS]


def top_words(text: str, n: int = 3) -> list[tuple[str, int]]:
    """The `n` most frequent non-stopwords with their counts, ties broken alphabetically."""
    counts = Counter(_content_words(text))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]
