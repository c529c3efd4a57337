"""The pure pieces of task synthesis: discovery, slicing, libcst rewrites, validation
rules and the problem statement, on the example repository's source (no processes run)."""

import ast
import difflib
import shutil
from pathlib import Path

import pytest

from etude.sandbox import Completed
from etude.synth import similarity
from etude.synth.baseline import keep_generated_sources
from etude.synth.delete import delete_definitions, plant_canary, stub
from etude.synth.discover import module_name, prepare
from etude.synth.grade import score
from etude.synth.slice import build_graph, slice_candidates
from etude.synth.task import MAX_LISTED_TESTS, listed_tests, problem_statement
from etude.synth.testrun import Outcome, SuiteRun
from etude.synth.validate import check_collection, check_failure_reasons, split_outcomes

EXAMPLE = Path(__file__).parents[1] / "etude" / "synth" / "example_repo"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return prepare(EXAMPLE, tmp_path_factory.mktemp("work"))


def test_discover_classifies_the_example(repo):
    assert repo.package_root == "src" and repo.packages == ["textkit"]
    assert "src/textkit/slug.py" in repo.source_files
    assert repo.test_files == sorted(
        f"tests/test_{m}.py" for m in ("case", "formats", "numbers", "slug", "stats", "wrap")
    )
    assert repo.config_files == ["pyproject.toml"]
    assert module_name(repo, "src/textkit/__init__.py") == "textkit"
    assert repo.revision.startswith("tree:")


def _every_body_line_covered(repo, graph):
    lines = {}
    for d in graph.definitions.values():
        per_line = lines.setdefault(d.file, {})
        for n in range(d.body_first, d.last + 1):
            per_line[n] = {f"tests/t.py::{d.name}"}
    return lines


def test_slice_closures_and_rejections(repo):
    graph = build_graph(repo)
    lines = _every_body_line_covered(repo, graph)
    kept = sorted({t for per in lines.values() for ts in per.values() for t in ts})
    candidates, rejections = slice_candidates(repo, lines, kept)
    by_id = {c.id: c for c in candidates}
    slug = by_id["textkit.slug.slugify"]
    assert {h[1] for h in slug.helpers} == {
        "_strip_accents",
        "_collapse_separators",
        "_SEPARATOR_RUN",
    }
    assert slug.depth == 2 and slug.files == 1
    assert {h[1] for h in by_id["textkit.stats.top_words"].helpers} == {"_content_words"}
    # _words is shared by word_count and top_words, so it belongs to neither.
    assert by_id["textkit.stats.word_count"].helpers == []
    # Registered at import time by a bare call: deletable with its registration.
    assert "textkit.formats.MarkdownTable" in by_id
    rejected = {r.feature[1]: r.reason for r in rejections}
    assert rejected["underscore"].startswith("used by other code: src/textkit/case.py:humanize")
    assert "register" in rejected


def _coverage(repo, tests_by_part):
    """A line map where each part ('name' or 'Class.method') is run by the given tests
    (by 'tests/t.py::other' when not given)."""
    lines = {}
    for rel in repo.source_files:
        per_line = lines.setdefault(rel, {})
        for top in ast.parse((repo.root / rel).read_text()).body:
            parts = [(getattr(top, "name", ""), top)]
            if isinstance(top, ast.ClassDef):
                parts += [(f"{top.name}.{n.name}", n) for n in top.body if hasattr(n, "name")]
            for part, node in parts:  # methods after their class: their own tests win
                for n in range(node.lineno, node.end_lineno + 1):
                    per_line[n] = set(tests_by_part.get(part, {"tests/t.py::other"}))
    return lines


