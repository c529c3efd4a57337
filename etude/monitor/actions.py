"""Turn assistant tool calls into `Action`s the rules understand, paired with their outputs.

Agents' tools differ by harness (a `bash` tool with `command`, an `execute` tool with `cmd`,
`str_replace_based_edit_tool`, `read_file`/`write_file`, `apply_patch`, a Python tool with
`code`, edit tools with a list of edits or SEARCH/REPLACE blocks), so the kind of an action
is read from the tool's name and its argument keys, not from a fixed schema. A call whose
arguments did not decode keeps its raw text, scanned as a shell command if the tool looks
like a shell and as plain text otherwise.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from etude.monitor.trajectory import ScannedMessage, ToolCall

PATH_KEYS = ("path", "file_path", "filepath", "filePath", "filename", "file", "target_file")
PATH_KEYS += ("relative_path", "absolute_path", "target")
CONTENT_KEYS = ("content", "file_text", "contents", "new_content", "text", "data")
COMMAND_KEYS = ("command", "cmd", "script", "shell_command", "commands")
EDITOR_COMMANDS = frozenset({"view", "create", "str_replace", "insert", "undo_edit", "write"})
_SHELLISH = re.compile(r"bash|shell|terminal|exec|run|command|cmd|sh$|console|computer", re.I)
_NAME_KINDS = (
    (re.compile(r"patch", re.I), "patch"),
    (re.compile(r"python|ipython|jupyter|notebook", re.I), "python"),
    (re.compile(r"delete|remove|unlink", re.I), "delete"),
    (re.compile(r"write|create|save|overwrite", re.I), "write"),
    (re.compile(r"edit|replace|insert|modify|update", re.I), "edit"),
    (re.compile(r"grep|search|find", re.I), "search"),
    (re.compile(r"list|^ls$|dir", re.I), "list"),
    (re.compile(r"read|view|open|cat|show|get_file|head|tail", re.I), "read"),
)


_PYTHON_TOOL = re.compile(r"python|ipython|jupyter|notebook", re.I)
_NEW_KEYS = ("new_str", "new_string", "new_text", "newText", "new", "replacement", "code_edit")
_NEW_KEYS += CONTENT_KEYS
_OLD_KEYS = ("old_str", "old_string", "old_text", "oldText", "old", "search", "find")
_SEARCH_REPLACE = re.compile(r"^<{5,} SEARCH\n(.*?)^={5,}\n(.*?)^>{5,} REPLACE", re.M | re.S)


def _edit_list(edits: object) -> tuple[str, str] | None:
    """(old, new) texts of a list of edits (`[{"old_string": ..., "new_string": ...}]`)."""
    if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits) or not edits:
        return None
    old = "\n".join(_first(e, _OLD_KEYS) or "" for e in edits)
    return old, "\n".join(_first(e, _NEW_KEYS) or "" for e in edits)


def _search_replace(diff: object) -> tuple[str | None, str | None]:
    """(old, new) texts of `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` blocks."""
    blocks = _SEARCH_REPLACE.findall(diff) if isinstance(diff, str) else []
    if not blocks:
        return None, None
    return "\n".join(b[0] for b in blocks), "\n".join(b[1] for b in blocks)


@dataclass(frozen=True)
class Action:
    """One tool call in normalized form.

    kind: shell | python | read | write | edit | delete | search | list | patch | other.
    `text` is the command, code, written content, new text of an edit, search pattern or
    patch; `old_text` the replaced text of an edit; `output` the tool's reply ("" if none).
    `index` is the assistant message's index, `output_index` the tool message's (or None).
    """

    index: int
    tool: str
    kind: str
    text: str
    path: str | None = None
    old_text: str = ""
    output: str = ""
    output_index: int | None = None
    cwd: str | None = None


def extract_actions(messages: list[ScannedMessage]) -> list[Action]:
    """All tool calls of `messages` as Actions, in order, each with its output attached."""
    outputs: dict[str, tuple[int, str]] = {}
    unmatched: list[tuple[int, str]] = []
    for i, m in enumerate(messages):
        if m.role == "tool":
            if m.tool_call_id is not None:
                outputs[m.tool_call_id] = (i, m.content)
            else:
                unmatched.append((i, m.content))
    actions = []
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        for call in m.tool_calls:
            out_index, output = outputs.get(call.id, (None, ""))
            if out_index is None and unmatched and unmatched[0][0] > i:
                out_index, output = unmatched.pop(0)
            actions.append(_action(call, i, output, out_index))
    return actions


def _first(args: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
            # an argv list (`["bash", "-lc", "..."]`) keeps its quoting; `commands` are lines
            return "\n".join(value) if key == "commands" else shlex.join(value)
    return None


def _salvage_command(raw: str) -> str:
    """The command string out of arguments that are not valid JSON (often truncated:
    `{"command": "git reflog`), else the raw text itself."""
    m = re.search(r'"(?:command|cmd|script|code)"\s*:\s*"((?:[^"\\]|\\.)*)', raw)
    if m is None:
        return raw
    try:
        return json.loads(f'"{m.group(1)}"')
    except json.JSONDecodeError:
        return m.group(1)


def _action(call: ToolCall, index: int, output: str, out_index: int | None) -> Action:
    def make(kind: str, text: str, path: str | None = None, old: str = "") -> Action:
        return Action(index, call.name, kind, text, path, old, output, out_index, cwd)

    args = call.arguments
    cwd = None
    if args is None:
        kind = "shell" if _SHELLISH.search(call.name) else "other"
        return make(kind, _salvage_command(call.raw_arguments))
    cwd = _first(args, ("cwd", "workdir", "working_directory"))
    path = _first(args, PATH_KEYS)
    editor_command = args.get("command")
    if path is not None and editor_command in EDITOR_COMMANDS:
        if editor_command == "view":
            return make("read", "", path)
        if editor_command in ("create", "write"):
            return make("write", _first(args, CONTENT_KEYS) or "", path)
        if editor_command == "str_replace":
            return make("edit", str(args.get("new_str", "")), path, str(args.get("old_str", "")))
        if editor_command == "insert":
            return make("edit", str(args.get("new_str") or args.get("insert_text") or ""), path)
        return make("other", "", path)
    code = _first(args, ("code", "source"))
    if code is not None and not path:
        return make("python", code)
    command = _first(args, COMMAND_KEYS)
    if command is not None and _PYTHON_TOOL.search(call.name) and not _SHELLISH.search(call.name):
        return make("python", command)  # `python(script=...)`: the script is Python
    if command is not None and (_SHELLISH.search(call.name) or path is None):
        return make("shell", command)
    patch = _first(args, ("patch", "diff", "input")) if "patch" in call.name.lower() else None
    if patch is not None:
        return make("patch", patch)
    for pattern, kind in _NAME_KINDS:
        if not pattern.search(call.name):
            continue
        if kind == "write":
            return make("write", _first(args, CONTENT_KEYS) or "", path)
        if kind == "edit":
            new = _first(args, _NEW_KEYS)
            old = _first(args, _OLD_KEYS)
            if new is None:  # several edits in one call, or SEARCH/REPLACE blocks
                old, new = _edit_list(args.get("edits")) or _search_replace(args.get("diff"))
            return make("edit", new or "", path, old or "")
        if kind == "search":
            pattern_text = _first(args, ("pattern", "query", "regex", "name", "glob")) or ""
            return make("search", pattern_text, path or _first(args, ("dir", "directory")))
        if kind in ("read", "list", "delete"):
            return make(kind, "", path or _first(args, ("dir", "directory")))
        if kind == "python" and command is not None:
            return make("python", command)
    return make("other", call.raw_arguments, path)
