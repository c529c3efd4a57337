"""Greedy line wrapping and indentation."""


def wrap_text(text: str, width: int = 70) -> list[str]:
    """Split `text` into lines of at most `width` characters, breaking between words;
    a word longer than `width` gets a line of its own."""
    if width < 1:
        raise ValueError(f"width must be positive, got {width}")
    lines: list[str] = []
    current: list[str] = []
    length = 0
    for word in text.split():
        extra = len(word) + (1 if current else 0)
        if current and length + extra > width:
            lines.append(" ".join(current))
            current, length = [], 0
            extra = len(word)
        current.append(word)
        length += extra
    if current:
        lines.append(" ".join(current))
    return lines


def indent_lines(text: str, prefix: str = "    ", skip_blank: bool = True) -> str:
    """Prefix every line of `text` with `prefix`, leaving blank lines alone by default."""
    out = []
    for line in text.splitlines(keepends=True):
        blank = not line.strip()
        out.append(line if (blank and skip_blank) else prefix + line)
    return "".join(out)
