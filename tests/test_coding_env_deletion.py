"""The deletion-mode seed recipe: a (scripted) model deletes a named feature in the coding
environment; a clean deletion becomes a task in the pipeline's format, sloppy ones are
rejected with the reason; the same through `etude synth-agent` with the scripted model
behind an OpenAI-compatible endpoint, and the CLI's bad input."""

import http.server
import json
import threading
from pathlib import Path

import pytest
from test_coding_env import ScriptedBackend, assistant, call, example_tasks

from etude.cli import main
from etude.envs.coding import EnvSettings
from etude.recipes.synth_agent import model_deletion
from etude.synth import EXAMPLE_REPO
from etude.synth.delete import delete_definitions
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


class ScriptedEndpoint:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 replying with fixed assistant texts:
    the scripted model behind the real HTTP client, for tests through the CLI."""

    def __init__(self, replies: list[str]) -> None:
        replies = list(replies)

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                text = replies.pop(0) if replies else "Done."
                body = json.dumps(
                    {
                        "choices": [{"message": {"role": "assistant", "content": text}}],
                        "usage": {"completion_tokens": 10},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def tool_call_text(files: dict[str, str]) -> str:
    calls = [
        {"name": "write_file", "arguments": {"path": rel, "content": text}}
        for rel, text in files.items()
    ]
    return "\n".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls)


@pytest.mark.slow
def test_synth_agent_cli_writes_a_task(tmp_path, capsys):
    """`etude synth-agent REPO FILE:NAME --backend openai --endpoint URL`: the scripted
    model's clean deletion becomes a task in the pipeline's format; a sloppy one exits 1
    with the reason, and the first task is still there."""
    files = {rel: _deleted(rel) for rel in (FEATURE[0], "src/textkit/__init__.py")}
    endpoint = ScriptedEndpoint([tool_call_text(files), "Deleted slugify."])
    out = tmp_path / "out"
    argv = ["synth-agent", str(EXAMPLE_REPO), ":".join(FEATURE), "--out", str(out)]
    try:
        assert main([*argv, "--backend", "openai", "--endpoint", endpoint.url]) == 0
    finally:
        endpoint.close()
    printed = capsys.readouterr().out
    (task_dir,) = [p for p in (out / "tasks").iterdir() if (p / "task.json").is_file()]
    assert str(task_dir) in printed
    programmatic = json.loads((example_tasks()[0] / "task.json").read_text())
    assert set(load_task(task_dir)) == set(programmatic)

    sloppy = ScriptedEndpoint([tool_call_text({FEATURE[0]: _deleted(FEATURE[0])})])
    try:
        assert main([*argv, "--backend", "openai", "--endpoint", sloppy.url]) == 1
    finally:
        sloppy.close()
    assert "rejected: " in capsys.readouterr().out
    assert (task_dir / "task.json").is_file()
    assert len((out / "deletions.jsonl").read_text().splitlines()) == 2


def test_synth_agent_cli_bad_input(tmp_path, capsys):
    out = tmp_path / "out"
    base = ["synth-agent", str(EXAMPLE_REPO)]
    cases = {
        "must be FILE:NAME": [*base, "slugify", "--out", str(out)],
        "is not a file of the repository": [*base, "src/textkit/nope.py:f", "--out", str(out)],
        "is not a directory": ["synth-agent", str(tmp_path / "missing"), "a.py:f", "--out", "x"],
        "needs --endpoint": [*base, ":".join(FEATURE), "--out", str(out), "--backend", "openai"],
    }
    for message, argv in cases.items():
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err
    assert not out.exists()  # nothing written for bad input
