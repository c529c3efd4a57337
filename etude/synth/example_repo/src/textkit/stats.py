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


class Concordance:
    """Where each word of a text occurs; positions are 0-based word indices."""

    def __init__(self, text: str) -> None:
        self.words = _words(text)
        self.index: dict[str, list[int]] = {}
        for position, word in enumerate(self.words):
            self.index.setdefault(word, []).append(position)

    def positions(self, word: str) -> list[int]:
        """Where `word` occurs (case-insensitive), in order; empty when it does not."""
        return list(self.index.get(word.lower(), []))

    def frequency(self, word: str) -> float:
        """Share of the text's words that are `word` (0.0 for an empty text)."""
        return len(self.index.get(word.lower(), [])) / len(self.words) if self.words else 0.0

    def context(self, word: str, width: int = 2) -> list[str]:
        """Each occurrence of `word` with up to `width` words either side, space-joined."""
        return [" ".join(self._window(p, width)) for p in self.index.get(word.lower(), [])]

    def neighbours(self, word: str, width: int = 1) -> Counter:
        """How often each other word occurs within `width` words of `word`."""
        word = word.lower()
        found: Counter = Counter()
        for position in self.index.get(word, []):
            found.update(w for w in self._window(position, width) if w != word)
        return found

    def _window(self, position: int, width: int) -> list[str]:
        return self.words[max(0, position - width) : position + width + 1]
