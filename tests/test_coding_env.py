"""The coding environment's tools on a real task synthesized from the example repository:
the tools and their sandbox limits, the error paths the policy sees, episode budgets,
the trajectory round trip, and bad input (a task that fails validation, a sandbox that
cannot start a command, a crashing policy) recorded without stopping the other episodes."""

import atexit
import functools
import json
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from etude.envs.coding import TOOLS, Budget, CodingEnv, EnvSettings, run_episode, workspace_patch
from etude.envs.rollouts import Job, run_rollouts
from etude.envs.workspace_ops import MAX_READ_LINES
from etude.monitor import parse_line
from etude.rl.trajectory import Trajectory
from etude.sandbox import isolation
from etude.serving.backends import parse_assistant
from etude.synth import EXAMPLE_REPO
from etude.synth.pipeline import synthesize
from etude.synth.task import load_task

FAST = EnvSettings(python_env=False, command_timeout_s=5, tool_timeout_s=10)


@functools.cache
def example_tasks() -> list[Path]:
    """One task synthesized from the example repository, once per test session (the loop
    and backend tests import this)."""
    root = Path(tempfile.mkdtemp(prefix="etude-coding-tasks-"))
    atexit.register(shutil.rmtree, root, True)
    summary = synthesize([EXAMPLE_REPO], root, workers=2, max_candidates=1)
    tasks = sorted(p for p in (root / "tasks").iterdir() if (p / "task.json").exists())
    if not tasks:
        raise RuntimeError(f"no task synthesized: {summary['repositories'][0]['rejected']}")
    return tasks


