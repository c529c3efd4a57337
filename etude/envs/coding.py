"""The coding environment: an agent's tools over one task workspace, each run in the sandbox.

Tools (OpenAI function specs in `TOOLS`): `read_file`, `write_file`, `edit_file`,
`list_files`, `search_files` (run by `workspace_ops.py` inside `etude.sandbox`) and
`run_command` (bash inside `etude.sandbox`: no network, only the workspace writable, time,
memory and output limits; the task directory with its hidden tests is hidden). A call to a
tool that does not exist returns "Tool not found: NAME"; arguments that are not a JSON object
or do not fit the tool return "Invalid arguments: ..." (the wording the hint detectors
recognize). Neither ends the episode: the policy sees the error and goes on.

An episode ends on a final answer (an assistant message without tool calls), the turn
budget, the token budget (tokens generated) or the wall-clock budget. Its trajectory is one
JSON object in the trajectory format (etude.rl.trajectory): `messages`, `tools`, `task_id`, `patch`
(unified diff of the workspace against the task's), plus `id`, `end` and `error`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from etude.envs.workspace_ops import MAX_READ_LINES
from etude.rl.trajectory import Message
from etude.sandbox import Limits, run
from etude.serving.backends import UNPARSED
from etude.synth import env as synth_env
from etude.synth.grade import IGNORED_ON_COPY
from etude.synth.scrub import ARTIFACT_DIRS
from etude.synth.task import load_task, verify_hidden

OPS_SCRIPT = Path(__file__).with_name("workspace_ops.py")
TOOL_NOT_FOUND = "Tool not found"
INVALID_ARGUMENTS = "Invalid arguments"
# how every reply to a call the environment refused to run begins (nothing was run)
REJECTED_PREFIXES = (TOOL_NOT_FOUND, INVALID_ARGUMENTS)
_EXIT_STATUS = re.compile(r"\[exit code (-?\d+)\]\s*$")  # how run_command's reply ends


def _spec(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_STR, _INT = {"type": "string"}, {"type": "integer"}
TOOLS: list[dict] = [
    _spec(
        "read_file",
        f"Show a file of the workspace with line numbers, at most {MAX_READ_LINES} lines a "
        "call (optionally lines start..end).",
        {"path": _STR, "start_line": _INT, "end_line": _INT},
        ["path"],
    ),
    _spec("write_file", "Create or overwrite a file.", {"path": _STR, "content": _STR}, ["path"]),
    _spec(
        "edit_file",
        "Replace the one occurrence of `old` in a file by `new`.",
        {"path": _STR, "old": _STR, "new": _STR},
        ["path", "old", "new"],
    ),
    _spec("list_files", "List the files under a directory.", {"path": _STR}, []),
    _spec(
        "search_files",
        "Search files for a regular expression; prints path:line: text.",
        {"pattern": _STR, "path": _STR},
        ["pattern"],
    ),
    _spec(
        "run_command",
        "Run a bash command in the workspace (no network; python and pytest available).",
        {"command": _STR},
        ["command"],
    ),
]
_OPS = {
    "read_file": "read",
    "write_file": "write",
    "edit_file": "edit",
    "list_files": "list",
    "search_files": "search",
}
_REQUIRED = {t["function"]["name"]: t["function"]["parameters"]["required"] for t in TOOLS}
_ALLOWED = {t["function"]["name"]: set(t["function"]["parameters"]["properties"]) for t in TOOLS}


def command_exit_code(reply: str) -> int | None:
    """The exit status that a `run_command` reply ends with; None for a command that was
    killed (time or output limit) or a reply of another tool."""
    found = _EXIT_STATUS.search(reply)
    return int(found.group(1)) if found else None


SYSTEM_PROMPT = """You are a coding agent working in a Python repository (your working \
directory). Use the tools to read and change files and to run commands. To call a tool, write
<tool_call>{"name": "TOOL", "arguments": {...}}</tool_call>
Tools: read_file(path, start_line?, end_line?), write_file(path, content), \
edit_file(path, old, new), list_files(path?), search_files(pattern, path?), run_command(command).
When you are done, answer with a short summary and no tool call."""


@dataclass(frozen=True)
class EnvSettings:
    """Limits of one episode's tools. `python_env`: build a venv per episode with the
    task's pinned requirements and the workspace installed editable, so `run_command` can
    run python and pytest (about a second with uv's cache)."""

    command_timeout_s: float = 30.0
    tool_timeout_s: float = 20.0
    memory_bytes: int = 2 << 30
    max_output_chars: int = 4000
    python_env: bool = True


@dataclass(frozen=True)
class Budget:
    """When an episode stops if the policy has not answered."""

    max_turns: int = 8
    max_tokens: int = 2048
    wall_s: float = 300.0


class CodingEnv:
    """One episode's workspace and tools. The workspace is a fresh copy of `source` under
    `episode_dir` (`episode_dir/workspace`; the venv, if any, in `episode_dir/venv`)."""

    def __init__(
        self,
        source: Path,
        episode_dir: Path,
        prompt: str,
        *,
        task_id: str,
        hidden: Sequence[Path] = (),
        requirements: list[str] | None = None,
        settings: EnvSettings = EnvSettings(),
    ) -> None:
        self.source = Path(source).resolve()
        self.episode_dir = Path(episode_dir).resolve()
        self.prompt, self.task_id, self.settings = prompt, task_id, settings
        self.hidden = [Path(p).resolve() for p in hidden]
        self.workspace = self.episode_dir / "workspace"
        self.venv: Path | None = None
        if self.workspace.exists():
            raise FileExistsError(f"episode directory {self.episode_dir} is already in use")
        self.episode_dir.mkdir(parents=True, exist_ok=True)
        shutil.copytree(
            self.source,
            self.workspace,
            symlinks=True,
            ignore=shutil.ignore_patterns(*IGNORED_ON_COPY),
        )
        if settings.python_env:
            self.venv = self.episode_dir / "venv"
            synth_env.create(self.workspace, self.venv, requirements=requirements)

    @classmethod
    def for_task(
        cls,
        task_dir: Path,
        episode_dir: Path,
        settings: EnvSettings = EnvSettings(),
    ) -> CodingEnv:
        """The environment of a synthesized task; raises SynthError if `task_dir` is not a
        complete task or its hidden store was modified."""
        task_dir = Path(task_dir).resolve()
        task = load_task(task_dir)
        verify_hidden(task_dir, task)
        requirements = (task_dir / "hidden" / "requirements.txt").read_text().split()
        return cls(
            task_dir / "workspace",
            episode_dir,
            task["problem_statement"],
            task_id=task["id"],
            hidden=[task_dir],
            requirements=requirements,
            settings=settings,
        )

    def initial_messages(self) -> list[Message]:
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": self.prompt},
        ]

    def call(self, name: str, arguments: str | dict) -> str:
        """Run one tool call; returns what the policy sees (output or error text)."""
        if name == UNPARSED:
            return (
                f"{INVALID_ARGUMENTS}: the tool call is not valid JSON: {str(arguments)[:200]!r}; "
                'write <tool_call>{"name": "TOOL", "arguments": {...}}</tool_call>'
            )
        if name not in _REQUIRED:
            return f"{TOOL_NOT_FOUND}: {name}"
        args = _decode_arguments(arguments)
        if isinstance(args, str):
            return f"{INVALID_ARGUMENTS} for {name}: {args}"
        missing = [k for k in _REQUIRED[name] if k not in args]
        unexpected = sorted(set(args) - _ALLOWED[name])
        if missing or unexpected:
            parts = [f"missing argument {k!r}" for k in missing]
            parts += [f"unexpected argument {k!r}" for k in unexpected]
            return f"{INVALID_ARGUMENTS} for {name}: {', '.join(parts)}"
        if name == "run_command":
            return self._command(args["command"])
        return self._file_op(_OPS[name], args)

    def _limits(self, wall_s: float) -> Limits:
        cap = self.settings.max_output_chars * 4 + 4096
        return Limits(wall_s=wall_s, memory_bytes=self.settings.memory_bytes, output_bytes=cap)

    def _file_op(self, op: str, args: dict) -> str:
        done = run(
            [sys.executable, "-I", "-S", str(OPS_SCRIPT)],
            self.workspace,
            hidden=self.hidden,
            limits=self._limits(self.settings.tool_timeout_s),
            stdin=json.dumps({"op": op, "args": args}),
        )
        try:
            reply = json.loads(done.stdout)
        except json.JSONDecodeError:
            return f"Error: the tool failed ({done.describe()})"
        if not reply["ok"]:
            error = reply["error"]
            if error.startswith("invalid arguments"):
                return f"{INVALID_ARGUMENTS}: {error.removeprefix('invalid arguments: ')}"
            return f"Error: {error}"
        return self._cut(reply["output"])

    def _command(self, command: str) -> str:
        if not isinstance(command, str):
            return f"{INVALID_ARGUMENTS} for run_command: command must be a string"
        env = {}
        readonly = []
        if self.venv is not None:
            env = {
                "PATH": f"{self.venv / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                "VIRTUAL_ENV": str(self.venv),
            }
            readonly = [self.venv]
        done = run(
            ["bash", "-c", command],
            self.workspace,
            hidden=self.hidden,
            readonly=readonly,
            env=env,
            limits=self._limits(self.settings.command_timeout_s),
        )
        text = done.stdout + (f"\n[stderr]\n{done.stderr}" if done.stderr.strip() else "")
        if done.timed_out:
            status = (
                f"[killed: the command ran past the {self.settings.command_timeout_s:g} s limit]"
            )
        elif done.output_exceeded:
            status = "[killed: the command printed more than the output limit]"
        else:
            status = f"[exit code {done.returncode}]"
        return self._cut(text) + "\n" + status

    def _cut(self, text: str) -> str:
        cap = self.settings.max_output_chars
        if len(text) <= cap:
            return text
        return (
            text[: cap // 2] + f"\n... [{len(text) - cap} characters cut] ...\n" + text[-cap // 2 :]
        )

    def patch(self) -> str:
        """Unified diff of the episode's workspace against the task's."""
        return workspace_patch(self.source, self.workspace)

    def close(self, keep_workspace: bool = True) -> None:
        """Remove the venv (and the workspace unless `keep_workspace`)."""
        if self.venv is not None:
            shutil.rmtree(self.venv, ignore_errors=True)
        if not keep_workspace:
            shutil.rmtree(self.workspace, ignore_errors=True)


def _decode_arguments(arguments: str | dict) -> dict | str:
    """The arguments as a dict, or a string saying why they are not one."""
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments or "{}")
    except (json.JSONDecodeError, TypeError) as err:
        return f"not valid JSON ({err})"
    return parsed if isinstance(parsed, dict) else "not a JSON object"


