"""`etude synth --slow-test-limit SECONDS`: baseline tests slower than the limit are dropped,
the limit is recorded in summary.json and task.json, and changing it redoes the baseline."""

import json
from pathlib import Path

import pytest

from etude.cli import main

PYPROJECT = (
    '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
    '[project]\nname = "tiny"\nversion = "0.1"\n'
)
FILES = {
    "pyproject.toml": PYPROJECT,
    "tiny/__init__.py": 'def double(x):\n    """Twice x."""\n    return 2 * x\n',
    "tests/test_tiny.py": (
        "import time\nfrom tiny import double\n\n\n"
        "def test_fast():\n    assert double(2) == 4\n\n\n"
        "def test_slow():\n    time.sleep(1.5)\n    assert double(3) == 6\n"
    ),
}


def _synth(source: Path, out: Path, limit: str, capsys) -> tuple[int, dict, str]:
    argv = ["synth", str(source), "--out", str(out), "--workers", "1", "--max-candidates", "0"]
    code = main([*argv, "--slow-test-limit", limit])
    err = capsys.readouterr().err
    summary_file = out / "summary.json"
    return code, json.loads(summary_file.read_text()) if summary_file.exists() else {}, err


@pytest.mark.slow
def test_slow_test_limit(tmp_path, capsys):
    source = tmp_path / "tiny"
    for rel, text in FILES.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text)
    out = tmp_path / "out"
    code, summary, err = _synth(source, out, "1", capsys)
    assert code == 0, err
    assert summary["settings"]["slow_test_s"] == 1.0
    (repo,) = summary["repositories"]
    assert (repo["tests_kept"], repo["tests_dropped"]) == (1, 1)
    state = json.loads((out / "work" / "tiny" / "repo_state.json").read_text())
    assert state["dropped"] == {"tests/test_tiny.py::test_slow": "slow (over 1 s)"}
    # A new limit on the same --out redoes the baseline instead of reusing the stored one.
    code, summary, err = _synth(source, out, "10", capsys)
    assert code == 0, err
    assert summary["settings"]["slow_test_s"] == 10.0
    assert (
        summary["repositories"][0]["tests_kept"],
        summary["repositories"][0]["tests_dropped"],
    ) == (2, 0)


@pytest.mark.parametrize("limit", ["0", "-2", "nan"])
def test_bad_slow_test_limit(tmp_path, capsys, limit):
    code, summary, err = _synth(tmp_path, tmp_path / "out", limit, capsys)
    assert code != 0 and "--slow-test-limit must be a positive number" in err
    assert not summary
