"""The `etude_parse_cache` pytest plugin (etude/synth/plugin): failure reports are the same
text with it as without it, and it is in effect on the pytest etude runs."""

import json
import re
import subprocess
import sys

from etude.synth.testrun import PLUGIN_DIR

# Failing tests whose tracebacks go through helpers, a class and a parametrized test, in a
# module long enough that each report's statement lookup has something to parse.
TESTS = (
    "import pytest\n\n"
    + "".join(f"def helper_{i}(x):\n    y = x + {i}\n    return y\n\n" for i in range(300))
    + """
def check(value):
    assert value == 3, f"got {value}"


def test_nested():
    check(helper_1(1))


class TestGroup:
    def test_method(self):
        items = [helper_2(0),
                 helper_3(0)]
        assert items == [0, 0]


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    with pytest.raises(KeyError):
        {}.get(n)


def test_error():
    raise RuntimeError("boom")
"""
)


def _reports(tmp_path, plugins):
    (tmp_path / "test_long.py").write_text(TESTS)
    report = tmp_path / "outcomes.json"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    argv += [a for p in ("etude_outcomes", *plugins) for a in ("-p", p)]
    env = {"PYTHONPATH": str(PLUGIN_DIR), "ETUDE_OUTCOMES": str(report)}
    subprocess.run([*argv, "test_long.py"], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    # Object addresses (`self = <... object at 0x...>`) differ from run to run.
    text = re.sub(r"0x[0-9a-f]+", "0x?", report.read_text())
    tests = json.loads(text)["tests"]
    return {k: {f: v for f, v in t.items() if f != "seconds"} for k, t in tests.items()}


def test_reports_are_the_same_with_the_parse_cache(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain = _reports(tmp_path / "a", ())
    cached = _reports(tmp_path / "b", ("etude_parse_cache",))
    assert sorted(t["outcome"] for t in plain.values()) == ["failed"] * 5
    assert "got 2" in plain["test_long.py::test_nested"]["text"]
    assert "helper_2(0)," in plain["test_long.py::TestGroup::test_method"]["text"]
    assert cached == plain


def test_the_parse_cache_is_in_effect():
    probe = (
        "import etude_parse_cache, _pytest._code.code as c, _pytest._code.source as s\n"
        "print(hasattr(s.getstatementrange_ast, '__wrapped__'), "
        "c.getstatementrange_ast is s.getstatementrange_ast)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(PLUGIN_DIR)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split() == ["True", "True"], done.stderr
