"""Streaming reader of the project's trajectory format for the monitor.

One JSON object per line, read by the format's own reader (`etude.rl.trajectory`, the
message view: the token view under `"sample"` is neither needed nor checked): `messages`
(OpenAI Chat Completions messages: `role`, `content`, assistant `tool_calls` with
`function.name` and JSON-string `function.arguments`, tool messages with `tool_call_id`)
plus optional `id`, `task_id`, `reward`, `patch`, `label`. The record is the one
`etude.rl.trajectory.Trajectory`; what this module builds from it is the monitor's scanned
view, named so: a `ScannedTrajectory` (the record's fields the rules use, its line, its input
problems) of `ScannedMessage`s (text, decoded tool calls).

Bad input never stops the file: each problem (malformed JSON, a line that is not a
trajectory, unknown roles, unparsable tool arguments, oversized lines or contents) becomes an
`InputProblem` naming the line, and reading goes on with the next message or line. Lines are
read one at a time with a length cap, so memory does not grow with the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from etude.rl import trajectory as rl_trajectory

KNOWN_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
MAX_LINE_BYTES = 64 * 1024 * 1024
# Contents longer than this keep their head and tail: evidence is usually near either end.
MAX_CONTENT_CHARS = 256 * 1024


@dataclass(frozen=True)
class InputProblem:
    """Something wrong in the input; `message_index` is None for whole-line problems."""

    line: int
    message: str
    message_index: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}"
        if self.message_index is not None:
            where += f", message {self.message_index}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class ToolCall:
    """An assistant tool call. `arguments` is the decoded JSON object, or None when the
    string did not decode (then `raw_arguments` is all there is)."""

    id: str
    name: str
    arguments: dict | None
    raw_arguments: str


@dataclass(frozen=True)
class ScannedMessage:
    """One message of a record as the rules scan it: content as text, tool calls decoded."""

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def text(self) -> str:
        """Content plus tool calls, string arguments unescaped (what evidence is cut from)."""
        parts = [self.content] if self.content else []
        for call in self.tool_calls:
            if call.arguments is None:
                parts.append(f"<{call.name}> {call.raw_arguments}")
                continue
            parts.append(f"<{call.name}>")
            for key, value in call.arguments.items():
                shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                parts.append(f"{key}: {shown}")
        return "\n".join(parts)


@dataclass
class ScannedTrajectory:
    """One line of the file as the rules scan it. `messages` keeps the original indexing (a
    dropped malformed message leaves an empty `ScannedMessage` in its slot) so message indices
    match the file."""

    id: str
    line: int
    messages: list[ScannedMessage]
    task_id: str | None = None
    patch: str | None = None
    reward: float | None = None
    label: dict | None = None
    problems: list[InputProblem] = field(default_factory=list)


def read_trajectories(path: Path) -> Iterator[ScannedTrajectory | InputProblem]:
    """Yield each line of `path` as a ScannedTrajectory, or an InputProblem when it is not one.

    Raises FileNotFoundError (with the path) if the file does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"trajectory file not found: {path}")
    with path.open("rb") as f:
        line_no = 0
        while True:
            raw = f.readline(MAX_LINE_BYTES)
            if not raw:
                return
            line_no += 1
            if len(raw) == MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while (chunk := f.readline(MAX_LINE_BYTES)) and not chunk.endswith(b"\n"):
                    pass
                yield InputProblem(line_no, f"line longer than {MAX_LINE_BYTES} bytes; skipped")
                continue
            if not raw.strip():
                continue
            yield parse_line(raw, line_no)


def parse_line(raw: bytes | str, line_no: int) -> ScannedTrajectory | InputProblem:
    """Decode one JSON line into a ScannedTrajectory, or say why it is not one. The record is read
    by the shared reader (`etude.rl.trajectory.Trajectory.from_dict`, message view only:
    no token ids needed); this module turns its messages into what the rules scan."""
    try:
        obj = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        return InputProblem(line_no, f"malformed JSON: {err}")
    if isinstance(obj, list):
        obj = {"messages": obj}
    if not isinstance(obj, dict):
        return InputProblem(line_no, f"expected a JSON object, got {type(obj).__name__}")
    try:
        record = rl_trajectory.Trajectory.from_dict(obj, for_training=False)
    except rl_trajectory.TrajectoryFormatError:
        return InputProblem(line_no, "no 'messages' list")
    problems: list[InputProblem] = []
    messages = [_message(m, i, line_no, problems) for i, m in enumerate(record.messages)]
    extra = record.metadata or {}
    patch, label = extra.get("patch"), extra.get("label")
    return ScannedTrajectory(
        id=str(extra.get("id") or extra.get("trajectory_id") or f"line-{line_no}"),
        line=line_no,
        messages=messages,
        task_id=str(record.task_id) if record.task_id is not None else None,
        patch=patch if isinstance(patch, str) else None,
        reward=float(record.reward) if isinstance(record.reward, int | float) else None,
        label=label if isinstance(label, dict) else None,
        problems=problems,
    )


def _message(m: object, index: int, line_no: int, problems: list[InputProblem]) -> ScannedMessage:
    if not isinstance(m, dict):
        problems.append(InputProblem(line_no, "message is not an object; ignored", index))
        return ScannedMessage(role="invalid", content="")
    role = m.get("role")
    if role not in KNOWN_ROLES:
        problems.append(InputProblem(line_no, f"unknown role {role!r}; ignored", index))
        return ScannedMessage(role="invalid", content="")
    content = _text(m.get("content"))
    if len(content) > MAX_CONTENT_CHARS:
        problems.append(
            InputProblem(
                line_no,
                f"content of {len(content)} characters kept as its first and last "
                f"{MAX_CONTENT_CHARS // 2}",
                index,
            )
        )
        half = MAX_CONTENT_CHARS // 2
        content = content[:half] + "\n[… truncated by etude monitor …]\n" + content[-half:]
    calls = tuple(_tool_calls(m.get("tool_calls"), index, line_no, problems))
    if role == "function" and m.get("name"):  # legacy function-result messages
        role = "tool"
    call_id = m.get("tool_call_id")
    return ScannedMessage(role, content, calls, str(call_id) if call_id is not None else None)


def _text(content: object) -> str:
    """Message content as text: strings as is, content-part lists joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(p for p in parts if isinstance(p, str))
    return json.dumps(content)


def _tool_calls(
    raw: object, index: int, line_no: int, problems: list[InputProblem]
) -> Iterator[ToolCall]:
    if raw is None:
        return
    if not isinstance(raw, list):
        problems.append(InputProblem(line_no, "tool_calls is not a list; ignored", index))
        return
    for n, call in enumerate(raw):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            problems.append(InputProblem(line_no, f"tool call {n} has no function name", index))
            continue
        raw_args = fn.get("arguments", "")
        if isinstance(raw_args, dict):  # some writers store the object, not the string
            args, raw_args = raw_args, json.dumps(raw_args)
        else:
            raw_args = raw_args if isinstance(raw_args, str) else json.dumps(raw_args)
            try:
                args = json.loads(raw_args) if raw_args.strip() else {}
            except json.JSONDecodeError as err:
                problems.append(
                    InputProblem(
                        line_no,
                        f"tool call {fn['name']!r} has unparsable arguments ({err}); "
                        "scanned as raw text",
                        index,
                    )
                )
                args = None
            if args is not None and not isinstance(args, dict):
                args = {"input": args}
        yield ToolCall(str(call.get("id") or f"call-{index}-{n}"), fn["name"], args, raw_args)