def test_slice_method_groups_and_modules(repo):
    lines = _coverage(
        repo,
        {
            "Concordance.positions": {"t::a"},
            "Concordance.frequency": {"t::a", "t::b"},
            "Concordance.context": {"t::c"},
            "Concordance.neighbours": {"t::d"},
            "Concordance._window": {"t::c", "t::d"},
        },
    )
    kept = sorted({t for per in lines.values() for ts in per.values() for t in ts})
    candidates, rejections = slice_candidates(repo, lines, kept)
    by_id = {c.id: c for c in candidates}
    group = by_id["textkit.stats.Concordance.frequency+positions"]
    assert group.kind == "methods"
    assert group.entities == [
        ("src/textkit/stats.py", "Concordance.frequency"),
        ("src/textkit/stats.py", "Concordance.positions"),
    ]
    assert set(group.tests) >= {"t::a", "t::b"}
    # _window is shared by two groups that share no test, so it belongs to neither.
    context = by_id["textkit.stats.Concordance.context"]
    assert context.entities == [("src/textkit/stats.py", "Concordance.context")]
    assert context.public == context.entities
    # A public method another method calls is not a group of its own.
    rejected = {r.feature[1]: r.reason for r in rejections}
    assert rejected["MarkdownTable.rule"].startswith("used by other code")
    module = by_id["textkit.numbers--module"]
    assert module.kind == "module" and module.feature == ("src/textkit/numbers.py", "*")
    assert {name for _, name in module.entities} == {"ordinal", "ordinal_suffix"}
    assert {name for _, name in module.public} == {"ordinal", "ordinal_suffix"}
    assert "textkit.slug--module" not in by_id  # one public definition: its function suffices
    kinds = {c.kind for c in candidates}
    assert kinds == {"definition", "methods", "module"}


def test_slice_rejects_what_other_code_uses(repo, tmp_path):
    source = tmp_path / "r"
    shutil.copytree(repo.root, source)
    helper = source / "src" / "textkit" / "shout.py"
    helper.write_text(
        "from textkit.numbers import ordinal\n\n\ndef shout(n):\n    return ordinal(n).upper()\n"
    )
    stats = source / "src" / "textkit" / "stats.py"
    stats.write_text(stats.read_text() + "\n    locations = positions  # an alias in the body\n")
    changed = prepare(source, tmp_path / "work")
    _, rejections = slice_candidates(changed, _coverage(changed, {}), ["tests/t.py::other"])
    rejected = {r.feature: r.reason for r in rejections}
    assert rejected[("src/textkit/numbers.py", "*")].startswith(
        "used by other code: src/textkit/shout.py:shout"
    )
    assert rejected[("src/textkit/stats.py", "Concordance.positions")] == (
        "used by other code: src/textkit/stats.py:Concordance"
    )


def test_slice_counts_attribute_uses(repo, tmp_path):
    # Definitions other code reaches as attributes: through a submodule chain
    # (`textkit.slug.slugify`), a module imported inside a function (`wrap.wrap_text`) and
    # a package re-export (`textkit.ordinal`); and a name bound by a star import.
    kept = ["tests/t.py::other"]
    before, _ = slice_candidates(repo, _coverage(repo, {}), kept)
    features = {c.feature for c in before}
    used = [
        ("src/textkit/slug.py", "slugify"),
        ("src/textkit/wrap.py", "wrap_text"),
        ("src/textkit/numbers.py", "ordinal"),
        ("src/textkit/stats.py", "top_words"),
    ]
    assert set(used) <= features
    source = tmp_path / "r"
    shutil.copytree(repo.root, source)
    (source / "src" / "textkit" / "report.py").write_text(
        "import textkit\nimport textkit.slug\nfrom textkit.stats import *\n\n\n"
        "def title(text):\n"
        "    from textkit import wrap\n\n"
        "    head = textkit.slug.slugify(text) + wrap.wrap_text(text)[0] + textkit.ordinal(1)\n"
        "    return head + str(top_words(text))\n"
    )
    changed = prepare(source, tmp_path / "work")
    after, rejections = slice_candidates(changed, _coverage(changed, {}), kept)
    rejected = {r.feature: r for r in rejections}
    for feature in used:
        assert feature not in {c.feature for c in after}
        assert rejected[feature].key == "used_by_other_code"
        assert rejected[feature].reason == "used by other code: src/textkit/report.py:title"


