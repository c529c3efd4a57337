"""The coding loop's run report: `<out_dir>/report.html`, rewritten after every iteration from
`metrics.jsonl` (so a resumed run's report covers the whole run). It embeds PNG curves
(matplotlib) of reward (train and held-out), first-turn tool-call rate, tool errors by kind,
turns and tokens, the update's importance ratios and the time per phase, then a table per
iteration. It is written to a temporary name and renamed, so a reader never sees half of it.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
from pathlib import Path

# (title, y label, [(summary key, sub-key or None, legend)]) per chart
CHARTS = [
    (
        "reward",
        "mean reward",
        [("reward_mean", None, "train"), ("heldout_reward", None, "held-out")],
    ),
    (
        "first turns calling a tool",
        "share",
        [("tool_call_rate", None, "train"), ("heldout_tool_call_rate", None, "held-out")],
    ),
    (
        "tool errors (train)",
        "calls per iteration",
        [
            ("tool_errors", "tool_not_found", "tool not found"),
            ("tool_errors", "invalid_arguments", "invalid arguments"),
            ("tool_errors", "command_failed", "command failed"),
            ("tool_errors", "command_timeout", "command timeout"),
            ("tool_errors", "tool_failed", "file tool failed"),
        ],
    ),
    (
        "turns and tokens (train, per episode)",
        "mean",
        [("turns_mean", None, "turns"), ("tokens_mean", None, "tokens / 10")],
    ),
    (
        "importance ratio π/π_sampler",
        "ratio",
        [
            ("ratios", "ratio_mean", "mean"),
            ("ratios", "ratio_min", "min"),
            ("ratios", "ratio_max", "max"),
            ("ratios", "clip_frac", "clipped share"),
        ],
    ),
    (
        "seconds per phase",
        "seconds",
        [
            ("seconds", "rollout", "rollout"),
            ("seconds", "grading", "grading"),
            ("seconds", "monitoring", "monitoring"),
            ("seconds", "training", "training"),
            ("seconds", "heldout", "held-out evaluation"),
        ],
    ),
]
_SCALE = {"tokens_mean": 0.1}


def read_metrics(out_dir: Path) -> list[dict]:
    """The summaries of `out_dir/metrics.jsonl`, in order (a line cut short is skipped)."""
    path = Path(out_dir) / "metrics.jsonl"
    summaries = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            summaries.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return summaries


def series(summaries: list[dict], key: str, sub: str | None) -> tuple[list[int], list[float]]:
    """(iterations, values) of `summary[key]` (or `summary[key][sub]`) where it is a number."""
    xs, ys = [], []
    for s in summaries:
        value = s.get(key)
        if sub is not None:
            value = value.get(sub) if isinstance(value, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            xs.append(s["iteration"])
            ys.append(value * _SCALE.get(key, 1.0))
    return xs, ys


def chart_png(summaries: list[dict], title: str, ylabel: str, lines: list) -> bytes | None:
    """One chart as PNG bytes, or None when no summary has any of its values."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn = [(series(summaries, key, sub), label) for key, sub, label in lines]
    if not any(xs for (xs, _), _ in drawn):
        return None
    fig, ax = plt.subplots(figsize=(5.0, 3.2), dpi=90)
    for (xs, ys), label in drawn:
        if xs:
            ax.plot(xs, ys, marker="o", label=label)
    ax.set_title(title)
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_cell(v)}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value) or "-"
    return "-" if value is None else str(value)


def render_report(summaries: list[dict], title: str) -> str:
    """The report's HTML: every chart with data as an embedded PNG, then a table per
    iteration of its summary's keys."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;margin:2em}img{margin:4px}"
        "table{border-collapse:collapse;margin-bottom:1.5em}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}"
        "</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        "<p>Iteration 0 is the held-out evaluation before any update (the warm start); "
        "iteration N's held-out figures are measured after its update.</p>",
    ]
    for chart_title, ylabel, lines in CHARTS:
        png = chart_png(summaries, chart_title, ylabel, lines)
        if png is not None:
            data = base64.b64encode(png).decode("ascii")
            alt = html.escape(chart_title)
            parts.append(f"<img alt='{alt}' src='data:image/png;base64,{data}'>")
    for s in summaries:
        parts.append(f"<h2>iteration {s['iteration']}</h2><table>")
        for key, value in s.items():
            if key == "iteration":
                continue
            parts.append(
                f"<tr><th>{html.escape(key)}</th><td>{html.escape(_cell(value))}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(out_dir: Path) -> Path:
    """Write `out_dir/report.html` from `out_dir/metrics.jsonl` (atomically); returns it."""
    out_dir = Path(out_dir)
    html_text = render_report(read_metrics(out_dir), f"etude coding loop: {out_dir.name}")
    path = out_dir / "report.html"
    staging = path.with_name(path.name + ".tmp")
    staging.write_text(html_text)
    os.replace(staging, path)
    return path
