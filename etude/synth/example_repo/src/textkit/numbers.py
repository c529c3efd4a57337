"""Numbers in words: English ordinals."""


def ordinal_suffix(number: int) -> str:
    """The English ordinal suffix of `number`: 'st', 'nd', 'rd' or 'th' (11-13 take 'th')."""
    if 11 <= abs(number) % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(abs(number) % 10, "th")


def ordinal(number: int) -> str:
    """`number` followed by its ordinal suffix: 1 -> '1st', 112 -> '112th'."""
    return f"{number}{ordinal_suffix(number)}"
