"""The file tools of the coding environment, run as a script inside the sandbox.

`etude.envs.coding` starts `python -I -S workspace_ops.py` in `etude.sandbox` with the
workspace as its working directory and one JSON request on stdin:
`{"op": "read"|"write"|"edit"|"list"|"search", "args": {...}}`. The reply on stdout is
`{"ok": true, "output": "..."}` or `{"ok": false, "error": "..."}`. Standard library only:
the script runs with site-packages disabled, and every path is resolved and must stay inside
the workspace (the sandbox enforces the same for writes; this gives the policy a readable
error instead of a permission failure).
"""

import json
import os
import re
import sys
from pathlib import Path

SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
MAX_LIST = 400
MAX_MATCHES = 200
# lines one read_file call shows: a whole file of a real package (inflection's __init__.py,
# 400 lines, ~4,000 tokens) would fill a small model's context; the reply says what was left
MAX_READ_LINES = 80


class ToolError(Exception):
    """A bad request (path outside the workspace, missing file, no match); shown as is."""


def inside(root: Path, path: str) -> Path:
    """`path` (relative to the workspace or absolute) resolved; must be inside `root`."""
    if not isinstance(path, str) or not path:
        raise ToolError("path must be a non-empty string")
    full = (root / path).resolve()
    if full != root and root not in full.parents:
        raise ToolError(f"{path} is outside the workspace")
    return full


def read(root: Path, path: str, start_line: int = 1, end_line: int | None = None) -> str:
    target = inside(root, path)
    if not target.is_file():
        raise ToolError(f"{path} is not a file")
    lines = target.read_text(errors="replace").splitlines()
    start = max(int(start_line), 1)
    if not lines:
        return f"[{path} is empty]"
    if start > len(lines):  # said, not an empty reply an agent could take for the file
        raise ToolError(f"{path} ends at line {len(lines)}; start_line {start} is past it")
    end = len(lines) if end_line is None else min(int(end_line), len(lines))
    shown = min(end, start + MAX_READ_LINES - 1)
    text = "\n".join(f"{i:5d}  {lines[i - 1]}" for i in range(start, shown + 1))
    if shown < end:
        text += (
            f"\n[lines {start}-{shown} of {len(lines)} shown: at most {MAX_READ_LINES} per "
            "call; pass start_line and end_line to read more]"
        )
    return text


def write(root: Path, path: str, content: str) -> str:
    if not isinstance(content, str):
        raise ToolError("content must be a string")
    target = inside(root, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    return f"wrote {len(content)} characters to {path}"


def edit(root: Path, path: str, old: str, new: str) -> str:
    if not isinstance(old, str) or not isinstance(new, str) or not old:
        raise ToolError("old and new must be strings and old must not be empty")
    target = inside(root, path)
    if not target.is_file():
        raise ToolError(f"{path} is not a file")
    text = target.read_text()
    count = text.count(old)
    if count != 1:
        raise ToolError(f"old text occurs {count} times in {path}; it must occur exactly once")
    target.write_text(text.replace(old, new, 1))
    return f"edited {path}"


def list_files(root: Path, path: str = ".") -> str:
    base = inside(root, path)
    if not base.is_dir():
        raise ToolError(f"{path} is not a directory")
    found = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")
        )
        for name in sorted(filenames):
            found.append((Path(dirpath) / name).relative_to(root).as_posix())
    more = f"\n... and {len(found) - MAX_LIST} more" if len(found) > MAX_LIST else ""
    return "\n".join(found[:MAX_LIST]) + more


def search(root: Path, pattern: str, path: str = ".") -> str:
    try:
        regex = re.compile(pattern)
    except (re.error, TypeError) as err:
        raise ToolError(f"pattern is not a valid regular expression: {err}") from None
    base = inside(root, path)
    files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
    hits = []
    for file in files:
        if SKIP_DIRS & set(file.relative_to(root).parts):
            continue
        try:
            lines = file.read_text().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for i, line in enumerate(lines, 1):
            if regex.search(line):
                hits.append(f"{file.relative_to(root).as_posix()}:{i}: {line}")
                if len(hits) >= MAX_MATCHES:
                    return "\n".join(hits) + f"\n... stopped at {MAX_MATCHES} matches"
    return "\n".join(hits) if hits else "no matches"


OPS = {"read": read, "write": write, "edit": edit, "list": list_files, "search": search}


def main() -> None:
    request = json.loads(sys.stdin.read())
    root = Path.cwd().resolve()
    try:
        output = OPS[request["op"]](root, **request["args"])
        reply = {"ok": True, "output": output}
    except TypeError as err:  # missing or unexpected keyword arguments
        reply = {"ok": False, "error": f"invalid arguments: {err}"}
    except (ToolError, OSError, ValueError) as err:
        reply = {"ok": False, "error": str(err)}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    main()
