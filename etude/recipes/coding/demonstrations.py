"""Demonstrations without an outside model: a scripted solver that works a synthesized task
through the real coding environment, for the supervised warm start (`etude sft`).

The solver reads the task's files, writes the feature back from the task's hidden
reference, runs the import check and the repository's visible tests, and ends with a
summary of what those runs printed. Every tool call goes through `CodingEnv` (sandbox,
venv, real outputs) via `run_episode`, so a demonstration is a rollout record like the
loop's, marked `"source": "demonstration"` (its assistant turns were never sampled: they
train in SFT and are refused by the RL update).

Seeded variation per demonstration: exploration order (list, search or read first), edit
vs write, a wrong tool name followed by the right one, and a failing run followed by the
fix (a file left out of the first attempt, or the named test file that the task hides).
`style` picks the solver's style (`STYLES`): "varied" as above; "plain", one path only:
read the files the task names, edit, run the check, answer (edit vs write still by seed):
fewer surface patterns for a small model to copy from the train tasks where it should
follow the prompt; "grounded", the plain path with nothing in a call that the episode has
not shown (`grounded_calls`): a file that fits one reply is read whole and written whole; a
longer one is read from its top (where `__all__` and the imports are, edited there), and a
change further down goes before the line that follows it (a definition, or any line a
search prints alone), found with a search whose printed line number the read then starts
at, the edit anchored on that line. A plain demonstration reads a long file at a window
centred on where the hidden reference puts the feature, numbers a policy can only memorize.
Even grounded, *which* definition to search for comes from the reference's layout, which the
episode never sees. "top" (`top_calls`) removes that choice: every file is read from its top
(no line number) and every edit is anchored on a line that read printed, wherever the
reference had the change: a new `__all__` or import entry goes right after its list's
opening line, new definitions before the first statement after the module's imports (at the
end of a file of imports only); other changes in the top where they are. A task with any
other change below the top has no "top" path. "top_quick" is the top path that stops short:
after its last edit it runs only the import check (no test suite: its output is a few tokens
where pytest's fills a small model's context) and answers at once, saying it did not run the
tests (`quick_summary`), so that a whole demonstration fits a short episode and shows the
policy how an episode ends after its edits. "top_check_first" is "top_quick" that runs the
import check before its reads as well: it fails (the feature is deleted), and the episode
reads, edits and runs it again before it answers, so the policy sees what follows a failing
check (a read and an edit) besides what follows a passing one (the answer). A policy
warm-started on "top_quick" alone answered that the import works after the check printed a
traceback (the monitor's `import_claim_after_failure`), having seen only passing checks.
Reads keep to the read tool's cap (`MAX_READ_LINES` a reply): a longer file is read around
the feature's place and edited, never written whole, so no demonstration shows the policy
a reply or a turn that a long file would not fit in a small model's context.

The reference is written as a paraphrase: the deleted definitions lose their docstrings
and comments, literals are re-rendered by `ast.unparse` and the identifiers that occur only
in the deleted code (the task's oracle tokens) are renamed. The monitor's verbatim-recovery
rule exists to catch a policy that found the hidden reference; a demonstration must not
teach the policy to look like one. A demonstration is kept only if the real grader gives it
reward 1.0 and the monitor finds nothing; `build_demonstrations` records why each other
one was dropped.

    etude demonstrations --curriculum runs/curriculum --out runs/demos.jsonl --per-task 2
"""

from __future__ import annotations

import ast
import json
import random
import re
import shutil
from collections.abc import Iterator
from difflib import SequenceMatcher
from itertools import pairwise
from pathlib import Path

from etude.envs.coding import (
    REJECTED_PREFIXES,
    Budget,
    CodingEnv,
    EnvSettings,
    Episode,
    Message,
    command_exit_code,
    run_episode,
)
from etude.envs.workspace_ops import MAX_READ_LINES
from etude.monitor import monitor_trajectory, parse_line
from etude.monitor.task import task_view
from etude.recipes.coding.reward import graded_reward
from etude.rl.trajectory import DEMONSTRATION
from etude.synth.errors import SynthError
from etude.synth.grade import grade
from etude.synth.task import definition_node, first_line, load_task

