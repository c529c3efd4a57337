"""Reports of monitor results: a terminal table with a summary by category, a JSON document,
and a one-page HTML report showing each finding's evidence highlighted in its message.

`Summary` accumulates counts while results stream past, so a report over a large file keeps
only the trajectories that have findings or input problems.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table

from etude.monitor.findings import CATEGORIES, SEVERITIES, Finding, severity_rank
from etude.monitor.monitor import TrajectoryResult
from etude.monitor.trajectory import InputProblem, ScannedMessage

SEVERITY_COLORS = {"info": "dim", "low": "cyan", "medium": "yellow", "high": "red"}
SEVERITY_COLORS["critical"] = "bold red"


@dataclass
class Summary:
    """Running totals over a stream of results; keeps only the results with findings or
    input problems (and their messages only if `keep_messages`)."""

    trajectories: int = 0
    # category -> severity -> trajectories whose worst finding of that category has it
    flagged: dict[str, Counter] = field(default_factory=dict)
    findings: dict[str, int] = field(default_factory=Counter)  # severity -> findings
    problems: list[InputProblem] = field(default_factory=list)
    kept: list[TrajectoryResult] = field(default_factory=list)
    # keep flagged trajectories' messages (the HTML report shows evidence in context)
    keep_messages: bool = True

    def add(self, item: TrajectoryResult | InputProblem) -> None:
        if isinstance(item, InputProblem):
            self.problems.append(item)
            return
        self.trajectories += 1
        worst: dict[str, str] = {}
        for f in item.findings:
            if severity_rank(f.severity) >= severity_rank(worst.get(f.category, "info")):
                worst[f.category] = f.severity
        for category, severity in worst.items():
            self.flagged.setdefault(category, Counter())[severity] += 1
        for f in item.findings:
            self.findings[f.severity] += 1
        self.problems.extend(item.problems)
        if not (self.keep_messages and item.findings):
            item.trajectory = None  # let the messages be freed
        if item.findings or item.problems:
            self.kept.append(item)

    def worst(self) -> str | None:
        present = [s for s in SEVERITIES if self.findings.get(s)]
        return present[-1] if present else None

    def to_dict(self) -> dict:
        return {
            "trajectories": self.trajectories,
            "trajectories_with_findings": sum(1 for r in self.kept if r.findings),
            "trajectories_by_category": {
                c: {s: self.flagged.get(c, Counter()).get(s, 0) for s in SEVERITIES}
                for c in CATEGORIES
            },
            "findings_by_severity": {s: self.findings.get(s, 0) for s in SEVERITIES},
            "problems": [str(p) for p in self.problems],
            "results": [r.to_dict() for r in self.kept if r.findings or r.problems],
        }


def print_table(summary: Summary, console: Console) -> None:
    """Findings per trajectory, then trajectories per category, then input problems."""
    table = Table(title="findings", show_lines=False)
    for column in ("trajectory", "line", "msg", "category", "severity", "conf", "by", "evidence"):
        table.add_column(column, overflow="fold")
    for r in summary.kept:
        for f in r.findings:
            color = SEVERITY_COLORS[f.severity]
            table.add_row(
                r.trajectory_id,
                str(r.line),
                "patch" if f.message_index is None else str(f.message_index),
                f.category,
                f"[{color}]{f.severity}[/{color}]",
                f"{f.confidence:.2f}",
                f.detector,
                f.evidence[:80].replace("\n", "⏎"),
            )
    if table.row_count:
        console.print(table)
    totals = Table(
        title=f"trajectories by category and worst severity ({summary.trajectories} in all)"
    )
    totals.add_column("category")
    for severity in SEVERITIES:
        totals.add_column(severity, justify="right")
    for category in CATEGORIES:
        counts = summary.flagged.get(category, Counter())
        totals.add_row(category, *(str(counts.get(s, 0)) for s in SEVERITIES))
    console.print(totals)
    for p in summary.problems:
        console.print(f"[yellow]input problem[/yellow] {p}", highlight=False)


_CSS = (
    "body{font-family:sans-serif;max-width:70rem;margin:2rem auto;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}"
    "pre{background:#f6f6f6;padding:.6rem;white-space:pre-wrap;word-break:break-word}"
    "mark{background:#ffd24d}.high,.critical{color:#b00}.medium{color:#a60}.low{color:#068}"
    "section{border-top:2px solid #ddd;margin-top:1.5rem}"
)


def render_html(summary: Summary, title: str = "etude monitor report") -> str:
    """One self-contained HTML page: summary table, then every flagged trajectory with each
    finding's message shown and its evidence marked."""
    esc = html.escape
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
        f"<style>{_CSS}</style></head><body><h1>{esc(title)}</h1>",
        f"<p>{summary.trajectories} trajectories, "
        f"{sum(1 for r in summary.kept if r.findings)} with findings.</p>",
        "<table><tr><th>category</th>"
        + "".join(f"<th>{s}</th>" for s in SEVERITIES)
        + "<th>what it is</th></tr>",
    ]
    for category, text in CATEGORIES.items():
        counts = summary.flagged.get(category, Counter())
        cells = "".join(f"<td>{counts.get(s, 0)}</td>" for s in SEVERITIES)
        parts.append(f"<tr><td>{category}</td>{cells}<td>{esc(text)}</td></tr>")
    parts.append("</table>")
    if summary.problems:
        parts.append("<h2>Input problems</h2><ul>")
        parts += [f"<li>{esc(str(p))}</li>" for p in summary.problems]
        parts.append("</ul>")
    ordered = sorted(
        (r for r in summary.kept if r.findings),
        key=lambda r: -max(severity_rank(f.severity) for f in r.findings),
    )
    for r in ordered:
        parts.append(
            f"<section id='{esc(r.trajectory_id)}'><h2>{esc(r.trajectory_id)}</h2>"
            f"<p>line {r.line}, task {esc(str(r.task_id))}</p>"
        )
        for f in r.findings:
            parts.append(_finding_html(f, r))
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _finding_html(f: Finding, r: TrajectoryResult) -> str:
    esc = html.escape
    where = "final patch" if f.message_index is None else f"message {f.message_index}"
    head = (
        f"<h3 class='{f.severity}'>{esc(f.category)} · {f.severity} · "
        f"{f.confidence:.2f} · {esc(where)}</h3>"
        f"<p>{esc(f.explanation)} <small>({f.detector}: {esc(f.rule)})</small></p>"
    )
    context = _context(f, r)
    marked = f.match if f.match and f.match in context else f.evidence
    return head + f"<pre>{_highlight(context, marked)}</pre>"