CLASS = '''import re  # used by the deleted methods only


class Table:
    """Rows."""

    def keep(self):
        return 1

    def gone(self):
        return re.escape(self._helper())

    def _helper(self):
        return "x"
'''


def test_delete_plant_and_stub_methods():
    out = delete_definitions(CLASS, ["Table.gone", "Table._helper"])
    assert "def keep" in out and "class Table" in out and '"""Rows."""' in out
    assert "def gone" not in out and "_helper" not in out and "import re" not in out
    only = delete_definitions(CLASS, ["Table.keep", "Table.gone", "Table._helper"])
    namespace = {}
    exec(compile(only, "m", "exec"), namespace)  # a class left with its docstring only
    assert namespace["Table"].__doc__ == "Rows."
    planted = plant_canary(CLASS, ["Table.gone"], "etude-canary-y")
    assert planted.count("etude-canary-y") == 1
    ns = {}
    exec(compile(stub(CLASS, ["Table.gone"], "none"), "m", "exec"), ns)
    assert ns["Table"]().gone() is None and ns["Table"]().keep() == 1


def test_delete_a_module_and_its_imports():
    init = (
        "from pkg import numbers\nfrom pkg.numbers import ordinal, _private\n"
        "import pkg.numbers\nfrom .numbers import ordinal_suffix\nfrom pkg.other import x\n"
        '__all__ = ["numbers", "ordinal", "x"]\n'
    )
    out = delete_definitions(init, [], imported=["ordinal", "numbers"], modules=["pkg.numbers"])
    assert "numbers" not in out and "ordinal" not in out
    assert "from pkg.other import x" in out and '"x"' in out
    compile(out, "init", "exec")


def test_slice_requires_a_covering_test(repo):
    graph = build_graph(repo)
    candidates, rejections = slice_candidates(repo, {}, ["tests/t.py::x"])
    assert not candidates
    assert {r.reason for r in rejections} >= {"no kept test runs it"}
    assert graph.definitions


FORMATS = '''"""Formats."""

import json  # used by the feature only
import os

_TABLE = {}  # registry


def register(name):
    def add(fn):
        _TABLE[name] = fn
        return fn
    return add


def feature(x):
    """Dump x."""
    return json.dumps(x)


register("feature")(feature)


def other(path):
    # a comment that must survive
    return os.path.basename(path)
'''


def test_delete_preserves_the_rest_and_removes_references():
    out = delete_definitions(FORMATS, ["feature"])
    assert "def feature" not in out and 'register("feature")' not in out
    assert "import json" not in out and "import os" in out
    assert "    # a comment that must survive\n" in out
    assert out.startswith('"""Formats."""\n')
    ast.parse(out)


def test_delete_import_aliases_and_dunder_all():
    init = (
        "from pkg.a import (\n    keep,\n    feature,\n)\nfrom pkg.b import feature as f2, x\n"
        '__all__ = ["keep", "feature", "x"]\n'
    )
    out = delete_definitions(init, [], imported=["feature"])
    assert "feature" not in out.replace("f2", "")
    assert "keep" in out and "x" in out
    compile(out, "init", "exec")


def test_canary_and_stubs_keep_code_valid():
    planted = plant_canary(FORMATS, ["feature"], "etude-canary-x")
    assert planted.count("etude-canary-x") == 1
    namespace = {}
    exec(compile(planted, "m", "exec"), namespace)
    assert namespace["feature"]([1]) == "[1]"
    for kind, expect in (("raise", NotImplementedError), ("none", None)):
        ns = {}
        exec(compile(stub(FORMATS, ["feature"], kind), "m", "exec"), ns)
        if expect is None:
            assert ns["feature"](1) is None
        else:
            with pytest.raises(expect):
                ns["feature"](1)
    ns = {}
    exec(compile(stub(FORMATS, ["feature"], "always_equal"), "m", "exec"), ns)
    assert ns["feature"](1) == "anything" and ns["feature"].__doc__ == "Dump x."


