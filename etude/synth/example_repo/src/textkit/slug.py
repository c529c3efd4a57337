"""URL slugs."""

import re
import unicodedata

_SEPARATOR_RUN = re.compile(r"[-\s]+")


def _strip_accents(text: str) -> str:
    """Drop combining marks after NFKD decomposition, so 'café' becomes 'cafe'."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _collapse_separators(text: str, separator: str) -> str:
    """Turn runs of whitespace and dashes into one separator, trimmed at both ends."""
    return _SEPARATOR_RUN.sub(separator, text).strip(separator)


def slugify(text: str, separator: str = "-", max_length: int | None = None) -> str:
    """Lower-case ASCII slug of `text`: accents dropped, punctuation removed, words joined
    by `separator`; cut at a word boundary to at most `max_length` characters."""
    ascii_text = _strip_accents(text).encode("ascii", "ignore").decode()
    kept = re.sub(r"[^\w\s-]", "", ascii_text).lower()
    slug = _collapse_separators(kept, separator)
    if max_length is not None and len(slug) > max_length:
        cut = slug[:max_length]
        if separator in cut and slug[max_length : max_length + len(separator)] != separator:
            cut = cut.rsplit(separator, 1)[0]
        slug = cut.strip(separator)
    return slug
