"""Rule-based hint detectors. Each is a callable `detector(traj) -> list[Hint]` with a
`name`; `detect_all` runs several and keeps the first hint per (turn, category)."""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from etude.rl.feedback.hints import Hint
from etude.rl.trajectory import Message, Trajectory

Detector = Callable[[Trajectory], list[Hint]]
NOT_FOUND = re.compile(r"tool not found|unknown tool|no such tool", re.IGNORECASE)
INVALID_ARGS = re.compile(r"invalid arguments|missing argument|unexpected argument", re.IGNORECASE)


def _calls(traj: Trajectory) -> Iterable[tuple[int, dict, str | None]]:
    """(assistant turn, call, the tool's reply or None) for every tool call, in order."""
    replies = {
        m.get("tool_call_id"): m.get("content") or ""
        for m in traj.messages
        if m.get("role") == "tool"
    }
    for i, m in enumerate(traj.messages):
        if m.get("role") == "assistant":
            for call in m.get("tool_calls") or []:
                yield i, call, replies.get(call.get("id"))


def _describe_tools(traj: Trajectory) -> str:
    parts = []
    for t in traj.tools or []:
        fn = t["function"]
        desc = fn.get("description")
        parts.append(f"{desc}={fn['name']}" if desc else fn["name"])
    return " ".join(parts)


def suggest_tool(traj: Trajectory, turn: int, called: str) -> str | None:
    """The offered tool that turn `turn` most likely meant, as "did you mean" names it: one
    whose description the turn's text names as a word (ToolGrid's `mul=wib` means the tool
    described as mul: "mul=pav"), else the offered name closest to `called` (difflib), else
    None."""
    content = traj.messages[turn].get("content") or ""
    for t in traj.tools or []:
        fn = t["function"]
        desc = fn.get("description")
        if desc and re.search(rf"(?<!\w){re.escape(desc)}(?!\w)", content):
            return f"{desc}={fn['name']}"
    close = difflib.get_close_matches(called, traj.tool_names, n=1)
    return close[0] if close else None


def not_found_text(called: str, available: str, suggestion: str | None = None) -> str:
    """The tool-not-found hint (ToolGrid's demonstrations use the same words); a
    `suggestion` from `suggest_tool` ends it."""
    text = f"Note: {called} does not exist. Available tools: {available}"
    return f"{text}. Did you mean {suggestion}?" if suggestion else text


def invalid_arguments_text(tool: str, problem: str, fields: str) -> str:
    """The invalid-arguments hint (ToolGrid's demonstrations use the same words)."""
    return f"Note: {tool} call has {problem}; it takes {{{fields}}}"


@dataclass
class ToolNotFoundDetector:
    """A call to a tool the agent was not offered (or that the environment rejected as not
    found): hint with the available tools and, when one fits, the tool it probably meant."""

    name: str = "tool_not_found"

    def __call__(self, traj: Trajectory) -> list[Hint]:
        available = set(traj.tool_names)
        hints = []
        for turn, call, reply in _calls(traj):
            called = call["function"]["name"]
            if (traj.tools is not None and called not in available) or (
                reply is not None and NOT_FOUND.search(reply)
            ):
                suggestion = suggest_tool(traj, turn, called)
                text = not_found_text(called, _describe_tools(traj), suggestion)
                hints.append(Hint(turn, text, "tool_not_found", self.name))
        return hints


def _argument_problem(args: str, schema: dict | None) -> str | None:
    try:
        parsed = json.loads(args) if isinstance(args, str) else args
    except json.JSONDecodeError:
        return "arguments are not valid JSON"
    if not isinstance(parsed, dict):
        return "arguments must be a JSON object"
    if not schema:
        return None
    props = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in parsed]
    extra = [k for k in parsed if props and k not in props]
    if missing:
        return f"missing {', '.join(missing)}"
    if extra:
        return f"unexpected {', '.join(extra)}"
    return None


@dataclass
class InvalidArgumentsDetector:
    """Arguments that are not JSON, miss required fields or add unknown ones (checked against
    the tool's JSON schema), or that the tool rejected."""

    name: str = "invalid_arguments"

    def __call__(self, traj: Trajectory) -> list[Hint]:
        schemas = {t["function"]["name"]: t["function"].get("parameters") for t in traj.tools or []}
        hints = []
        for turn, call, reply in _calls(traj):
            fn = call["function"]
            if traj.tools is not None and fn["name"] not in schemas:
                continue  # the tool-not-found detector's case
            problem = _argument_problem(fn.get("arguments", ""), schemas.get(fn["name"]))
            if problem is None and reply is not None and INVALID_ARGS.search(reply):
                problem = reply.strip()
            if problem:
                params = schemas.get(fn["name"]) or {}
                fields = ", ".join(params.get("properties", {}))
                text = invalid_arguments_text(fn["name"], problem, fields)
                hints.append(Hint(turn, text, "invalid_arguments", self.name))
        return hints