def _run(tests, collect_errors=None, timed_out=False):
    done = Completed([], 1, "", "", 1.0, "bwrap", timed_out=timed_out)
    return SuiteRun({k: Outcome(**v) for k, v in tests.items()}, collect_errors or {}, done)


def test_split_outcomes_and_flakiness():
    a = _run({"t::a": {"outcome": "passed"}, "t::b": {"outcome": "failed", "phase": "call"}})
    f2p, p2p, reason = split_outcomes(a, a, ["t::a", "t::b"])
    assert (f2p, p2p, reason) == (["t::b"], ["t::a"], None)
    b = _run({"t::a": {"outcome": "failed", "phase": "call"}, "t::b": {"outcome": "failed"}})
    assert "flaky" in split_outcomes(a, b, ["t::a", "t::b"])[2]
    assert split_outcomes(a, a, ["t::a"])[2] == "no test fails after the deletion"
    assert split_outcomes(a, a, ["t::a"])[2].key == "no_failing_test"
    # A second run of only some tests, by node id (test subsets): the other tests keep the
    # first run's outcome instead of counting as not collected.
    first = _run({"x::a": {"outcome": "passed"}, "y::b": {"outcome": "failed", "phase": "call"}})
    only_y = _run({"y::b": {"outcome": "failed", "phase": "call"}})
    kept = ["x::a", "y::b"]
    assert split_outcomes(first, only_y, kept, rerun={"y::b"}) == (["y::b"], ["x::a"], None)
    assert split_outcomes(first, only_y, kept, rerun={"x::a", "y::b"})[2].key == "flaky"
    assert split_outcomes(first, only_y, kept)[2].key == "flaky"


def test_failure_reasons():
    deleted = {"slugify", "_strip_accents"}
    ok = _run(
        {
            "t::a": {"outcome": "failed", "phase": "call", "message": "AssertionError"},
            "t::b": {
                "outcome": "failed",
                "phase": "call",
                "message": "NameError: name 'slugify' is not defined",
            },
        }
    )
    assert check_failure_reasons(ok, ["t::a", "t::b"], deleted) is None
    fixture = _run({"t::a": {"outcome": "failed", "phase": "setup", "message": "boom"}})
    assert "fails in setup" in check_failure_reasons(fixture, ["t::a"], deleted)
    other = _run(
        {
            "t::a": {
                "outcome": "failed",
                "phase": "call",
                "message": "ImportError: cannot import name 'unrelated'",
            }
        }
    )
    assert "not deleted" in check_failure_reasons(other, ["t::a"], deleted)
    hang = _run({"t::a": {"outcome": "failed", "phase": "call", "message": "Failed: Timeout >2s"}})
    assert check_failure_reasons(hang, ["t::a"], deleted)
    collected = _run({}, {"t": "ImportError: cannot import name 'slugify' from 'textkit'"})
    assert check_failure_reasons(collected, ["t::a"], deleted) is None
    assert check_collection(collected, deleted) is None
    broken = _run({}, {"t": "SyntaxError: invalid syntax"})
    assert "unrelated" in check_collection(broken, deleted)


def test_problem_statement_reveals_docs_not_code(repo):
    source = (repo.root / "src/textkit/slug.py").read_text()
    hidden = problem_statement(
        ("src/textkit/slug.py", "slugify"),
        source,
        "from textkit import slugify",
        ["tests/test_slug.py::t"],
        False,
    )
    assert "accents dropped" in hidden and "def slugify" not in hidden
    assert "_collapse_separators" not in hidden and "encode(" not in hidden
    shown = problem_statement(
        ("src/textkit/slug.py", "slugify"),
        source,
        "from textkit import slugify",
        ["tests/test_slug.py::t"],
        True,
    )
    assert "def slugify(text: str" in shown
    formats = (repo.root / "src/textkit/formats.py").read_text()
    cls = problem_statement(
        ("src/textkit/formats.py", "MarkdownTable"),
        formats,
        "from textkit.formats import MarkdownTable",
        [],
        False,
    )
    assert "class `MarkdownTable`" in cls and "`rule`" in cls and "_is_number" not in cls