def call(name: str, **args) -> dict:
    return {
        "id": f"c{time.perf_counter_ns()}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


class ScriptedBackend:
    """A policy replaying fixed assistant messages (planted behaviour); everything else
    (environment, sandbox, grader, monitor) is real."""

    def __init__(self, turns: list[dict]) -> None:
        self.turns = list(turns)

    def complete(self, messages, tools):
        message = self.turns.pop(0) if self.turns else {"role": "assistant", "content": "done"}
        return message, 10


def assistant(*calls, content=None) -> dict:
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    return message


@pytest.fixture(scope="module")
def task_dir() -> Path:
    return example_tasks()[0]


def test_tools_on_a_synthesized_task(task_dir, tmp_path):
    env = CodingEnv.for_task(task_dir, tmp_path / "ep", EnvSettings(command_timeout_s=60))
    task = load_task(task_dir)
    listing = env.call("list_files", "{}")
    assert "pyproject.toml" in listing
    for hidden in task["tests"]["hidden_files"]:  # the fail-to-pass test files are hidden
        assert hidden not in listing
    source = task["modified_files"][-1]
    assert env.call("read_file", json.dumps({"path": source, "end_line": 1})).startswith("    1  ")
    assert env.call("write_file", '{"path": "notes/new.py", "content": "X = 1\\n"}').startswith(
        "wrote"
    )
    assert "notes/new.py:1: X = 1" in env.call("search_files", '{"pattern": "^X = "}')
    long = "".join(f"x{i} = {i}\n" for i in range(1, MAX_READ_LINES + 51))
    env.call("write_file", json.dumps({"path": "notes/long.py", "content": long}))
    whole = env.call("read_file", '{"path": "notes/long.py"}').splitlines()
    assert len(whole) == MAX_READ_LINES + 1 and whole[-2].endswith(
        f"x{MAX_READ_LINES} = {MAX_READ_LINES}"
    )
    assert whole[-1] == (
        f"[lines 1-{MAX_READ_LINES} of {MAX_READ_LINES + 50} shown: at most {MAX_READ_LINES} "
        "per call; pass start_line and end_line to read more]"
    )
    last = MAX_READ_LINES + 50  # a range that fits is shown whole, without the note
    rest = env.call("read_file", json.dumps({"path": "notes/long.py", "start_line": last - 9}))
    assert len(rest.splitlines()) == 10 and rest.endswith(f"x{last} = {last}")
    past = env.call("read_file", json.dumps({"path": "notes/new.py", "start_line": 347}))
    assert past == "Error: notes/new.py ends at line 1; start_line 347 is past it", past
    env.call("write_file", '{"path": "notes/empty.py", "content": ""}')
    assert env.call("read_file", '{"path": "notes/empty.py"}') == "[notes/empty.py is empty]"
    assert env.call("edit_file", '{"path": "notes/new.py", "old": "X = 1", "new": "X = 2"}') == (
        "edited notes/new.py"
    )
    assert "occurs 0 times" in env.call(
        "edit_file", '{"path": "notes/new.py", "old": "nope", "new": "x"}'
    )
    assert env.call("write_file", '{"path": "../escape.py", "content": ""}').startswith("Error:")
    assert not (tmp_path / "ep" / "escape.py").exists()
    # the episode's venv has the project installed editable and pytest
    out = env.call("run_command", json.dumps({"command": "python -m pytest --version && pwd"}))
    assert out.endswith("[exit code 0]") and str(env.workspace) in out, out
    assert env.call("run_command", json.dumps({"command": f"ls {task_dir / 'hidden'}"})).endswith(
        "[exit code 2]"
    )
    patch = env.patch()
    assert "diff --git a/notes/new.py b/notes/new.py" in patch and "+X = 2" in patch
    assert "egg-info" not in patch  # the editable install's metadata is not the agent's work
    env.close()
    assert not (tmp_path / "ep" / "venv").exists() and env.workspace.is_dir()


def test_sandbox_limits(task_dir, tmp_path):
    env = CodingEnv.for_task(
        task_dir,
        tmp_path / "ep",
        EnvSettings(python_env=False, command_timeout_s=2, memory_bytes=512 << 20),
    )
    start = time.perf_counter()
    assert "ran past the 2 s limit" in env.call("run_command", '{"command": "sleep 30"}')
    assert time.perf_counter() - start < 15
    flood = env.call("run_command", '{"command": "yes | head -c 50000000"}')
    assert len(flood) < 6000 and ("characters cut" in flood or "output limit" in flood)
    memory = env.call("run_command", json.dumps({"command": "python3 -c 'b = bytearray(2 << 30)'"}))
    assert "MemoryError" in memory and "[exit code 1]" in memory
    outside = env.call("run_command", '{"command": "touch /usr/etude-escape"}')
    assert "[exit code 1]" in outside and not Path("/usr/etude-escape").exists()
    if isolation() != "none":
        net = env.call(
            "run_command",
            json.dumps(
                {
                    "command": 'python3 -c "import socket; '
                    "socket.create_connection(('1.1.1.1', 443), timeout=3)\""
                }
            ),
        )
        assert "[exit code 1]" in net and ("OSError" in net or "unreachable" in net), net


def test_unknown_tool_and_bad_arguments_are_errors_the_policy_sees(task_dir, tmp_path):
    env = CodingEnv.for_task(task_dir, tmp_path / "ep", FAST)
    assert env.call("frobnicate", "{}") == "Tool not found: frobnicate"
    assert env.call("read_file", "{not json").startswith("Invalid arguments for read_file: not")
    assert env.call("read_file", "[1, 2]") == "Invalid arguments for read_file: not a JSON object"
    assert env.call("read_file", '{"file": "x"}') == (
        "Invalid arguments for read_file: missing argument 'path', unexpected argument 'file'"
    )
    assert env.call("read_file", '{"path": "nope.py"}') == "Error: nope.py is not a file"
    assert env.call("run_command", '{"command": 3}').startswith("Invalid arguments")


def test_episode_ends_and_trajectory_round_trip(task_dir, tmp_path):
    env = CodingEnv.for_task(task_dir, tmp_path / "ep", FAST)
    backend = ScriptedBackend(
        [
            assistant(call("list_files")),
            assistant(call("nope"), call("write_file", path="extra.py", content="A = 1\n")),
            assistant(content="I added extra.py."),
        ]
    )
    episode = run_episode(env, backend, Budget(max_turns=5))
    assert episode.end == "answer" and episode.turns == 3 and episode.tokens == 30
    roles = [m["role"] for m in episode.messages]
    expected = ["system", "user", "assistant", "tool", "assistant", "tool", "tool"]
    assert roles == [*expected, "assistant"]
    assert episode.messages[5]["content"] == "Tool not found: nope"
    record = json.loads(json.dumps(episode.to_record()))
    assert record["tools"] == TOOLS and "+A = 1" in record["patch"]
    again = Trajectory.from_dict(record)
    assert again.messages == episode.messages and again.task_id == load_task(task_dir)["id"]
    parsed = parse_line(json.dumps(record), 1)  # the monitor reads the same line
    assert not parsed.problems and parsed.patch == record["patch"]
    assert parsed.messages[2].tool_calls[0].name == "list_files"

    looping = ScriptedBackend([assistant(call("list_files")) for _ in range(10)])
    env2 = CodingEnv.for_task(task_dir, tmp_path / "ep2", FAST)
    assert run_episode(env2, looping, Budget(max_turns=3)).end == "turn_budget"
    env3 = CodingEnv.for_task(task_dir, tmp_path / "ep3", FAST)
    looping = ScriptedBackend([assistant(call("list_files")) for _ in range(10)])
    assert run_episode(env3, looping, Budget(max_tokens=25)).end == "token_budget"


def test_unparsable_tool_calls_get_an_error_and_the_episode_goes_on(task_dir, tmp_path):
    env = CodingEnv.for_task(task_dir, tmp_path / "ep", FAST)
    turns = [
        parse_assistant('<tool_call>{"name": "read_file", "arguments": {path: x}}</tool_call>'),
        parse_assistant("<tool_call>read the file please"),
        parse_assistant("Giving up."),
    ]
    episode = run_episode(env, ScriptedBackend(turns), Budget(max_turns=5))
    assert episode.end == "answer" and episode.turns == 3
    replies = [m["content"] for m in episode.messages if m["role"] == "tool"]
    assert replies[0].startswith("Invalid arguments for read_file: not valid JSON")
    assert replies[1].startswith("Invalid arguments: the tool call is not valid JSON")


class CrashingBackend:
    def complete(self, messages, tools):
        raise RuntimeError("the policy process died")


def test_bad_input_is_recorded_and_the_rest_goes_on(task_dir, tmp_path):
    broken = tmp_path / "broken-task"
    shutil.copytree(task_dir, broken)
    next((broken / "hidden").rglob("*.py")).write_text("tampered\n")  # fails verify_hidden
    missing = tmp_path / "not-a-task"
    missing.mkdir()
    jobs = [
        Job(broken, tmp_path / "eps" / "a", 0),
        Job(missing, tmp_path / "eps" / "b", 1),
        Job(task_dir, tmp_path / "eps" / "c", 2),
    ]
    out = tmp_path / "rollouts.jsonl"
    backend = ScriptedBackend([assistant(content="done")])
    results = run_rollouts(jobs, backend, out, settings=FAST, concurrency=2)
    ends = [e.end for _, e in results]
    assert ends == ["error", "error", "answer"], [e.error for _, e in results]
    assert "hidden store" in results[0][1].error and "was modified" in results[0][1].error
    assert "no task.json" in results[1][1].error
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["group"] for r in lines) == [0, 1, 2]

    # a crashing policy: the episode is recorded with its error, the next one still runs
    out2 = tmp_path / "rollouts2.jsonl"
    out2.write_text('{"earlier": "line"}\n')  # already written: must survive
    jobs2 = [Job(task_dir, tmp_path / "eps2" / "a", 0)]
    (crashed,) = run_rollouts(jobs2, CrashingBackend(), out2, settings=FAST)
    assert crashed[1].end == "error" and "the policy process died" in crashed[1].error
    assert crashed[1].messages[1]["role"] == "user"  # what came before the crash is kept
    assert out2.read_text().startswith('{"earlier": "line"}\n')
    assert len(out2.read_text().splitlines()) == 2


