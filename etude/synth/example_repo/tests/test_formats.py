import pytest
from textkit import available_formats, render

ROWS = [["name", "qty"], ["apple", 3], ["kiwi", 12]]


def test_available_formats():
    assert available_formats() == ["markdown", "plain"]


def test_render_plain():
    assert render(ROWS) == "name   qty\napple  3\nkiwi   12"
    assert render(ROWS).count("\n") == len(ROWS) - 1


def test_render_markdown_header():
    assert render(ROWS, "markdown").splitlines()[0].startswith("| name")


def test_render_markdown_aligns_numbers():
    assert render(ROWS, "markdown") == (
        "| name  | qty |\n| ----- | --: |\n| apple | 3   |\n| kiwi  | 12  |"
    )


def test_render_unknown_format():
    with pytest.raises(KeyError, match="unknown format"):
        render(ROWS, "html")


def test_render_empty():
    assert render([], "plain") == ""