def test_problem_statement_for_methods_and_modules(repo):
    stats = (repo.root / "src/textkit/stats.py").read_text()
    methods = problem_statement(
        ("src/textkit/stats.py", "Concordance.context"),
        stats,
        "from textkit.stats import Concordance",
        ["t::c"],
        True,
        kind="methods",
        public=["Concordance.context", "Concordance.neighbours"],
    )
    assert "`context`, `neighbours` of the class `Concordance`" in methods
    assert "def context(self, word: str, width: int = 2)" in methods
    assert "_window" not in methods and "join(" not in methods
    module = problem_statement(
        ("src/textkit/stats.py", "*"),
        stats,
        "import textkit.stats",
        ["t::c"],
        False,
        kind="module",
        public=["Concordance", "STOPWORDS", "top_words", "word_count"],
    )
    assert module.startswith("Implement the module `textkit.stats` in `src/textkit/stats.py`")
    assert "Word statistics." in module and "STOPWORDS = frozenset(" in module
    assert "The class `Concordance`" in module and "- `positions`: Where" in module
    assert "Counter(" not in module and "def " not in module


def test_pristine_copy_is_independent(repo, tmp_path):
    assert repo.root.is_dir() and repo.root != EXAMPLE
    shutil.copytree(repo.root, tmp_path / "c")
    assert (tmp_path / "c" / "src/textkit/slug.py").read_text() == (
        EXAMPLE / "src/textkit/slug.py"
    ).read_text()


def test_publish_removes_duplicate_features(tmp_path):
    from etude.synth.pipeline import _publish

    records = []
    for name, key in (("a", "same"), ("b", "same"), ("c", "other")):
        staged = tmp_path / "staged" / f"repo__{name}"
        staged.mkdir(parents=True)
        (staged / "task.json").write_text("{}")
        records.append(
            {
                "candidate": name,
                "status": "valid",
                "dedupe_key": key,
                "task_dir": str(staged),
                "wall_s": 1.0,
                "cpu_s": 1.0,
            }
        )
    state = {
        "repo": {"name": "repo", "revision": "r"},
        "kept": [],
        "dropped": {},
        "candidates": [{}] * 3,
        "slice_rejections": [],
        "seconds": 0.0,
        "cpu_seconds": 0.0,
    }
    (tmp_path / "tasks").mkdir()
    summary = _publish(state, records, tmp_path / "tasks")
    assert summary["tasks"] == ["repo__a", "repo__c"] and summary["valid"] == 2
    assert summary["rejections"] == {"duplicate": 1}
    assert sorted(p.name for p in (tmp_path / "tasks").iterdir()) == ["repo__a", "repo__c"]
    # A rerun finding an incomplete staging directory (an interrupted reprocessing) keeps
    # the published task.
    incomplete = tmp_path / "staged" / "repo__a"
    (incomplete / "hidden").mkdir(parents=True)
    summary = _publish(state, records, tmp_path / "tasks")
    assert summary["tasks"] == ["repo__a", "repo__c"]
    assert (tmp_path / "tasks" / "repo__a" / "task.json").exists()


def test_git_repository_revision_and_history_are_kept(tmp_path):
    from etude.synth.scrub import git

    source = tmp_path / "src-repo"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("__pycache__"))
    git(source, "init", "--quiet")
    git(source, "add", "--all")
    git(source, "commit", "--quiet", "-m", "first")
    head = git(source, "rev-parse", "HEAD").strip()
    repo = prepare(source, tmp_path / "work")
    assert repo.revision == f"git:{head}"
    assert (repo.root / ".git").is_dir()  # history travels with the copy; scrub replaces it


