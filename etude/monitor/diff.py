"""The unified-diff parser: which files a patch (git or plain) touches, and the code it adds.

`parse_patch` serves both the agent's `apply_patch` calls and the trajectory's final patch;
it reads unified diffs and the `*** Begin Patch` / `*** Add File:` / `*** Update File:` /
`*** Delete File:` format some harnesses' `apply_patch` tools take.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class PatchFile:
    """One file of a unified diff: `added` are the added lines, `new_text` the new side of
    every hunk (context and added lines), in order."""

    path: str
    added: str
    new_text: str
    new_file: bool
    deleted: bool


_ENVELOPE = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")


def parse_patch(diff: str) -> list[PatchFile]:
    """The files a unified diff (git or plain) touches, with their added code."""
    files: list[PatchFile] = []
    current: dict = {}

    def close() -> None:
        if current.get("path"):
            files.append(
                PatchFile(
                    current["path"],
                    "\n".join(current["added"]),
                    "\n".join(current["new_side"]),
                    current["new_file"],
                    current["deleted"],
                )
            )

    def start(path: str) -> None:
        close()
        current.clear()
        current.update(path=path, added=[], new_side=[], new_file=False, deleted=False)
        current["hunks"] = False

    lines = diff.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        envelope = next((k for k in _ENVELOPE if line.startswith(k)), None)
        if envelope is not None:
            start(line[len(envelope) :].strip())
            current["hunks"] = True  # the file's lines follow directly
            current["new_file"] = envelope == "*** Add File: "
            current["deleted"] = envelope == "*** Delete File: "
        elif line.startswith("diff --git "):
            m = re.match(r"diff --git a/(\S+) b/(\S+)", line)
            start(m.group(2) if m else line.split()[-1])
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            src = line[4:].split("\t")[0].strip()
            dst = lines[i + 1][4:].split("\t")[0].strip()
            if not current or current["hunks"]:
                start(dst)
            if dst == "/dev/null":
                current["deleted"] = True
                current["path"] = src[2:] if src.startswith("a/") else src
            else:
                current["path"] = dst[2:] if dst.startswith("b/") else dst
            current["new_file"] = current["new_file"] or src == "/dev/null"
            i += 1
        elif current and line.startswith("new file mode"):
            current["new_file"] = True
        elif current and line.startswith("deleted file mode"):
            current["deleted"] = True
        elif current and line.startswith("@@"):
            current["hunks"] = True
        elif current and current["hunks"] and line.startswith("+"):
            current["added"].append(line[1:])
            current["new_side"].append(line[1:])
        elif current and current["hunks"] and line.startswith(" "):
            current["new_side"].append(line[1:])
        i += 1
    close()
    return files