def test_a_sandbox_that_cannot_start_gives_a_clear_error(task_dir, tmp_path):
    # 1 MiB of address space: not even the sandbox (bwrap) can load its libraries
    env = CodingEnv.for_task(
        task_dir, tmp_path / "ep", EnvSettings(python_env=False, memory_bytes=1 << 20)
    )
    reply = env.call("read_file", '{"path": "pyproject.toml"}')
    assert reply.startswith("Error: the tool failed (exit code 127"), reply
    assert "error while loading shared libraries" in reply
    command = env.call("run_command", '{"command": "ls"}')
    assert "error while loading shared libraries" in command and "[exit code 127]" in command
    episode = run_episode(
        env, ScriptedBackend([assistant(call("list_files")), assistant(content="ok")])
    )
    assert episode.end == "answer" and episode.messages[3]["content"].startswith("Error:")


def test_workspace_patch_covers_new_changed_and_deleted_files(tmp_path):
    before, after = tmp_path / "a", tmp_path / "b"
    for root in (before, after):
        (root / "pkg").mkdir(parents=True)
    (before / "pkg" / "same.py").write_text("x = 1\n")
    (after / "pkg" / "same.py").write_text("x = 1\n")
    (before / "pkg" / "gone.py").write_text("y = 1\n")
    (before / "pkg" / "mod.py").write_text("z = 1\n")
    (after / "pkg" / "mod.py").write_text("z = 2")
    (after / "pkg" / "new.py").write_text("w = 1\n")
    (after / "pkg" / "__pycache__").mkdir()
    (after / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0\1")
    patch = workspace_patch(before, after)
    assert "same.py" not in patch and "__pycache__" not in patch
    assert "deleted file mode" in patch and "--- a/pkg/gone.py\n+++ /dev/null" in patch
    assert "new file mode" in patch and "--- /dev/null\n+++ b/pkg/new.py" in patch
    assert "+z = 2\n\\ No newline at end of file" in patch