def test_fraction_leaves_out_tests_every_stub_passes():
    run = _run(
        {
            "t::imports_only": {"outcome": "passed"},
            "t::feature": {"outcome": "failed", "phase": "call"},
            "t::other": {"outcome": "passed"},
        }
    )
    f2p, p2p = ["t::imports_only", "t::feature"], ["t::other"]
    assert score(run, f2p, p2p)["fraction"] == 0.5
    counted = score(run, f2p, p2p, stub_passing=["t::imports_only"])
    assert counted["fraction"] == 0.0 and counted["fail_to_pass_counted"] == 1
    assert counted["fail_to_pass_passed"] == 1 and counted["binary"] == 0
    # Only stub-passing tests listed: there is nothing else to count, so all of them count.
    assert score(run, ["t::imports_only"], p2p, stub_passing=["t::imports_only"])["fraction"] == 1


SIBLINGS = '''
class JsonCodec:
    def encode(self, value):
        """Serialize `value`."""
        parts = []
        for key, item in sorted(value.items()):
            parts.append(f"{key}={item!r}")  # one pair per key
        return ";".join(parts)


class TextCodec:
    def encode(self, value):
        parts = []
        for key, item in sorted(value.items()):
            parts.append(f"{key}:{item!r}")
        return "|".join(parts)

    def decode(self, text):
        return dict(part.split(":", 1) for part in text.split("|") if part)
'''


def test_near_copy_of_a_sibling_class():
    # Deleting JsonCodec leaves TextCodec.encode, the same code but for its literals.
    deleted = similarity.units(SIBLINGS, {"JsonCodec"})
    remaining = similarity.units(SIBLINGS, {"TextCodec"})
    share, copies = similarity.near_copy(deleted, remaining, 0.9)
    assert share == 1.0 and copies == ["JsonCodec.encode ~ TextCodec.encode (1.00)"]
    # Code that only shares its shape is no copy.
    decode_only = [u for u in remaining if u.name == "TextCodec.decode"]
    assert similarity.near_copy(deleted, decode_only, 0.9) == (0.0, [])


def _exhaustive_best(unit, others):
    ratios = [
        (difflib.SequenceMatcher(None, unit.tokens, o.tokens, autojunk=False).ratio(), o.name)
        for o in others
    ]
    return max(ratios, key=lambda r: r[0], default=(0.0, ""))


@pytest.mark.parametrize("threshold", [0.4, 0.9])
def test_near_copy_pruning_decides_as_comparing_every_pair(threshold):
    # best_match skips pairs whose upper bounds cannot reach the threshold; on real code
    # (etude's own rewriting modules against its slicer) every decision and reported
    # ratio equals comparing every pair in full.
    synth = Path(__file__).parents[1] / "etude" / "synth"
    deleted = similarity.units((synth / "delete.py").read_text())
    remaining = similarity.units((synth / "slice.py").read_text()) + deleted[::3]
    copies, share_tokens = [], 0
    for unit in deleted:
        ratio, name = _exhaustive_best(unit, remaining)
        if ratio >= threshold:
            share_tokens += len(unit.tokens)
            copies.append(f"{unit.name} ~ {name} ({ratio:.2f})")
    total = sum(len(u.tokens) for u in deleted)
    assert copies  # a third of the deleted units also remain: copies at any threshold
    assert similarity.near_copy(deleted, remaining, threshold) == (share_tokens / total, copies)


def test_files_the_install_generates_are_kept(tmp_path):
    # A build backend such as setuptools_scm writes `_version.py` into the package when
    # installing; candidates import their copy of the pristine tree, so it must be there.
    repo = prepare(EXAMPLE, tmp_path / "work")
    installed = tmp_path / "installed"
    shutil.copytree(repo.root, installed)
    (installed / "src/textkit/_version.py").write_text("version = '0.3.0'\n")
    (installed / "src/textkit/__pycache__").mkdir()
    (installed / "src/textkit/__pycache__/slug.cpython-311.pyc").write_bytes(b"")
    keep_generated_sources(repo, installed)
    assert (repo.root / "src/textkit/_version.py").read_text() == "version = '0.3.0'\n"
    assert not (repo.root / "src/textkit/__pycache__").exists()


