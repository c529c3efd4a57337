"""What one part's miniature run in `etude demo` showed: the record every section returns."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DemoSection:
    """What one part's miniature run showed.

    `figures` are name -> value pairs shown as a table; `html` is an optional fragment
    (plots as inline images, extra tables); `files` are paths relative to the demo directory.
    """

    title: str
    summary: str
    figures: dict[str, str | float | int] = field(default_factory=dict)
    html: str = ""
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0
