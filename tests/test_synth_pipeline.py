"""The whole pipeline on the example repository that ships with etude: tasks pass every
check, the grader scores the reference 1 and the untouched workspace 0, edits to tests or
test configuration do not count, and a rerun resumes where it stopped (locally and on a
local Ray instance)."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from etude.synth.demo import EXAMPLE_REPO
from etude.synth.errors import SynthError
from etude.synth.grade import grade, solved_workspace
from etude.synth.pipeline import synthesize
from etude.synth.scrub import ARTIFACT_DIRS

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
    assert repo["not_processed"] == 8
    assert "used by other code" in repo["rejections"]  # underscore() is used by humanize()
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
        deleted = json.loads((task_dir / "task.json").read_text())["deleted"]
        for entry in deleted:
            assert f"def {entry['name']}(" not in (ws / entry["file"]).read_text()
            assert f"class {entry['name']}" not in (ws / entry["file"]).read_text()


@pytest.fixture(scope="module")
def graded_task(synth):
    out, _ = synth
    return _tasks(out)[0]


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


def test_grade_refuses_a_modified_hidden_store(graded_task, tmp_path):
    copy = tmp_path / "task"
    shutil.copytree(graded_task, copy)
    test_file = next((copy / "hidden" / "tests").rglob("test_*.py"))
    test_file.write_text("def test_nothing():\n    pass\n")
    with pytest.raises(SynthError, match=r"hidden store .* was modified"):
        grade(copy, copy / "workspace")


def _resume(out, executor, max_candidates):
    results = out / "work" / "example_repo" / "results"
    before = {p.name: p.stat().st_mtime_ns for p in results.iterdir()}
    summary = synthesize(
        [EXAMPLE_REPO], out, workers=2, executor=executor, max_candidates=max_candidates
    )
    after = {p.name: p.stat().st_mtime_ns for p in results.iterdir()}
    assert all(after[name] == mtime for name, mtime in before.items())  # not redone
    assert len(after) == max_candidates == len(before) + 1
    (repo,) = summary["repositories"]
    assert repo["candidates"] == max_candidates == repo["valid"], repo["rejected"]


def test_rerun_resumes(synth):
    _resume(synth[0], "local", 3)


def test_ray_executor_on_a_local_instance(synth):
    ray = pytest.importorskip("ray")
    try:
        _resume(synth[0], "ray", 4)
    finally:
        ray.shutdown()