AFFECTED_TESTS = {
    "tests/test_a.py": """
from pkg import feature

def test_one():
    assert feature
""",
    "tests/test_b.py": """
import pytest
import pkg


class TestBase:
    def test_inherited(self):
        assert pkg.feature(1)


class TestChild(TestBase):
    pass


def test_other():
    assert pkg.other(1)


def test_feature():
    assert pkg.feature(2)


@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    assert pkg.other(x)
""",
}


def _affected(tmp_path, support_text, ran_feature):
    from etude.synth.affected import affected_tests
    from etude.synth.discover import Repo

    for rel, text in {**AFFECTED_TESTS, "tests/conftest.py": support_text}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    repo = Repo(
        "r", "r", "0", tmp_path, "", ["pkg"], [], list(AFFECTED_TESTS), ["tests/conftest.py"], []
    )
    kept = ["tests/test_a.py::test_one"] + [
        f"tests/test_b.py::{name}"
        for name in (
            "TestBase::test_inherited",
            "TestChild::test_inherited",
            "test_other",
            "test_feature",
            "test_param[1]",
            "test_param[2]",
        )
    ]
    return affected_tests(repo, kept, ran_feature, {"feature"})


def test_affected_tests_are_those_running_or_naming_the_deleted_code(tmp_path):
    found = _affected(tmp_path, "", ["tests/test_b.py::test_other"])
    assert found == {
        "tests/test_a.py::test_one",  # the file imports a deleted name at module level
        "tests/test_b.py::TestBase::test_inherited",  # its definition names it
        "tests/test_b.py::TestChild::test_inherited",  # through the class it derives from
        "tests/test_b.py::test_feature",
        "tests/test_b.py::test_other",  # ran the feature at the baseline
    }
    # A conftest (or test helper) naming a deleted name: every test may change.
    assert len(_affected(tmp_path, "import pkg.feature\n", [])) == 7


def test_affected_segments_equal_ast_source_segments():
    # Module-level statements are cut from lines split once, exactly as
    # ast.get_source_segment cuts them: CRLF and CR line ends, a form feed (no line break
    # for ast), non-ASCII text before a column, statements sharing a line, comments.
    from etude.synth.affected import _AST_LINE, _segment

    source = (
        'x = 1  # feature\r\ny = (\r\n  "é", 2,\r\n)  # tail\rz = "ü"; w = 4\n'
        "\x0cq = [\n    1]\nimport os\n\ndef f():\n    return 1\n"
    )
    tree = ast.parse(source)
    lines = _AST_LINE.findall(source)
    assert [_segment(lines, node) for node in tree.body] == [
        ast.get_source_segment(source, node) for node in tree.body
    ]


def test_a_long_list_of_tests_is_cut_to_those_naming_the_feature_and_a_count_per_file():
    """A feature every test imports fails hundreds of tests: the statement names the ones
    about the feature first, up to the limit, and counts the rest per file; a short list is
    shown whole."""
    many = [f"pkg/tests/test_a.py::test_{i}" for i in range(20)]
    many += [f"pkg/tests/test_b.py::test_{i}" for i in range(5)] + ["pkg/tests/t.py::test_raises"]
    lines = listed_tests(many, "pkg.utils.raises", limit=4)
    assert lines[0] == "- pkg/tests/t.py::test_raises"
    assert lines[1:4] == [f"- pkg/tests/test_a.py::test_{i}" for i in range(3)]
    assert lines[4] == "- and 22 more: 17 in pkg/tests/test_a.py, 5 in pkg/tests/test_b.py"
    assert listed_tests(many[:4], "raises", limit=4) == [f"- {t}" for t in many[:4]]
    statement = problem_statement(
        ("src/textkit/stats.py", "top_words"),
        "def top_words(text):\n    return []\n",
        "from textkit.stats import top_words",
        many,
        False,
    )
    assert statement.count("\n- ") == MAX_LISTED_TESTS + 1 and "- and 14 more: " in statement
