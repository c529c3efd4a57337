"""Conversions between CamelCase, snake_case and human-readable phrases."""

import re

_ACRONYM_BOUNDARY = re.compile(r"([A-Z]+)([A-Z][a-z])")
_WORD_BOUNDARY = re.compile(r"([a-z\d])([A-Z])")


def underscore(word: str) -> str:
    """snake_case form of a CamelCase word: 'HTTPServerError' -> 'http_server_error'."""
    word = _ACRONYM_BOUNDARY.sub(r"\1_\2", word)
    word = _WORD_BOUNDARY.sub(r"\1_\2", word)
    return word.replace("-", "_").lower()


def camelize(word: str, upper_first: bool = True) -> str:
    """CamelCase form of a snake_case word; `upper_first=False` gives lowerCamelCase."""
    parts = [p for p in re.split(r"[_\s]+", word) if p]
    if not parts:
        return ""
    joined = "".join(p[:1].upper() + p[1:] for p in parts)
    return joined if upper_first else joined[:1].lower() + joined[1:]


def humanize(word: str) -> str:
    """A readable phrase from an identifier: 'employee_salary_id' -> 'Employee salary'."""
    phrase = underscore(word)
    phrase = re.sub(r"_id$", "", phrase)
    phrase = phrase.replace("_", " ").strip()
    return phrase[:1].upper() + phrase[1:]
