"""The whole pipeline on the example repository that ships with etude: tasks of every kind
(whole modules, functions and classes, method groups) pass every check, the grader scores
the reference 1 and the untouched workspace 0, an always-equal answer fails equality-only
tests, edits to tests or test configuration do not count, and a rerun resumes where it
stopped (locally and on a local Ray instance)."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from etude.synth import EXAMPLE_REPO
from etude.synth.candidate import Settings, process
from etude.synth.errors import SynthError
from etude.synth.executor import map_unordered
from etude.synth.grade import grade, solved_workspace
from etude.synth.pipeline import candidate_job, chosen, synthesize
from etude.synth.scrub import ARTIFACT_DIRS
from etude.synth.tamper import TAMPERS, stub_answer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    summary = synthesize([EXAMPLE_REPO], out, workers=2, max_candidates=2)
    return out, summary


def _tasks(out):
    return sorted(p for p in (out / "tasks").iterdir() if (p / "task.json").exists())


def test_example_repository_yields_valid_tasks(synth):
    out, summary = synth
    (repo,) = summary["repositories"]
    assert repo["candidates"] == 2 and repo["valid"] == 2, repo["rejected"]
    assert repo["candidates_by_kind"] == {"module": 5, "definition": 12, "methods": 2}
    assert repo["not_processed"] == 17
    # Hardest first, kinds in turn: slugify(), then the whole of stats.py.
    assert repo["valid_by_kind"] == {"definition": 1, "module": 1}
    # underscore() is used by humanize(): sliced out, never processed, counted apart.
    assert repo["sliced_out_by_reason"]["used_by_other_code"] >= 1
    assert repo["rejections"] == {}
    assert json.loads((out / "summary.json").read_text()) == summary
    assert len(_tasks(out)) == 2


def test_task_manifest_and_checks(synth):
    out, _ = synth
    for task_dir in _tasks(out):
        task = json.loads((task_dir / "task.json").read_text())
        tests = task["tests"]
        assert tests["fail_to_pass"] and tests["pass_to_pass"]
        assert not set(tests["fail_to_pass"]) & set(tests["pass_to_pass"])
        assert task["validation"]["reference"] == {"fraction": 1.0, "binary": 1}
        for kind in ("stub_raise", "stub_none", "stub_always_equal"):
            assert task["validation"][kind]["binary"] == 0
        assert task["audit"]["findings"] == [] and task["audit"]["tokens"] > 1
        assert len(task["oracle_tokens"]) == task["audit"]["tokens"]
        assert any(t.startswith("etude-canary-") for t in task["oracle_tokens"])
        assert task["source"]["revision"].startswith("tree:")
        assert task["limits"]["slow_test_s"] == 5.0
        assert task["equality_guard"]["plugin"] == "etude_equality_guard"
        assert task["equality_guard"]["targets"]
        name = task["deleted"][0]["name"]
        assert f"`{name}`" in task["problem_statement"]
        reference = (task_dir / "hidden" / "reference").rglob("*.py")
        body = "".join(p.read_text() for p in reference)
        # The statement comes from docstrings: no line of the implementation is in it.
        code_lines = [ln.strip() for ln in body.splitlines() if ln.strip().startswith("return ")]
        assert not any(ln in task["problem_statement"] for ln in code_lines)
        for rel in tests["hidden_files"]:
            assert not (task_dir / "workspace" / rel).exists()
            assert (task_dir / "hidden" / "tests" / rel).exists()


def test_workspace_is_scrubbed(synth):
    out, _ = synth
    for task_dir in _tasks(out):
        ws = task_dir / "workspace"
        for dirpath, dirnames, filenames in os.walk(ws):
            rel = Path(dirpath).relative_to(ws)
            if rel.parts[:1] == (".git",):
                continue
            assert not set(dirnames) & (ARTIFACT_DIRS - {".git"}), dirpath
            assert not [f for f in filenames if f.endswith(".pyc")]
        assert not list(ws.rglob("*.egg-info"))
        log = subprocess.run(
            ["git", "log", "--all", "--format=%s"], cwd=ws, capture_output=True, text=True
        ).stdout
        assert log.splitlines() == ["Task workspace"]
        assert not (ws / ".git" / "logs").exists()
        task = json.loads((task_dir / "task.json").read_text())
        for entry in task["deleted"]:
            if task["feature_kind"] == "module":
                assert not (ws / entry["file"]).exists()
                continue
            name = entry["name"].split(".")[-1]
            assert f"def {name}(" not in (ws / entry["file"]).read_text()
            assert f"class {name}" not in (ws / entry["file"]).read_text()
        if task["feature_kind"] == "module":
            module = task["deleted"][0]["name"]
            init = (ws / "src" / "textkit" / "__init__.py").read_text()
            assert module not in init and task["deleted"][0]["kind"] == "module"


@pytest.fixture(scope="module")
def graded_task(synth):
    """The whole-module task (stats.py): its solution is a file the workspace lacks."""
    out, _ = synth
    return next(t for t in _tasks(out) if t.name.endswith("--module"))


def test_grade_reference_scores_one(graded_task, tmp_path):
    result = grade(graded_task, solved_workspace(graded_task, tmp_path / "solved"))
    assert result["fraction"] == 1.0 and result["binary"] == 1
    assert all(t["outcome"] == "passed" for t in result["tests"].values())


def test_grade_untouched_scores_zero(graded_task):
    result = grade(graded_task, graded_task / "workspace")
    assert result["fraction"] == 0.0 and result["binary"] == 0


def test_grade_ignores_tampering_with_tests_and_config(graded_task, tmp_path):
    ws = tmp_path / "tampered"
    shutil.copytree(graded_task / "workspace", ws)
    # A conftest that turns every failure into a pass, a pytest.ini that loads it from
    # elsewhere, a sitecustomize, and a rewritten copy of the hidden test files.
    hook = (
        "import pytest\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n"
    )
    (ws / "conftest.py").write_text(hook)
    (ws / "tests" / "conftest.py").write_text(hook)
    (ws / "pytest.ini").write_text("[pytest]\naddopts = -p no:etude_outcomes\n")
    (ws / "src" / "sitecustomize.py").write_text("raise SystemExit(0)\n")
    task = json.loads((graded_task / "task.json").read_text())
    for rel in task["tests"]["hidden_files"]:
        (ws / rel).write_text("def test_nothing():\n    pass\n")
    result = grade(graded_task, ws)
    assert result["fraction"] == 0.0 and result["binary"] == 0


def test_grade_scores_zero_when_the_workspace_does_not_install(graded_task, monkeypatch):
    # A setup.py that imports the package fails to install a workspace lacking it: a
    # reward of 0, not a grader error.
    def failing_install(*args, **kwargs):
        raise SynthError("installing workspace failed: No module named 'textkit'")

    monkeypatch.setattr("etude.synth.grade.env.create", failing_install)
    result = grade(graded_task, graded_task / "workspace")
    assert result["fraction"] == 0.0 and result["binary"] == 0
    assert result["note"].startswith("the workspace does not install")
    assert all(t["outcome"] == "failed" for t in result["tests"].values())


def test_grade_refuses_a_modified_hidden_store(graded_task, tmp_path):
    copy = tmp_path / "task"
    shutil.copytree(graded_task, copy)
    test_file = next((copy / "hidden" / "tests").rglob("test_*.py"))
    test_file.write_text("def test_nothing():\n    pass\n")
    with pytest.raises(SynthError, match=r"hidden store .* was modified"):
        grade(copy, copy / "workspace")


def _resume(synth, tmp_path, executor):
    """Resume a copy of the module's run (so that each test stands alone) with one more
    candidate: the stored ones are not redone, the new one is processed."""
    out = tmp_path / "out"
    shutil.copytree(synth[0], out, symlinks=True)
    results = out / "work" / "example_repo" / "results"
    before = {p.name: p.stat().st_mtime_ns for p in results.iterdir()}
    assert len(before) == synth[1]["repositories"][0]["candidates"] == 2
    summary = synthesize([EXAMPLE_REPO], out, workers=2, executor=executor, max_candidates=3)
    after = {p.name: p.stat().st_mtime_ns for p in results.iterdir()}
    assert all(after[name] == mtime for name, mtime in before.items())  # not redone
    assert len(after) == 3
    (repo,) = summary["repositories"]
    assert repo["candidates"] == 3 == repo["valid"], repo["rejected"]
    # Hardest first, kinds in turn: the third candidate is the method group.
    assert repo["valid_by_kind"] == {"definition": 1, "module": 1, "methods": 1}


def test_chosen_keeps_the_order_among_candidates_short_enough():
    cands = [{"id": i, "lines": n} for i, n in enumerate([90, 12, 40, 41, 5])]
    assert [c["id"] for c in chosen(cands, 2, 40)] == [1, 2]  # 90 and 41 lines: too long
    assert [c["id"] for c in chosen(cands, None, 40)] == [1, 2, 4]
    assert [c["id"] for c in chosen(cands, 2, None)] == [0, 1]
    assert chosen(cands, 3, 4) == []


def test_rerun_resumes(synth, tmp_path):
    _resume(synth, tmp_path, "local")


def test_ray_executor_on_a_local_instance(synth, tmp_path):
    ray = pytest.importorskip("ray")
    try:
        _resume(synth, tmp_path, "ray")
    finally:
        ray.shutdown()


# The way candidates were processed before the shared environment and test subsets (a
# fresh venv per candidate, every test file in every run, pytest's long reports): the
# `kinds` tasks use it, so both ways make valid tasks.
OWN_VENV_FULL_RUNS = Settings(
    measure_guard=True, shared_environment=False, test_subsets=False, quiet_failures=False
)


@pytest.fixture(scope="module")
def kinds(synth):
    """A method group and a function whose tests only compare with `==` (ordinal), each
    processed with the always-equal stub also scored without the equality guard, with a
    venv of their own and full test runs."""
    out, _ = synth
    work_dir = out / "work" / "example_repo"
    state = json.loads((work_dir / "repo_state.json").read_text())
    wanted = ("textkit.stats.Concordance.frequency+positions", "textkit.numbers.ordinal")
    jobs = [
        candidate_job(state, cand, work_dir, OWN_VENV_FULL_RUNS)
        for cand in state["candidates"]
        if cand["id"] in wanted
    ]
    records = {
        job.candidate["id"]: record
        for job, record in map_unordered(process, jobs, executor="local", workers=2)
    }
    assert all(r["status"] == "valid" for r in records.values()), records
    return {cid: Path(r["task_dir"]) for cid, r in records.items()}


def test_equality_only_tests_reject_an_always_equal_answer(kinds, tmp_path):
    task_dir = kinds["textkit.numbers.ordinal"]
    task = json.loads((task_dir / "task.json").read_text())
    assert task["equality_guard"]["targets"] == ["textkit.numbers:ordinal"]
    # Without the guard the always-equal stub passes every fail-to-pass test: the tests
    # only compare with `==`; with it (as validated and graded) it fails them.
    assert task["validation"]["unguarded_stub_always_equal"]["fraction"] == 1.0
    assert task["validation"]["stub_always_equal"]["binary"] == 0
    cheat = grade(task_dir, stub_answer(task_dir, tmp_path / "cheat", "always_equal"))
    assert cheat["binary"] == 0
    for test, outcome in cheat["tests"].items():
        if "test_ordinal[" in test:
            assert outcome["outcome"] == "failed"
            assert "etude equality guard" in outcome["message"]
    # Only test_ordinal_suffix (failing before because its file did not import) passes; every
    # trivial stub passes it, so the reward's fraction does not count it.
    suffix = [t for t in task["tests"]["fail_to_pass"] if t.endswith("test_ordinal_suffix")]
    assert task["tests"]["stub_passing"] == suffix and len(suffix) == 1
    assert cheat["fail_to_pass_passed"] == 1 and cheat["fraction"] == 0.0
    assert cheat["fail_to_pass_counted"] == len(task["tests"]["fail_to_pass"]) - 1
    solved = grade(task_dir, solved_workspace(task_dir, tmp_path / "solved"))
    assert solved["fraction"] == 1.0 and solved["binary"] == 1


def _copy_of_work_dir(synth, tmp_path: Path) -> Path:
    """A copy of the example repository's work directory, so that the shared `synth` run's
    tasks are not staged over."""
    work_dir = tmp_path / "work"
    shutil.copytree(
        synth[0] / "work" / "example_repo",
        work_dir,
        symlinks=True,
        ignore=shutil.ignore_patterns("staged", "cands"),
    )
    return work_dir


def test_both_ways_split_the_tests_alike(synth, kinds, tmp_path):
    """The pipeline's way (shared venv, test subsets, no failure reports where only pass or
    fail counts) makes the task the old way made of the same candidate: the same test lists
    and validation scores."""
    old = json.loads((kinds["textkit.numbers.ordinal"] / "task.json").read_text())
    work_dir = _copy_of_work_dir(synth, tmp_path)
    state = json.loads((work_dir / "repo_state.json").read_text())
    (cand,) = [c for c in state["candidates"] if c["id"] == "textkit.numbers.ordinal"]
    record = process(candidate_job(state, cand, work_dir, Settings(measure_guard=True)))
    assert record["status"] == "valid", record
    assert "venv" not in record["phases"]  # the shared environment was used
    new = json.loads((Path(record["task_dir"]) / "task.json").read_text())
    assert new["tests"] == old["tests"]
    assert new["validation"] == old["validation"]


def test_a_task_whose_workspace_would_not_install_is_rejected(synth, tmp_path):
    """As xmltodict 0.14.2's module task: a setup.py that imports the deleted module. The
    shared venv never reinstalls the workspace, so only the build check sees it."""
    work_dir = _copy_of_work_dir(synth, tmp_path)
    state = json.loads((work_dir / "repo_state.json").read_text())
    state["repo"]["root"] = str(work_dir / "pristine")
    setup = 'import sys\nsys.path.insert(0, "src")\nimport textkit.stats\n'
    setup += "from setuptools import setup\nsetup()\n"
    (work_dir / "pristine" / "setup.py").write_text(setup)
    (cand,) = [c for c in state["candidates"] if c["id"] == "textkit.stats--module"]
    record = process(candidate_job(state, cand, work_dir, Settings()))
    assert record["status"] == "rejected" and record["reason_key"] == "does_not_install", record
    assert record["reason"] == (
        "the workspace no longer installs: ModuleNotFoundError: No module named 'textkit.stats'"
    )


def test_method_group_task(kinds, tmp_path):
    task_dir = kinds["textkit.stats.Concordance.frequency+positions"]
    task = json.loads((task_dir / "task.json").read_text())
    assert task["feature_kind"] == "methods"
    assert [e["name"] for e in task["deleted"]] == [
        "Concordance.frequency",
        "Concordance.positions",
    ]
    assert sorted(task["tests"]["fail_to_pass"]) == [
        "tests/test_stats.py::test_concordance_frequency_of_a_missing_word",
        "tests/test_stats.py::test_concordance_positions_and_frequency",
        "tests/test_stats.py::test_concordance_positions_ignore_case",
    ]
    assert len(task["tests"]["discriminating"]) == 3
    source = (task_dir / "workspace" / "src" / "textkit" / "stats.py").read_text()
    assert "class Concordance" in source and "def context(" in source
    assert "def positions(" not in source and "def frequency(" not in source
    assert "`frequency`, `positions` of the class `Concordance`" in task["problem_statement"]
    for kind in ("stub_raise", "stub_none", "stub_always_equal"):
        assert task["validation"][kind]["binary"] == 0
    assert task["validation"]["unguarded_stub_always_equal"]["fraction"] == 1.0
    assert grade(task_dir, task_dir / "workspace")["binary"] == 0
    solved = grade(task_dir, solved_workspace(task_dir, tmp_path / "solved"))
    assert solved["fraction"] == 1.0 and solved["binary"] == 1


# The tamper corpus (etude/synth/tamper.py): each case adds one way a workspace could try
# to change how its tests are collected, run or reported, on top of a stub answer (every
# deleted definition raises NotImplementedError). Graded for real through `etude grade`'s
# code path, none may score more than the stub alone. Before the grader pinned pytest's
# configuration, plugins and path, 8 of these scored 1.0 (.pytest.ini, pytest.toml, the
# three nested configuration files, the entry point and both shadowing modules).


@pytest.fixture(scope="module")
def stubbed(synth, tmp_path_factory):
    """The slugify task, a stub answer to it and the stub's grade."""
    out, _ = synth
    task_dir = next(t for t in _tasks(out) if not t.name.endswith("--module"))
    answer = stub_answer(task_dir, tmp_path_factory.mktemp("stub") / "ws", "raise")
    return task_dir, answer, grade(task_dir, answer)


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_tampering_scores_no_more_than_the_stub(stubbed, tamper, tmp_path):
    task_dir, answer, alone = stubbed
    ws = tmp_path / "ws"
    shutil.copytree(answer, ws)
    TAMPERS[tamper].apply(ws, task_dir)
    tampered = grade(task_dir, ws)
    assert tampered["fraction"] <= alone["fraction"] and tampered["binary"] <= alone["binary"]
    assert tampered["fail_to_pass_passed"] <= alone["fail_to_pass_passed"], tampered["tests"]
