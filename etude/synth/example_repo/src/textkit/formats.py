"""Rendering a list of rows as text tables, in formats registered by name."""

from collections.abc import Callable, Sequence

Row = Sequence[object]
_FORMATS: dict[str, Callable[[list[list[str]]], str]] = {}


def register(name: str):
    """Decorator adding a renderer under `name`."""

    def add(fn):
        _FORMATS[name] = fn
        return fn

    return add


def _column_widths(cells: list[list[str]]) -> list[int]:
    return [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]


@register("plain")
def plain(cells: list[list[str]]) -> str:
    """Columns left-aligned and separated by two spaces."""
    widths = _column_widths(cells)
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


class MarkdownTable:
    """A GitHub-flavoured Markdown table; the first row is the header."""

    separator = "|"

    def __init__(self, align_numbers: bool = True) -> None:
        self.align_numbers = align_numbers

    def _is_number(self, text: str) -> bool:
        try:
            float(text)
        except ValueError:
            return False
        return True

    def rule(self, column: list[str], width: int) -> str:
        """The header rule of one column: right-aligned ('---:') for numeric columns."""
        numeric = self.align_numbers and all(self._is_number(c) for c in column[1:])
        return "-" * (width - 1) + ":" if numeric else "-" * width

    def __call__(self, cells: list[list[str]]) -> str:
        widths = [max(3, w) for w in _column_widths(cells)]
        columns = [[row[i] for row in cells] for i in range(len(widths))]
        lines = [self._line(cells[0], widths)]
        rules = [self.rule(col, w) for col, w in zip(columns, widths)]
        lines.append(self._line(rules, widths))
        lines.extend(self._line(row, widths) for row in cells[1:])
        return "\n".join(lines)

    def _line(self, row: Sequence[str], widths: list[int]) -> str:
        inner = f" {self.separator} ".join(c.ljust(w) for c, w in zip(row, widths))
        return f"{self.separator} {inner} {self.separator}"


register("markdown")(MarkdownTable())


def available_formats() -> list[str]:
    """Names of the registered formats, sorted."""
    return sorted(_FORMATS)


def render(rows: Sequence[Row], fmt: str = "plain") -> str:
    """Render `rows` (the first one a header) in the format registered as `fmt`."""
    if fmt not in _FORMATS:
        raise KeyError(f"unknown format {fmt!r}; known: {', '.join(available_formats())}")
    cells = [[str(c) for c in row] for row in rows]
    if not cells:
        return ""
    return _FORMATS[fmt](cells)