WRONG_NAMES = {"read_file": ("open_file", "cat", "view_file"), "list_files": ("ls", "list_dir")}
_IMPORTABLE = re.compile(r"importable as `([^`]+)`")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_PASSED = re.compile(r"(\d+) passed")
_NO_TESTS_COLLECTED = 5  # pytest's exit status
READ_WINDOW = 40  # lines read around the feature's place in a file too long to read whole
STYLES = ("varied", "plain", "grounded", "top", "top_quick", "top_check_first")
_DEFINITION = re.compile(r"\s*(?:async\s+)?(def|class)\s+(\w+)")


def _strip_docstrings(node: ast.AST) -> ast.AST:
    """`node` without the docstrings of itself and the definitions in it (a body left
    empty gets `pass`)."""
    for sub in ast.walk(node):
        body = getattr(sub, "body", None)
        if (
            isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            sub.body = body[1:] or [ast.Pass()]
    return node


def _definition_lines(source: str, name: str) -> tuple[int, int, int] | None:
    """(first line, last line, indent) of a definition, decorators included (1-based)."""
    node = definition_node(source, name)
    if node is None:
        return None
    return first_line(node), node.end_lineno, node.col_offset


def paraphrase(task: dict, reference: dict[str, str]) -> dict[str, str]:
    """The reference files (path -> text) with every deleted definition re-rendered
    without docstrings or comments, every identifier among the task's oracle tokens renamed
    consistently across files (names the problem statement shows are kept) and every
    string literal among them written as two adjacent literals."""
    out = {}
    for rel, source in reference.items():
        lines = source.splitlines(keepends=True)
        spans = []
        for entry in task["deleted"]:
            if entry["file"] == rel:
                found = _definition_lines(source, entry["name"])
                if found is not None:
                    spans.append((found, entry["name"]))
        for (first, last, indent), name in sorted(spans, reverse=True):
            node = _strip_docstrings(definition_node(source, name))
            text = ast.unparse(node)
            pad = " " * indent
            lines[first - 1 : last] = [pad + line + "\n" for line in text.splitlines()]
        out[rel] = "".join(lines)
    statement = task["problem_statement"]
    names = sorted(
        t
        for t in task["oracle_tokens"]
        if _IDENTIFIER.fullmatch(t) and not re.search(rf"(?<!\w){t}(?!\w)", statement)
    )
    everything = "\n".join(out.values())
    renames, k = {}, 0
    for name in names:
        while True:
            k += 1
            new = (
                f"_PART_{k}"
                if name.lstrip("_").isupper()
                else ("_part_" if name.startswith("_") else "part_") + str(k)
            )
            if new not in everything:
                break
        renames[name] = new
    literals = [
        t
        for t in task["oracle_tokens"]
        if not _IDENTIFIER.fullmatch(t) and len(t) >= 2 and t not in statement
    ]
    for rel, text in out.items():
        for old, new in renames.items():
            text = re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", new, text)
        for literal in literals:  # adjacent literals: the same constant, other text
            half = len(literal) // 2
            text = text.replace(repr(literal), f"({literal[:half]!r} {literal[half:]!r})")
        out[rel] = text
    return out


def edit_arguments(current: str, target: str) -> dict | None:
    """`edit_file` arguments that turn `current` into `target` with one replacement: the
    changed lines between their common prefix and suffix, widened by context lines until
    `old` occurs once in `current`; None when no part of `current` is unique enough."""
    a, b = current.splitlines(keepends=True), target.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    end_a, end_b = len(a) - tail, len(b) - tail
    start, after = head, 0  # context lines taken before and after the change
    while True:
        old = "".join(a[start : end_a + after])
        if old and current.find(old) == current.rfind(old):  # once, overlaps counted
            new = "".join(a[start:head] + b[head:end_b] + a[end_a : end_a + after])
            return {"old": old, "new": new}
        if start > 0:
            start -= 1
        elif end_a + after < len(a):
            after += 1
        else:
            return None


def _changed_regions(current: str, target: str) -> list[tuple[int, int, int, int]]:
    """(i1, i2, j1, j2) per changed region: lines i1:i2 of `current` become j1:j2 of
    `target` (difflib's non-equal opcodes, in file order)."""
    a, b = current.splitlines(keepends=True), target.splitlines(keepends=True)
    opcodes = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]


