"""The `etude` command: help, version, errors."""

import subprocess
import sys

import etude
from etude.cli import build_parser


def _etude(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "etude", *args], capture_output=True, text=True, timeout=120
    )


def test_version():
    result = _etude("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"etude {etude.__version__}"


def test_help_lists_each_subcommand_and_each_one_has_help():
    result = _etude("--help")
    assert result.returncode == 0
    commands = build_parser()._subparsers._group_actions[0].choices
    for name in commands:
        assert name in result.stdout
        sub = _etude(name, "--help")
        assert sub.returncode == 0, (name, sub.stderr)


def test_unknown_subcommand_fails_with_usage():
    result = _etude("no-such-command")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