def _context(f: Finding, r: TrajectoryResult, width: int = 2000) -> str:
    """The text the evidence came from: the message (with its tool calls) or the patch."""
    traj = r.trajectory
    if traj is None:
        return f.evidence
    if f.message_index is None:
        text = traj.patch or ""
    else:
        m: ScannedMessage = traj.messages[f.message_index]
        text = f"[{m.role}] {m.text()}"
    needle = f.match or f.evidence.strip("…")
    at = text.find(needle)
    if len(text) <= width:
        return text
    start = max(0, (at if at >= 0 else 0) - width // 3)
    return ("…" if start else "") + text[start : start + width] + "…"


def _highlight(text: str, evidence: str) -> str:
    """HTML-escaped `text` with the evidence excerpt (or its longest line) marked."""
    needle = evidence.strip("…").strip()
    at = text.find(needle) if needle else -1
    # fall back to the longest line, then the longest word, found verbatim
    candidates = [*sorted(needle.splitlines(), key=len, reverse=True)]
    candidates += sorted((w for w in needle.split() if len(w) >= 4), key=len, reverse=True)
    for candidate in candidates if at < 0 else []:
        at = text.find(candidate)
        if at >= 0:
            needle = candidate
            break
    if at < 0:
        return html.escape(text)
    end = at + len(needle)
    return (
        html.escape(text[:at])
        + "<mark>"
        + html.escape(text[at:end])
        + "</mark>"
        + html.escape(text[end:])
    )