def edit_hunks(current: str, target: str) -> list[dict] | None:
    """`edit_file` arguments, one per changed region, that applied in order turn `current`
    into `target` (each `old` occurs once in the text it is applied to, `edit_arguments`
    on the text before and after that region's change). A feature whose deletion also
    touched `__all__` or the imports is put back with short edits, not one edit spanning
    the file in between. None when a region has nothing unique to anchor on."""
    a, b = current.splitlines(keepends=True), target.splitlines(keepends=True)
    regions = _changed_regions(current, target)
    states = []  # the text with the first n regions changed, n = 0 .. len(regions)
    for n in range(len(regions) + 1):
        text, at = [], 0
        for k, (i1, i2, j1, j2) in enumerate(regions):
            text += a[at:i1] + (b[j1:j2] if k < n else a[i1:i2])
            at = i2
        states.append("".join(text + a[at:]))
    edits = [edit_arguments(x, y) for x, y in pairwise(states)]
    return None if not edits or None in edits else edits


def read_arguments(path: str, current: str, target: str) -> list[dict]:
    """`read_file` arguments for `path`: the whole file when it fits one reply
    (`MAX_READ_LINES`), else `READ_WINDOW` + 1 lines centred on the first line of each
    changed region (where a search for a neighbouring name would point), a region inside
    an earlier window read with it."""
    lines = len(current.splitlines())
    if lines <= MAX_READ_LINES:
        return [{"path": path}]
    reads = []
    for i1, *_ in _changed_regions(current, target) or [(lines, 0, 0, 0)]:
        if reads and i1 + 1 <= reads[-1]["end_line"]:
            continue
        start = max(1, i1 + 1 - READ_WINDOW // 2)
        reads.append({"path": path, "start_line": start, "end_line": start + READ_WINDOW})
    return reads


def _line_span(text: str, part: str) -> tuple[int, int]:
    """The 0-based indices of the first and last line of the first occurrence of `part`
    in `text`."""
    first = text[: text.index(part)].count("\n")
    return first, first + part.rstrip("\n").count("\n")


def _search_and_read(path: str, lines: list[str], k: int) -> list[tuple[str, dict]] | None:
    """A search that prints line k (0-based) of `lines` as its one hit (for a definition,
    its kind and name; else the line's text), and a read from the line number it prints;
    None when the line is blank or the search would print more than one line."""
    found = _DEFINITION.match(lines[k])
    if found is not None:
        kind, name = found.groups()
        pattern = rf"{kind} {name}\b"
    elif lines[k].strip():
        pattern = re.escape(lines[k].strip())
    else:
        return None
    if sum(bool(re.search(pattern, line)) for line in lines) != 1:
        return None
    return [
        ("search_files", {"pattern": pattern, "path": path}),
        ("read_file", {"path": path, "start_line": k + 1}),
    ]


def _anchored_below(path: str, current: str, target: str) -> list[tuple[str, dict]] | None:
    """Calls that make the one change from `current` to `target`: a search for a line
    beside it, a read from the line number the search printed, an edit within what was
    read. An insertion goes before the line that follows it (a definition, or an entry of
    a long `__all__`: any line a search prints alone), anchored on that line; else the edit
    (`edit_arguments`) is read from the nearest definition above it whose read reaches it,
    failing one from the nearest line above it that a search prints alone. None when there
    is none."""
    a = current.splitlines(keepends=True)
    regions = _changed_regions(current, target)
    if len(regions) != 1:
        return None
    i1, i2, *_ = regions[0]
    k = next((i for i in range(i2, len(a)) if a[i].strip()), None)
    if i1 == i2 and k is not None and current.count(a[k]) == 1 and not "".join(a[i1:k]).strip():
        found = _search_and_read(path, a, k)
        head, tail = "".join(a[:k]), "".join(a[k + 1 :])
        new = target[len(head) : len(target) - len(tail)]
        if found and target.startswith(head) and target.endswith(tail) and new.endswith(a[k]):
            return [*found, ("edit_file", {"path": path, "old": a[k], "new": new})]
    edit = edit_arguments(current, target)
    if edit is None:
        return None
    first, last = _line_span(current, edit["old"])
    above = reversed(range(max(0, last - MAX_READ_LINES + 1), first + 1))
    for k in sorted(above, key=lambda i: _DEFINITION.match(a[i]) is None):  # definitions first
        found = _search_and_read(path, a, k)
        if found is not None:
            return [*found, ("edit_file", {"path": path, **edit})]
    return None


def grounded_calls(path: str, current: str | None, target: str) -> list[tuple[str, dict]] | None:
    """(tool, arguments) that turn file `path` from `current` (None: absent) into `target`
    with nothing in an argument that the episode has not shown before it: a new file is
    written; one that fits one `read_file` reply is read and written whole; a longer one is
    read from its top (no line numbers), each change within that top edited there, and
    each one below it made after a search and a read from the line number it printed
    (`_anchored_below`). None when a change of a long file is neither."""
    if current is None:
        return [("write_file", {"path": path, "content": target})]
    if len(current.splitlines()) <= MAX_READ_LINES:
        return [("read_file", {"path": path}), ("write_file", {"path": path, "content": target})]
    a, b = current.splitlines(keepends=True), target.splitlines(keepends=True)
    calls: list[tuple[str, dict]] = [("read_file", {"path": path})]
    before = current  # the text with the regions so far changed
    for _, i2, _, j2 in _changed_regions(current, target):
        after = "".join(b[:j2] + a[i2:])
        edit = edit_arguments(before, after)
        if edit is not None and _line_span(before, edit["old"])[1] < MAX_READ_LINES:
            calls.append(("edit_file", {"path": path, **edit}))  # within the top's read
        else:
            below = _anchored_below(path, before, after)
            if below is None:
                return None
            calls += below
        before = after
    return calls


def _is_definitions(text: str) -> bool:
    """Whether `text` is one or more module-level function or class definitions."""
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return False
    return bool(body) and all(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in body
    )


def _after_imports(body: list[ast.stmt], lines: list[str]) -> int:
    """The 0-based first line (decorators included) of the module's first statement after
    its docstring and imports; the number of lines when there is none (the file's end)."""
    k = (
        1
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
        else 0
    )
    while k < len(body) and isinstance(body[k], ast.Import | ast.ImportFrom):
        k += 1
    if k == len(body):
        return len(lines)
    return first_line(body[k]) - 1


def _opening_line(body: list[ast.stmt], i: int, lines: list[str]) -> int | None:
    """The 0-based first line of the multi-line bracketed statement (an `__all__` list, a
    parenthesized import) that line i falls strictly inside, when that line opens the
    bracket; else None."""
    for node in body:
        first, last = node.lineno - 1, node.end_lineno - 1
        if first < i <= last and lines[first].rstrip().endswith(("[", "(")):
            return first
    return None


def top_calls(path: str, current: str | None, target: str) -> list[tuple[str, dict]] | None:
    """(tool, arguments) that turn file `path` from `current` (None: absent) into `target`
    up to where things go, every anchor within what a read from the top shows (the whole
    file, or its first `MAX_READ_LINES` lines): a new file is written; otherwise the file
    is read and edited: new entries of a multi-line list or import (`__all__`,
    `from m import (`) right after its opening line, anchored on it; new module-level
    definitions before the first statement after the docstring and imports, anchored on
    its first line (at the file's end, after its last line, when there is none); any other
    change in the top where it is (`edit_arguments`). None when a change is neither of the
    first two and below the top, or an anchor is not unique."""
    if current is None:
        return [("write_file", {"path": path, "content": target})]
    a, b = current.splitlines(keepends=True), target.splitlines(keepends=True)
    try:
        body = ast.parse(current).body
    except SyntaxError:
        return None
    home = _after_imports(body, a)
    definitions, entries, kept = [], {}, []  # kept: (i1, i2, new lines)
    for i1, i2, j1, j2 in _changed_regions(current, target):
        added = b[j1:j2]
        opening = _opening_line(body, i1, a) if i1 == i2 else None
        if i1 == i2 and _is_definitions("".join(added)):
            definitions.append("".join(added).strip("\n") + "\n")
        elif opening is not None and all(x.rstrip().endswith(",") for x in added if x.strip()):
            entries.setdefault(opening, []).extend(x for x in added if x.strip())
        elif i2 <= MAX_READ_LINES:
            kept.append((i1, i2, added))
        else:
            return None
    edits = [{"old": a[k], "new": a[k] + "".join(lines)} for k, lines in entries.items()]
    if definitions and home < len(a):
        edits.append({"old": a[home], "new": "".join(d + "\n\n" for d in definitions) + a[home]})
    elif definitions and a and a[-1].endswith("\n"):
        edits.append({"old": a[-1], "new": a[-1] + "".join("\n\n" + d for d in definitions)})
    elif definitions:
        return None

    def placed(n: int) -> str:
        """The file with the definitions, the entries and the first n other changes."""
        out, skip, regions = [], 0, {i1: (i2, added) for i1, i2, added in kept[:n]}
        for i in range(len(a) + 1):
            if i == home < len(a):
                out += [d + "\n\n" for d in definitions]
            if i in regions:
                skip, added = regions[i]
                out += added
            if skip <= i < len(a):
                out.append(a[i])
            out += entries.get(i, [])
        return "".join(out) + "".join("\n\n" + d for d in definitions if home == len(a))

    edits += [edit_arguments(placed(n), placed(n + 1)) for n in range(len(kept))]
    top, state = "".join(a[:MAX_READ_LINES]), current
    for edit in edits:
        if edit is None or edit["old"] not in top or state.count(edit["old"]) != 1:
            return None
        state = state.replace(edit["old"], edit["new"])
    if state != placed(len(kept)):
        return None
    return [("read_file", {"path": path}), *(("edit_file", {"path": path, **e}) for e in edits)]


def _last_output(messages: list[Message]) -> str:
    return messages[-1]["content"] if messages and messages[-1]["role"] == "tool" else ""


GROUNDED_CALLS = {  # style -> (its calls for one file, why a file may have none)
    "grounded": (
        grounded_calls,
        "a change below a long file's top with no line beside it that a search prints alone",
    ),
    "top": (top_calls, "a change below a long file's top that is not a definition or entry"),
}
GROUNDED_CALLS["top_quick"] = GROUNDED_CALLS["top_check_first"] = GROUNDED_CALLS["top"]


class NoGroundedPath(ValueError):
    """A task the grounded (or top) path cannot solve without a number or anchor it has not
    shown."""


class ScriptedSolver:
    """A `Backend` that solves one task: each `complete` returns the next assistant turn,
    the later ones chosen from what the earlier tool calls printed."""

    def __init__(self, task_dir: Path, rng: random.Random, style: str = "varied") -> None:
        if style not in STYLES:
            raise ValueError(f"unknown solver style {style!r}: one of {', '.join(STYLES)}")
        self.task = load_task(task_dir)
        self.plain = style != "varied"
        self.quick = style in ("top_quick", "top_check_first")
        self.check_first = style == "top_check_first"
        reference = Path(task_dir) / "hidden" / "reference"
        files = {rel: (reference / rel).read_text() for rel in self.task["modified_files"]}
        self.target = paraphrase(self.task, files)
        self.current = {
            rel: (Path(task_dir) / "workspace" / rel).read_text()
            if (Path(task_dir) / "workspace" / rel).is_file()
            else None
            for rel in self.target
        }
        self.grounded = None  # file -> its grounded calls ("grounded" or "top" style)
        if style in GROUNDED_CALLS:
            calls_for, why = GROUNDED_CALLS[style]
            self.grounded = {
                rel: calls_for(rel, self.current[rel], self.target[rel]) for rel in self.target
            }
            missing = [rel for rel, calls in self.grounded.items() if calls is None]
            if missing:
                raise NoGroundedPath(
                    f"{self.task['id']}: no {style} path changes {', '.join(missing)} ({why})"
                )
        self.rng = rng
        self._turns = self._script()
        self._messages: list[Message] = []
        self._calls = 0

    def complete(self, messages: list[Message], tools: list[dict]) -> tuple[Message, int]:
        self._messages = messages
        return next(self._turns), 0

    def _call(self, name: str, **arguments) -> Message:
        """An assistant turn with one tool call (ids numbered in order)."""
        self._calls += 1
        call = {
            "id": f"call_{self._calls}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def _writes(self, rel: str) -> Iterator[Message]:
        """Edit `rel` to its target (one `edit_file` per changed region) or write it whole;
        a file longer than one read_file reply (so never read whole) is always edited."""
        current, target = self.current[rel], self.target[rel]
        long = current is not None and len(current.splitlines()) > MAX_READ_LINES
        edits = edit_hunks(current, target) if current and (self.edit or long) else None
        if edits is None:
            yield self._call("write_file", path=rel, content=target)
            return
        for edit in edits:
            yield self._call("edit_file", path=rel, **edit)

    def _check_command(self) -> str:
        found = import_check(self.task)
        return (f"{found} && " if found else "") + "python -m pytest -q -p no:cacheprovider"

    def _script(self) -> Iterator[Message]:
        rng, task = self.rng, self.task
        files = list(self.target)
        rng.shuffle(files)
        self.edit = rng.random() < 0.5
        feature = task["deleted"][0]["name"].rsplit(".", 1)[-1]
        explore = "read" if self.plain else rng.choice(["list", "search", "read"])
        if not self.plain and rng.random() < 0.3:  # a wrong tool name, then the right one
            right = "list_files" if explore == "list" else "read_file"
            wrong = rng.choice(WRONG_NAMES[right])
            args = {"path": "."} if right == "list_files" else {"path": files[0]}
            yield self._call(wrong, **args)
        if explore == "list":
            yield self._call("list_files", path=".")
        elif explore == "search":
            yield self._call("search_files", pattern=rf"\b{feature}\b")
        command = self._check_command()
        if self.grounded is not None:
            found = import_check(task)
            if self.check_first and found:  # fails: the feature is deleted
                yield self._call("run_command", command=found)
            for rel in files:
                for name, arguments in self.grounded[rel]:
                    yield self._call(name, **arguments)
            if self.quick:
                if found:
                    yield self._call("run_command", command=found)
                output = _last_output(self._messages) if found else None
                yield {"role": "assistant", "content": quick_summary(task, files, output)}
                return
            yield self._call("run_command", command=command)
            yield {
                "role": "assistant",
                "content": self._summary(files, self.task["tests"]["hidden_files"]),
            }
            return
        for rel in files:
            if self.current[rel] is not None:
                for read in read_arguments(rel, self.current[rel], self.target[rel]):
                    yield self._call("read_file", **read)
        held_back = None
        if not self.plain and len(files) > 1 and rng.random() < 0.4:  # misses a file
            held_back = files[-1]
        for rel in files:
            if rel != held_back:
                yield from self._writes(rel)
        hidden = task["tests"]["hidden_files"]
        if not self.plain and hidden and held_back is None and rng.random() < 0.4:
            yield self._call("run_command", command=f"python -m pytest -q {hidden[0]}")
        yield self._call("run_command", command=command)
        if held_back is not None:
            yield from self._writes(held_back)
            yield self._call("run_command", command=command)
        yield {"role": "assistant", "content": self._summary(files, hidden)}

    def _summary(self, files: list[str], hidden: list[str]) -> str:
        return check_summary(self.task, files, hidden, _last_output(self._messages))


def _importable(task: dict) -> str | None:
    """The import statement the task's statement says must work (`from pkg import name`),
    or None when it names none."""
    found = _IMPORTABLE.search(task["problem_statement"])
    return found.group(1) if found else None


def import_check(task: dict) -> str | None:
    """The command that runs `_importable(task)` (`python -c "from pkg import name"`), or
    None when the statement names no import."""
    statement = _importable(task)
    return f"python -c {json.dumps(statement)}" if statement else None


def _stated_names(task: dict) -> str:
    """The deleted names the task's statement shows, backticked (the others stay unsaid)."""
    statement = task["problem_statement"]
    return ", ".join(f"`{e['name']}`" for e in task["deleted"] if f"`{e['name']}`" in statement)


def check_summary(task: dict, files: list[str], hidden: list[str], output: str) -> str:
    """The solver's closing answer after its check printed `output` (`_check_command`'s:
    the import check, then pytest): what it implemented where, and only what that run
    showed — its pass count, or that the workspace has no visible tests (pytest's exit 5,
    no tests collected, after the import check passed), or that the check still fails."""
    names = _stated_names(task)
    code = command_exit_code(output)
    if code not in (0, _NO_TESTS_COLLECTED):
        return f"I wrote {names} into {', '.join(files)}, but the last check still fails."
    importable = _importable(task)
    imported = f"`{importable}` works and " if importable else ""
    if code == _NO_TESTS_COLLECTED:
        tests = "the workspace has no visible tests to run"
    else:
        passed = _PASSED.findall(output)
        tests = f"{passed[-1]} visible tests pass" if passed else "the visible tests pass"
    text = f"I implemented {names} in {', '.join(sorted(files))}. {imported}{tests}."
    if hidden:
        text += f" The task's own tests ({', '.join(hidden)}) are not in the workspace, "
        text += "so I could not run them."
    return text


def quick_summary(task: dict, files: list[str], output: str | None) -> str:
    """The "top_quick" solver's closing answer: what it implemented where, what the import
    check printed (`output`; None: the task names no import to check) and that it ran no
    tests, so nothing in it claims more than the episode showed."""
    text = f"I implemented {_stated_names(task)} in {', '.join(sorted(files))}."
    if output is not None:
        works = command_exit_code(output) == 0
        text += f" `{_importable(task)}` {'works' if works else 'still fails'}."
    return text + " I did not run the tests."


def demonstrate(
    task_dir: Path,
    episode_dir: Path,
    seed: int,
    settings: EnvSettings | None = None,
    style: str = "varied",
) -> dict:
    """Run the solver once on `task_dir` in a fresh environment under `episode_dir` (`style`:
    one of `STYLES`, see the module doc); its trajectory record, with `source`, `seed`,
    `reward`, `grade` and the monitor's `findings`. Raises `NoGroundedPath` before setting
    anything up when the grounded path cannot solve the task."""
    rng = random.Random(f"{seed}:{load_task(task_dir)['id']}")
    solver = ScriptedSolver(task_dir, rng, style)
    env = CodingEnv.for_task(task_dir, episode_dir, settings or EnvSettings())
    try:
        episode: Episode = run_episode(env, solver, Budget(max_turns=40, max_tokens=10**9))
        graded = grade(Path(task_dir), env.workspace) if episode.end == "answer" else {}
    finally:
        env.close()
    record = episode.to_record() | {"source": DEMONSTRATION, "seed": seed}
    parsed = parse_line(json.dumps(record), 1)
    view = task_view(load_task(task_dir), hidden_paths=(str(Path(task_dir).resolve()),))
    findings = monitor_trajectory(parsed, view, None, episode.workspace).findings
    record |= {
        "reward": graded_reward(graded) if graded else 0.0,
        "grade": graded,
        "findings": [f.to_dict() for f in findings],
    }
    record.pop("workspace")  # the episode directory is removed once graded
    return record


def build_demonstrations(
    task_dirs: list[Path],
    out: Path,
    per_task: int = 1,
    seed: int = 0,
    settings: EnvSettings | None = None,
    style: str = "varied",
) -> dict:
    """`per_task` demonstrations of each task (`style`: one of `STYLES`, see the module doc)
    appended to the JSONL file `out` (a record already there for a (task, seed) is kept:
    reruns resume). Only demonstrations with
    reward 1.0 and no monitor finding are written; returns {"kept": n, "dropped": [reasons]}
    (a task whose environment cannot be set up, e.g. a workspace that does not install
    without the deleted code, is dropped with the environment's message, and one the
    grounded path cannot solve with `NoGroundedPath`'s).
    Held-out tasks are refused (`etude.recipes.coding.curriculum.refuse_heldout`)."""
    from etude.recipes.coding.curriculum import refuse_heldout

    refuse_heldout(task_dirs)
    out = Path(out)
    done = set()
    if out.is_file():
        for line in out.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                done.add((record["task_id"], record["seed"]))
    work = out.with_name(out.name + ".episodes")
    kept, dropped = len(done), []
    for task_dir in task_dirs:
        task_id = load_task(task_dir)["id"]
        for k in range(per_task):
            s = seed * 1000 + k
            if (task_id, s) in done:
                continue
            episode_dir = work / f"{task_id}-{s}"
            shutil.rmtree(episode_dir, ignore_errors=True)
            try:
                record = demonstrate(task_dir, episode_dir, s, settings, style)
            except (SynthError, NoGroundedPath) as err:  # no environment, or no grounded path
                dropped.append(f"{task_id} seed {s}: {str(err).splitlines()[0]}")
                continue
            finally:
                shutil.rmtree(episode_dir, ignore_errors=True)
            if record["reward"] != 1.0 or record["findings"]:
                rules = [f["rule"] for f in record["findings"]]
                dropped.append(f"{task_id} seed {s}: reward {record['reward']}, findings {rules}")
                continue
            with out.open("a") as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
            kept += 1
    shutil.rmtree(work, ignore_errors=True)
    return {"kept": kept, "dropped": dropped}


WRITE_TOOLS = ("write_file", "edit_file")


def _cut_after_accepted(
    record: dict, names: tuple[str, ...] | None, cut: str, last: bool = False
) -> dict:
    """The record cut after the first (`last`: the last) assistant turn whose tool call
    (named in `names`; None: any) the environment accepted, its reply excluded; the whole
    record if there is none."""
    messages = record["messages"]
    end = None
    for i, m in enumerate(messages):
        if m["role"] != "tool" or m["content"].startswith(REJECTED_PREFIXES):
            continue
        turn = next(x for x in reversed(messages[:i]) if x["role"] == "assistant")
        called = {c["id"]: c["function"]["name"] for c in turn["tool_calls"]}
        if names is None or called.get(m["tool_call_id"]) in names:
            end = i
            if not last:
                break
    if end is None:
        return record
    return {**record, "messages": messages[:end], "patch": "", "cut": cut}


def first_turns(record: dict) -> dict:
    """The record cut after its first tool call the environment accepted (system, user
    and the turns up to that call): a short demonstration of how an episode opens."""
    return _cut_after_accepted(record, None, "first_turns")


def through_first_write(record: dict) -> dict:
    """The record cut after its first accepted write or edit (`WRITE_TOOLS`): the reads
    that lead to a change and the change, without the runs and the summary after it."""
    return _cut_after_accepted(record, WRITE_TOOLS, "through_first_write")


def through_last_write(record: dict) -> dict:
    """The record cut after its last accepted write or edit: the reads and every change
    (a feature put back in several regions keeps all its edits, not only the first),
    without the runs and the summary after the last one."""
    return _cut_after_accepted(record, WRITE_TOOLS, "through_last_write", last=True)


def main(args) -> int:
    """`etude demonstrations --curriculum DIR --out FILE [--per-task N] [--seed S]
    [--style varied|plain|grounded]`."""
    from etude.recipes.coding.curriculum import split_dirs

    result = build_demonstrations(
        split_dirs(Path(args.curriculum), "train"),
        Path(args.out),
        args.per_task,
        args.seed,
        style=args.style,
    )
    for reason in result["dropped"]:
        print(f"dropped: {reason}")
    print(f"{result['kept']} demonstrations in {args.out}")
    return 0
