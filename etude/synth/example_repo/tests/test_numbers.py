import pytest
from textkit import ordinal
from textkit.numbers import ordinal_suffix


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (1, "1st"),
        (2, "2nd"),
        (3, "3rd"),
        (4, "4th"),
        (11, "11th"),
        (12, "12th"),
        (13, "13th"),
        (21, "21st"),
        (102, "102nd"),
        (111, "111th"),
        (-1, "-1st"),
    ],
)
def test_ordinal(number, expected):
    assert expected == ordinal(number)


def test_ordinal_suffix():
    assert ordinal_suffix(0) == "th"
    assert ordinal_suffix(22) == "nd"
    assert ordinal_suffix(113) == "th"