@dataclass
class RepeatedCallDetector:
    """The same tool with the same arguments called again: the agent already has the result."""

    name: str = "repeated_call"

    def __call__(self, traj: Trajectory) -> list[Hint]:
        seen: dict[tuple[str, str], str | None] = {}
        hints = []
        for turn, call, reply in _calls(traj):
            fn = call["function"]
            key = (fn["name"], str(fn.get("arguments")))
            if key in seen:
                text = (
                    f"Note: you already called {fn['name']} with these arguments; "
                    f"it returned: {seen[key]}"
                )
                hints.append(Hint(turn, text, "repeated_call", self.name))
            else:
                seen[key] = reply
        return hints


def ruff_findings(source: str, filename: str = "snippet.py") -> list[str]:
    """`ruff check` messages (`CODE message`) for Python `source`; needs ruff installed."""
    # the ruff next to this interpreter (a virtualenv's) when it is not on PATH
    exe = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    if exe is None:
        raise FileNotFoundError("ruff is not installed; the style detector needs it")
    out = subprocess.run(
        [exe, "check", "--isolated", "--output-format", "json", "--stdin-filename", filename, "-"],
        input=source,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return [f"{d['code']} {d['message']}" for d in json.loads(out.stdout or "[]")]


@dataclass
class StyleDetector:
    """Python the agent wrote through a file-writing tool (`path` ending .py and `content`
    arguments) that ruff flags."""

    name: str = "style"
    write_tools: tuple[str, ...] = ("write_file", "create_file", "edit_file")
    max_findings: int = 3

    def __call__(self, traj: Trajectory) -> list[Hint]:
        hints = []
        for turn, call, _ in _calls(traj):
            fn = call["function"]
            if fn["name"] not in self.write_tools:
                continue
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                continue
            path, content = str(args.get("path", "")), args.get("content")
            if not path.endswith(".py") or not isinstance(content, str):
                continue
            findings = ruff_findings(content, path)
            if findings:
                text = f"Note: ruff reports in {path}: " + "; ".join(findings[: self.max_findings])
                hints.append(Hint(turn, text, "style", self.name))
        return hints


@dataclass
class CommunicationDetector:
    """Final answers that are empty, or rambling: longer than `max_chars` or repeating lines."""

    name: str = "communication"
    max_chars: int = 2000

    def __call__(self, traj: Trajectory) -> list[Hint]:
        hints = []
        for i, m in enumerate(traj.messages):
            if m.get("role") != "assistant" or m.get("tool_calls"):
                continue
            text = (m.get("content") or "").strip()
            lines = [ln for ln in text.splitlines() if ln.strip()]
            if not text:
                hints.append(
                    Hint(
                        i,
                        "Note: answer the request; do not reply empty.",
                        "communication",
                        self.name,
                    )
                )
            elif len(text) > self.max_chars or len(lines) - len(set(lines)) >= 3:
                hints.append(
                    Hint(
                        i,
                        "Note: answer briefly and do not repeat yourself.",
                        "communication",
                        self.name,
                    )
                )
        return hints


@dataclass
class EffortDetector:
    """Far more or fewer assistant turns than the task needed (`metadata['expected_turns']`):
    more than `factor`× → hint at the first turn past the budget; fewer than 1/`factor`× on
    a failed trajectory → hint at the last turn."""

    name: str = "effort"
    factor: float = 2.0

    def __call__(self, traj: Trajectory) -> list[Hint]:
        expected = (traj.metadata or {}).get("expected_turns")
        if not expected:
            return []
        turns = assistant_turns(traj.messages)
        if len(turns) > self.factor * expected:
            budget = int(self.factor * expected)
            text = f"Note: this task needs about {expected} steps; finish now."
            return [Hint(turns[budget], text, "effort", self.name)]
        if turns and len(turns) * self.factor < expected and not traj.reward:
            text = f"Note: the task is not done; it needs about {expected} steps."
            return [Hint(turns[-1], text, "effort", self.name)]
        return []


DETECTORS: dict[str, Callable[[], Detector]] = {
    "tool_not_found": ToolNotFoundDetector,
    "invalid_arguments": InvalidArgumentsDetector,
    "repeated_call": RepeatedCallDetector,
    "style": StyleDetector,
    "communication": CommunicationDetector,
    "effort": EffortDetector,
}


def detect_all(traj: Trajectory, detectors: Iterable[Detector]) -> list[Hint]:
    """Every detector's hints, keeping the first per (turn, category), sorted by turn."""
    out: dict[tuple[int, str], Hint] = {}
    for detector in detectors:
        for h in detector(traj):
            out.setdefault((h.turn, h.category), h)
    return sorted(out.values(), key=lambda h: h.turn)


def assistant_turns(messages: list[Message]) -> list[int]:
    """Indices of the assistant messages."""
    return [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
