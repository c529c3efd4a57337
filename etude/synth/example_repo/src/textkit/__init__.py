"""textkit: small text utilities."""

from textkit.case import camelize, humanize, underscore
from textkit.formats import available_formats, render
from textkit.numbers import ordinal
from textkit.slug import slugify
from textkit.stats import top_words, word_count
from textkit.wrap import indent_lines, wrap_text

__all__ = [
    "available_formats",
    "camelize",
    "humanize",
    "indent_lines",
    "ordinal",
    "render",
    "slugify",
    "top_words",
    "underscore",
    "word_count",
    "wrap_text",
]