def _tree_files(root: Path) -> dict[str, Path]:
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d for d in dirnames if d not in ARTIFACT_DIRS and not d.endswith(".egg-info")
        ]
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.name.endswith((".pyc", ".pyo")):
                files[path.relative_to(root).as_posix()] = path
    return files


def _lines(path: Path | None) -> list[str] | None:
    if path is None:
        return []
    try:
        return path.read_text().splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def workspace_patch(before: Path, after: Path) -> str:
    """A git-style unified diff from tree `before` to tree `after` (text files; binary
    files are named only). VCS, cache and build-metadata directories (the editable
    install's `*.egg-info`) are left out."""
    old, new = _tree_files(before), _tree_files(after)
    parts = []
    for rel in sorted(old.keys() | new.keys()):
        a, b = _lines(old.get(rel)), _lines(new.get(rel))
        if a is None or b is None:
            if (
                old.get(rel) is None
                or new.get(rel) is None
                or (old[rel].read_bytes() != new[rel].read_bytes())
            ):
                parts.append(f"diff --git a/{rel} b/{rel}\nBinary files differ\n")
            continue
        if a == b:
            continue
        header = [f"diff --git a/{rel} b/{rel}\n"]
        if rel not in old:
            header.append("new file mode 100644\n")
        if rel not in new:
            header.append("deleted file mode 100644\n")
        src = f"a/{rel}" if rel in old else "/dev/null"
        dst = f"b/{rel}" if rel in new else "/dev/null"
        diff = difflib.unified_diff(a, b, src, dst, n=3)
        parts.append("".join(header) + "".join(_ensure_newline(d) for d in diff))
    return "".join(parts)


