"""The dual-mesh part of `etude demo`: a MoE training run on 8 gloo ranks under torchrun.

The headline layout (dense HSDP R_d=2 x S_d=2 with CP=2, experts EP=8: 8 ranks where a
single shared mesh needs 16) trains the tiny MoE with sharded Muon on the standard
library's sources for `STEPS` steps (about a minute on 2 CPU cores). The section shows the
loss falling, throughput, and the collective bytes per step of each family next to what
the layout predicts.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

from etude.demo.section import DemoSection
from etude.parallel.analytic import by_family, step_collective_bytes
from etude.parallel.train import iter_log, load_config

STEPS = 60
CONFIG = Path(__file__).resolve().parents[2] / "configs" / "tiny-8rank.toml"


def _svg_curve(values: list[float], width: int = 420, height: int = 140) -> str:
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    points = " ".join(
        f"{i * width / max(1, len(values) - 1):.1f},{height - (v - lo) / span * height:.1f}"
        for i, v in enumerate(values)
    )
    return (
        f"<svg width='{width}' height='{height + 20}' xmlns='http://www.w3.org/2000/svg'>"
        f"<polyline fill='none' stroke='#1f77b4' stroke-width='2' points='{points}'/>"
        f"<text x='0' y='{height + 16}' font-size='12'>loss {hi:.2f} → {values[-1]:.2f} "
        f"over {len(values)} logged steps</text></svg>"
    )


def run(out_dir: Path) -> DemoSection:
    """Train for `STEPS` steps on 8 ranks into `out_dir/run`; summarize the log."""
    cfg = load_config(CONFIG)
    run_dir = out_dir / "run"
    log = out_dir / "torchrun.log"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        str(cfg.layout.world_size),
        "-m",
        "etude",
        "train",
        "--config",
        str(CONFIG),
        "--steps",
        str(STEPS),
        "--out",
        str(run_dir),
    ]
    with log.open("w") as f:
        subprocess.run(
            command, stdout=f, stderr=subprocess.STDOUT, check=True, env={**os.environ}, timeout=600
        )
    records = list(iter_log(run_dir / "log.jsonl"))
    losses = [r["loss"] for r in records]
    ranks = records[-1]["ranks"]
    families = sorted({f for r in ranks for f in r["collective_bytes"]})
    measured = {
        f: sum(r["collective_bytes"].get(f, 0) for r in ranks) / len(ranks) for f in families
    }
    predicted = by_family(
        step_collective_bytes(cfg.model_config(), cfg.layout, cfg.batch_size, cfg.seq_len)
    )
    figures: dict[str, str | float | int] = {
        "layout": cfg.layout.describe(),
        "loss at first log": round(losses[0], 3),
        "loss at last log": round(losses[-1], 3),
        "tokens/s (median)": round(statistics.median(r["tokens_per_s"] for r in records)),
    }
    for family in sorted(measured):
        figures[f"{family} collective bytes/step, mean over ranks (predicted)"] = (
            f"{measured[family]:,.0f} ({predicted.get(family, 0):,.0f})"
        )
    state = records[-1]["ranks"][0]["state_bytes"]
    for family, parts in state.items():
        figures[f"{family} params+grads+optimizer bytes, rank 0"] = f"{sum(parts.values()):,}"
    return DemoSection(
        title="dual-mesh HSDP MoE training",
        summary=(
            f"The tiny MoE trained {STEPS} steps with sharded Muon on 8 gloo ranks "
            f"({cfg.layout.describe()}); loss {losses[0]:.2f} → {losses[-1]:.2f}. Collective "
            "bytes per step of each family are measured by a dispatch mode on every "
            "collective and set beside the layout's analytic prediction."
        ),
        figures=figures,
        html=_svg_curve(losses),
        files=["run/log.jsonl", "torchrun.log"],
    )
