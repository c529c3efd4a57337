"""`etude monitor TRAJECTORIES.jsonl`: findings per trajectory and a summary by category.

Exit status: 0 when no finding reaches `--fail-on` (default high), 1 when one does, 2 when
the input cannot be read at all. Input problems in single lines are reported with their
line numbers and the rest of the file is still processed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from etude.monitor.findings import severity_rank
from etude.monitor.monitor import monitor_file
from etude.monitor.report import Summary, print_table, render_html


def main(args: argparse.Namespace) -> int:
    """Run the monitor over a file and report; returns the exit status."""
    path = Path(args.trajectories)
    if not path.is_file():
        raise FileNotFoundError(f"trajectory file not found: {path}")
    if args.tasks is not None and not Path(args.tasks).is_dir():
        raise FileNotFoundError(f"tasks directory not found: {args.tasks}")
    if args.html is not None and not Path(args.html).resolve().parent.is_dir():
        raise FileNotFoundError(f"directory for the HTML report not found: {args.html}")
    summary = Summary(keep_messages=args.html is not None)
    for item in monitor_file(path, args.tasks, workspace=args.workspace):
        summary.add(item)
    if summary.trajectories == 0 and summary.problems:
        for p in summary.problems:
            print(f"etude monitor: {p}", file=sys.stderr)
        raise ValueError(f"no readable trajectory in {path}")
    if args.html is not None:
        _write_atomically(Path(args.html), render_html(summary, f"etude monitor: {path.name}"))
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
        for p in summary.problems:
            print(f"etude monitor: input problem: {p}", file=sys.stderr)
    else:
        console = Console()
        print_table(summary, console if console.is_terminal else Console(width=160))
    worst = summary.worst()
    return 1 if worst is not None and severity_rank(worst) >= severity_rank(args.fail_on) else 0


def _write_atomically(target: Path, text: str) -> None:
    """Write via a temporary file and rename, so an interrupted run leaves no half report."""
    fd, tmp = tempfile.mkstemp(dir=target.resolve().parent, prefix=f".{target.name}.")
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
