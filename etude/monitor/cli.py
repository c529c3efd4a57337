"""`etude monitor TRAJECTORIES.jsonl`: findings per trajectory and a summary by category.

Exit status: 0 when no finding reaches `--fail-on` (default: `ZEROING_SEVERITY`, the
severity at which the RL loop zeroes a reward), 1 when one does, 2 when the input cannot be
read at all. Input problems in single lines are reported with their line numbers and the
rest of the file is still processed. `--group` judges each trajectory against the other
rollouts of its task (`etude.monitor.group`); it holds the file's results in memory.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console

from etude.monitor.findings import ZEROING_SEVERITY, severity_rank
from etude.monitor.group import compare_with_group
from etude.monitor.monitor import TrajectoryResult, monitor_file
from etude.monitor.report import Summary, print_table, render_html
from etude.monitor.trajectory import InputProblem


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
    items = monitor_file(path, args.tasks, workspace=args.workspace)
    if args.group:
        items = _grouped(items, keep_messages=summary.keep_messages)
    for item in items:
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
    fail_on = args.fail_on or ZEROING_SEVERITY
    return 1 if worst is not None and severity_rank(worst) >= severity_rank(fail_on) else 0


def _grouped(
    items: Iterable[TrajectoryResult | InputProblem], keep_messages: bool
) -> list[TrajectoryResult | InputProblem]:
    """All of a file's results judged against their task groups; input problems kept in
    their place. Messages are dropped first unless the HTML report needs them."""
    items = list(items)
    results = [r for r in items if isinstance(r, TrajectoryResult)]
    if not keep_messages:
        for r in results:
            r.trajectory = None
    judged = iter(compare_with_group(results))
    return [next(judged) if isinstance(r, TrajectoryResult) else r for r in items]


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