def _ensure_newline(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


class Backend(Protocol):
    """What an episode needs from a policy: the next assistant message."""

    def complete(self, messages: list[Message], tools: list[dict]) -> tuple[Message, int]:
        """(assistant message in Chat Completions form, number of tokens generated)."""
        ...


@dataclass
class Episode:
    """One rollout. `end` is "answer", "turn_budget", "token_budget", "wall_budget" or
    "error"; `error` says what went wrong when it is "error"."""

    id: str
    task_id: str
    messages: list[Message]
    patch: str = ""
    end: str = ""
    error: str | None = None
    turns: int = 0
    tokens: int = 0
    seconds: float = 0.0
    workspace: str | None = None
    extra: dict = field(default_factory=dict)

    def to_record(self) -> dict:
        """The trajectory line (etude.rl.trajectory's format; `reward` is added once graded)."""
        return {
            "id": self.id,
            "task_id": self.task_id,
            "messages": self.messages,
            "tools": TOOLS,
            "patch": self.patch,
            "end": self.end,
            "error": self.error,
            "turns": self.turns,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 3),
            "workspace": self.workspace,
            **self.extra,
        }


def run_episode(coding_env: CodingEnv, backend: Backend, budget: Budget = Budget()) -> Episode:
    """Roll out `backend` in `coding_env` until it answers or a budget runs out. A backend
    or tool failure ends the episode with `end="error"`; what happened before is kept."""
    start = time.perf_counter()
    episode = Episode(
        id=uuid.uuid4().hex[:12],
        task_id=coding_env.task_id,
        messages=coding_env.initial_messages(),
        workspace=str(coding_env.workspace),
    )
    try:
        while True:
            if episode.turns >= budget.max_turns:
                episode.end = "turn_budget"
                break
            if episode.tokens >= budget.max_tokens:
                episode.end = "token_budget"
                break
            if time.perf_counter() - start > budget.wall_s:
                episode.end = "wall_budget"
                break
            message, generated = backend.complete(episode.messages, TOOLS)
            episode.messages.append(message)
            episode.turns += 1
            episode.tokens += generated
            calls = message.get("tool_calls") or []
            if not calls:
                episode.end = "answer"
                break
            for call in calls:
                fn = call.get("function", {})
                output = coding_env.call(fn.get("name", ""), fn.get("arguments", "{}"))
                episode.messages.append(
                    {"role": "tool", "tool_call_id": call.get("id", ""), "content": output}
                )
    except Exception as err:  # recorded, not lost: the others go on
        episode.end, episode.error = "error", f"{type(err).__name__}: {err}"
    finally:
        try:
            episode.patch = coding_env.patch()
        except OSError as err:
            episode.error = (episode.error or "") + f"; patch failed: {err}"
        episode.seconds = time.perf_counter() - start
    return episode
