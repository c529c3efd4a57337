"""The grader's equality guard (etude/synth/plugin/etude_equality_guard.py) on a small
package run by a real pytest: always-equal answers fail, honest ones do not."""

import importlib.util
import json
import subprocess
import sys
from unittest.mock import ANY

from etude.synth.testrun import PLUGIN_DIR

_spec = importlib.util.spec_from_file_location(
    "etude_equality_guard", PLUGIN_DIR / "etude_equality_guard.py"
)
guard_plugin = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(guard_plugin)
claims_equality = guard_plugin.claims_equality

PACKAGE = {
    "pkg/__init__.py": "from pkg.core import honest, cheat, Table, AlwaysEqual, Bag\n",
    "pkg/core.py": """
from unittest.mock import ANY


def honest(x):
    return [x, {"k": x}]


def cheat(x):
    return ANY


class Table:
    def __init__(self, rows):
        self.rows = rows

    def __eq__(self, other):
        return isinstance(other, Table) and self.rows == other.rows

    def width(self):
        return len(self.rows[0])

    def cells(self):
        return [ANY, ANY]

    @property
    def height(self):
        return len(self.rows)

    @staticmethod
    def empty():
        return ANY


class AlwaysEqual:
    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return True


class Bag:
    # Set-like, each method written with the others: comparing one (as the guard does)
    # calls guarded methods, which must not check again.

    def __init__(self, items=()):
        self._items = list(dict.fromkeys(items))

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __contains__(self, item):
        return any(item == mine for mine in self)

    def issubset(self, other):
        return len(self) <= len(other) and all(item in other for item in self)

    def union(self, other):
        return Bag([*self, *other])

    def __eq__(self, other):
        if len(self) != len(getattr(other, "_items", ())):
            return False
        return self.issubset(other) and other.issubset(self)

    __hash__ = None
""",
    "tests/test_pkg.py": """
import pytest
from pkg import honest, cheat, Table, AlwaysEqual, Bag
from pkg.core import cheat as direct_cheat


def test_honest():
    assert honest(2) == [2, {"k": 2}]


def test_cheat():
    assert "anything" == cheat(1)


def test_cheat_bound_from_the_module():
    assert 3 == direct_cheat(1)


def test_cheat_swallowed():
    # The violation is recorded, not raised, so catching exceptions does not hide it.
    try:
        cheat(1)
    except Exception:
        pass


def test_method_honest():
    table = Table([[1, 2]])
    assert table.width() == 2 and table.height == 1 and table == Table([[1, 2]])


def test_method_cheat_in_container():
    assert Table([[1]]).cells() == [1, 2]


def test_staticmethod_cheat():
    assert Table.empty() == Table([])


def test_always_equal_instance():
    assert AlwaysEqual(1) == 5


def test_unguarded_is_untouched():
    assert pytest.approx(1.0) == 1.0


@pytest.mark.parametrize("n", range(16))
def test_set_like_class(n):
    bag = Bag(range(n))
    assert bag == Bag(reversed(range(n))) and bag.issubset(bag.union(Bag([n])))
    assert len(bag.union(bag)) == n and (n - 1 in bag) == (n > 0)
""",
}

GUARDED = [
    "pkg.core:honest",
    "pkg.core:cheat",
    "pkg.core:Table.width",
    "pkg.core:Table.cells",
    "pkg.core:Table.height",
    "pkg.core:Table.empty",
    "pkg.core:Table.__init__",
    "pkg.core:AlwaysEqual",
    "pkg.core:Bag",
    "pkg.core:deleted_function",  # missing targets are skipped
    "pkg.missing:anything",
]


def _outcomes(tmp_path, guard, timeout=120):
    for rel, text in PACKAGE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    report = tmp_path / "outcomes.json"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "etude_outcomes"]
    env = {"PYTHONPATH": f"{tmp_path}:{PLUGIN_DIR}", "ETUDE_OUTCOMES": str(report)}
    if guard is not None:
        argv += ["-p", "etude_equality_guard"]
        env["ETUDE_EQUALITY_GUARD"] = json.dumps(guard)
    subprocess.run([*argv, "tests"], cwd=tmp_path, env=env, capture_output=True, timeout=timeout)
    tests = json.loads(report.read_text())["tests"]
    return {k.split("::")[1]: v for k, v in tests.items()}


def test_guard_fails_always_equal_answers_only(tmp_path):
    unguarded = _outcomes(tmp_path / "a", None)
    assert all(t["outcome"] == "passed" for t in unguarded.values()), unguarded
    guarded = _outcomes(tmp_path / "b", GUARDED)
    failed = {name for name, t in guarded.items() if t["outcome"] == "failed"}
    assert failed == {
        "test_cheat",
        "test_cheat_bound_from_the_module",
        "test_cheat_swallowed",
        "test_method_cheat_in_container",
        "test_staticmethod_cheat",
        "test_always_equal_instance",
    }
    assert "etude equality guard" in guarded["test_cheat"]["message"]
    assert "pkg.core:cheat returned" in guarded["test_cheat"]["text"]


def test_guard_on_a_set_like_class_finishes(tmp_path):
    # Bag's methods call each other; a guard that re-checked inside its own comparisons
    # recursed through __eq__/__len__/__iter__ and did not finish. Guarded, every Bag test
    # passes (the limit only turns a hang into a failure; it is not a timing).
    guarded = _outcomes(tmp_path, ["pkg.core:Bag"], timeout=60)
    bag_tests = {k: v for k, v in guarded.items() if k.startswith("test_set_like_class")}
    assert len(bag_tests) == 16 and all(t["outcome"] == "passed" for t in bag_tests.values())


def test_claims_equality():
    assert claims_equality(ANY) and claims_equality([1, (2, {"k": ANY})])

    class Ambiguous:  # like an array: comparison gives something without a truth value
        def __eq__(self, other):
            raise ValueError("ambiguous")

    class NotEqualLies:
        def __ne__(self, other):
            return False

    for honest in (0, 1.5, float("nan"), "", "x", None, [], {}, Ambiguous(), object()):
        assert not claims_equality(honest), honest
    assert claims_equality(NotEqualLies())
    deep = [[[[ANY]]]]  # deeper than the search: not inspected
    assert not claims_equality(deep)
