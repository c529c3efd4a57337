"""The synth part's miniature for `etude demo`: a few tasks from the shipped example
repository (one of each kind: function or class, whole module, method group), their audit
results, and the grader scoring the reference solution (1) and
the untouched workspace (0)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from etude.demo.section import DemoSection
from etude.synth import EXAMPLE_REPO
from etude.synth.grade import grade, solved_workspace
from etude.synth.pipeline import synthesize
from etude.synth.task import load_task


def run(out_dir: Path) -> DemoSection:
    """Synthesize three tasks from the example repository and grade one of them twice."""
    out_dir = Path(out_dir)
    summary = synthesize([EXAMPLE_REPO], out_dir / "synth", workers=2, max_candidates=3)
    repo = summary["repositories"][0]
    if not repo["tasks"]:
        raise RuntimeError(f"no valid task from the example repository: {repo['rejected']}")
    rows, task_dir = [], out_dir / "synth" / "tasks" / repo["tasks"][0]
    for name in repo["tasks"]:
        task = load_task(out_dir / "synth" / "tasks" / name)
        rows.append(
            f"<tr><td>{html.escape(name)}</td><td>{task['feature_kind']}</td>"
            f"<td>{len(task['tests']['fail_to_pass'])}</td>"
            f"<td>{len(task['tests']['pass_to_pass'])}</td><td>{task['audit']['tokens']}</td>"
            f"<td>{len(task['audit']['findings'])}</td><td>{task['difficulty']['score']}</td></tr>"
        )
    solved = grade(task_dir, solved_workspace(task_dir, out_dir / "solved-workspace"))
    untouched = grade(task_dir, task_dir / "workspace")
    (out_dir / "grades.json").write_text(json.dumps([solved, untouched], indent=2))
    table = (
        "<table><tr><th>task</th><th>kind</th><th>fail-to-pass</th><th>pass-to-pass</th>"
        "<th>audit tokens</th><th>leaks found</th><th>difficulty</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    statement = load_task(task_dir)["problem_statement"]
    return DemoSection(
        title="feature-deletion tasks",
        summary=(
            f"{repo['valid']} valid tasks of {repo['candidates']} candidates from the example "
            f"repository; each passed the leak audit. Grading {repo['tasks'][0]}: reference "
            f"solution {solved['fraction']:.2f} (binary {solved['binary']}), untouched "
            f"workspace {untouched['fraction']:.2f} (binary {untouched['binary']})."
        ),
        figures={
            "valid tasks": repo["valid"],
            "candidates": repo["candidates"],
            "reference reward": solved["fraction"],
            "untouched reward": untouched["fraction"],
            "grading seconds": solved["seconds"],
        },
        html=table + f"<pre>{html.escape(statement)}</pre>",
        files=[f"{out_dir.name}/synth/summary.json", f"{out_dir.name}/grades.json"],
    )
