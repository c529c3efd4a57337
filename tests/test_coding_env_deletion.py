"""The deletion-mode seed recipe: a (scripted) model deletes a named feature in the coding
environment; a clean deletion becomes a task in the pipeline's format, sloppy ones are
rejected with the reason."""

import json
from pathlib import Path

import pytest
from test_coding_env import ScriptedBackend, assistant, call, example_tasks

from etude.envs.coding import EnvSettings
from etude.envs.deletion import model_deletion
from etude.synth.delete import delete_definitions
from etude.synth.demo import EXAMPLE_REPO
from etude.synth.task import load_task, verify_hidden

FEATURE = ("src/textkit/slug.py", "slugify")
HELPERS = {"slugify", "_strip_accents", "_collapse_separators", "_SEPARATOR_RUN"}
FAST = EnvSettings(python_env=False)


def _deleted(rel: str, names=HELPERS) -> str:
    text = (EXAMPLE_REPO / rel).read_text()
    return delete_definitions(text, names if rel == FEATURE[0] else set(), imported={"slugify"})


def _writes(files: dict[str, str]) -> ScriptedBackend:
    calls = [call("write_file", path=rel, content=text) for rel, text in files.items()]
    return ScriptedBackend([assistant(*calls), assistant(content="Deleted slugify.")])


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("deletion")


@pytest.mark.slow
def test_clean_model_deletion_becomes_a_task(out):
    files = {rel: _deleted(rel) for rel in (FEATURE[0], "src/textkit/__init__.py")}
    record = model_deletion(EXAMPLE_REPO, FEATURE, _writes(files), out, env_settings=FAST)
    assert record["status"] == "valid", record.get("reason")
    task_dir = Path(record["task"])
    task = load_task(task_dir)
    verify_hidden(task_dir, task)
    assert {"slugify", "_strip_accents"} <= {d["name"] for d in task["deleted"]}
    assert "slugify" not in (task_dir / "workspace" / FEATURE[0]).read_text()
    programmatic = json.loads((example_tasks()[0] / "task.json").read_text())
    assert set(task) == set(programmatic)  # the same format as the pipeline's own tasks
    line = json.loads((out / "deletions.jsonl").read_text().splitlines()[-1])
    assert line["status"] == "valid" and line["episode"]["messages"][2]["tool_calls"]


@pytest.mark.slow
def test_sloppy_deletions_are_rejected_with_the_reason(out):
    keeps_import = {FEATURE[0]: _deleted(FEATURE[0])}  # __init__ still imports slugify
    touches_tests = {
        FEATURE[0]: _deleted(FEATURE[0]),
        "src/textkit/__init__.py": _deleted("src/textkit/__init__.py"),
        "tests/test_slug.py": "",
    }
    cases = {
        "is not just the deletion": keeps_import,
        "changed files other than package source": touches_tests,
        "changed no source file": {},
    }
    for reason, files in cases.items():
        record = model_deletion(EXAMPLE_REPO, FEATURE, _writes(files), out, env_settings=FAST)
        assert record["status"] == "rejected" and reason in record["reason"], record
    lines = (out / "deletions.jsonl").read_text().splitlines()
    assert len(lines) >= 3  # every attempt is recorded
