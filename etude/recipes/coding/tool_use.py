"""How an episode used its tools: whether its first turn calls a known tool with valid
arguments, and its failed calls by kind, read from the trajectory's calls and the
environment's replies (the wording `etude.envs.coding` writes and the hint detectors of
`etude.rl.feedback.detectors` recognize).

Kinds of failed call:
    tool_not_found      a tool that was not offered ("Tool not found: NAME")
    invalid_arguments   arguments that are not a JSON object or do not fit the tool, or a
                        <tool_call> block that is not JSON ("Invalid arguments ...")
    command_failed      run_command exited non-zero, or printed past the output limit
    command_timeout     run_command ran past its time limit
    tool_failed         a file tool refused (a missing file, a path outside the workspace)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from etude.envs.coding import command_exit_code
from etude.rl.feedback.detectors import INVALID_ARGS, NOT_FOUND
from etude.serving.backends import UNPARSED

ERROR_KINDS = (
    "tool_not_found",
    "invalid_arguments",
    "command_failed",
    "command_timeout",
    "tool_failed",
)
_TIMEOUT = re.compile(r"\[killed: the command ran past .* limit\]\s*$")
_KILLED = re.compile(r"\[killed: .*\]\s*$")


def call_error(name: str, reply: str | None, tools: Iterable[str]) -> str | None:
    """The kind of failure (one of ERROR_KINDS) of a call to tool `name` that got `reply`,
    or None when it ran. `tools`: the offered tool names."""
    if name == UNPARSED:
        return "invalid_arguments"
    reply = reply or ""
    if name not in set(tools) or NOT_FOUND.search(reply):
        return "tool_not_found"
    if INVALID_ARGS.search(reply):
        return "invalid_arguments"
    if name == "run_command":
        if _TIMEOUT.search(reply):
            return "command_timeout"
        if _KILLED.search(reply) or command_exit_code(reply) not in (0, None):
            return "command_failed"
        return None
    return "tool_failed" if reply.startswith("Error:") else None


def _calls(messages: list[dict]) -> list[tuple[int, str, str | None]]:
    """(message index of the assistant turn, tool name, the reply or None) per call."""
    replies = {m.get("tool_call_id"): m.get("content") for m in messages if m["role"] == "tool"}
    return [
        (i, call.get("function", {}).get("name", ""), replies.get(call.get("id")))
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
    ]


def tool_errors(record: dict) -> Counter:
    """Failed calls of one episode (a trajectory record: `messages`, `tools`) by kind."""
    names = [t["function"]["name"] for t in record.get("tools") or []]
    kinds = (call_error(name, reply, names) for _, name, reply in _calls(record["messages"]))
    return Counter(k for k in kinds if k is not None)


def first_turn_calls_a_tool(record: dict) -> bool | None:
    """Whether the episode's first assistant turn calls a tool, and every call of that turn
    names an offered tool with arguments it accepts; None when the policy never spoke."""
    messages = record["messages"]
    first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), None)
    if first is None:
        return None
    names = [t["function"]["name"] for t in record.get("tools") or []]
    calls = [(name, reply) for i, name, reply in _calls(messages) if i == first]
    return bool(calls) and all(
        call_error(name, reply, names) not in ("tool_not_found", "invalid_arguments")
        for name, reply in calls
    )


def tool_use(records: list[dict]) -> dict:
    """Over episodes (trajectory records): `tool_call_rate`, the share of first turns that
    call a known tool with valid arguments (episodes where the policy never spoke left out;
    None when there is none), and `tool_errors`, failed calls by kind (every kind listed)."""
    firsts = [f for f in map(first_turn_calls_a_tool, records) if f is not None]
    errors = sum((tool_errors(r) for r in records), Counter())
    return {
        "tool_call_rate": sum(firsts) / len(firsts) if firsts else None,
        "tool_errors": {kind: errors[kind] for kind in ERROR_KINDS},
    }
