"""The coding loop's miniature for `etude demo`: one task synthesized from the example
repository, one loop iteration of the local SmolLM2 on it (two rollouts in sandboxes,
grading, monitor, hints, the RL + KL loss and a Muon step on the last decoder layers, a
checkpoint), then `etude monitor`'s code path over the rollouts with its HTML report."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

from rich.console import Console

from etude.monitor.monitor import monitor_file
from etude.monitor.report import Summary, render_html
from etude.recipes.coding.config import parse_config
from etude.recipes.coding.loop import train
from etude.synth import EXAMPLE_REPO
from etude.synth.pipeline import synthesize


def run(out_dir: Path):  # -> etude.demo.DemoSection
    """One short coding-loop iteration and the monitor over its rollouts (~2 minutes)."""
    from etude.demo import DemoSection

    out_dir = Path(out_dir).resolve()
    console = Console(stderr=True)
    shutil.rmtree(out_dir / "run", ignore_errors=True)  # a fresh miniature, not a resume
    summary = synthesize([EXAMPLE_REPO], out_dir / "synth", workers=2, max_candidates=1)
    if not summary["repositories"][0]["tasks"]:
        raise RuntimeError(f"no task synthesized: {summary['repositories'][0]['rejected']}")
    cfg = parse_config(
        {
            "env": "coding",
            "out_dir": str(out_dir / "run"),
            "iterations": 1,
            "tasks": {"tasks_dir": str(out_dir / "synth" / "tasks")},
            "model": {"max_new_tokens": 96},
            "rollout": {
                "tasks_per_iteration": 1,
                "group_size": 2,
                "max_turns": 3,
                "max_tokens": 256,
                "python_env": False,
            },
            "optim": {"train_layers": 2},
        }
    )
    (it,) = train(cfg, console)
    rollouts = out_dir / "run" / "iter_0001" / "rollouts.jsonl"
    monitored = Summary()
    for item in monitor_file(rollouts, out_dir / "synth" / "tasks"):
        monitored.add(item)
    (out_dir / "monitor-report.html").write_text(
        render_html(monitored, "etude monitor: coding-loop rollouts")
    )
    rows = []
    for line in (out_dir / "run" / "iter_0001" / "graded.jsonl").read_text().splitlines():
        r = json.loads(line)
        calls = [
            c["function"]["name"]
            for m in r["messages"]
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
        ]
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(v))}</td>"
                for v in (
                    r["task_id"],
                    r["end"],
                    r["turns"],
                    ", ".join(calls) or "—",
                    r["graded_reward"],
                    r["reward"],
                    len(r["findings"]),
                    ", ".join(h["category"] for h in r["hints"]) or "—",
                )
            )
            + "</tr>"
        )
    table = (
        "<table><tr><th>task</th><th>end</th><th>turns</th><th>tool calls</th>"
        "<th>graded</th><th>reward</th><th>findings</th><th>hints</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    s = it["seconds"]
    return DemoSection(
        title="coding-agent loop",
        summary=(
            f"One iteration of SmolLM2-135M-Instruct on {len(it['tasks'])} synthesized task: "
            f"{it['episodes']} sandboxed rollouts ({it['ends']}), mean reward "
            f"{it['reward_mean']:.2f}, {it['hacks_found']} zeroed by the monitor, hints "
            f"{it['hints_by_category'] or 'none'}; the monitor flagged "
            f"{sum(1 for r in monitored.kept if r.findings)} of {monitored.trajectories} "
            f"rollouts. A 135M model rarely uses the tools well: the point is the loop."
        ),
        figures={
            "episodes": it["episodes"],
            "mean reward": round(it["reward_mean"], 3),
            "hacks found": it["hacks_found"],
            "trained trajectories": it["trained_trajectories"],
            **{f"KL {k}": round(v, 4) for k, v in it["kl"].items()},
            **{f"{k} s": v for k, v in s.items()},
        },
        html=table,
        files=[
            f"{out_dir.name}/run/metrics.jsonl",
            f"{out_dir.name}/run/iter_0001/graded.jsonl",
            f"{out_dir.name}/monitor-report.html",
        ],
    )
