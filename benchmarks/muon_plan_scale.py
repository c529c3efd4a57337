"""Sharded Muon at scale, predicted: the kimi-k2 preset (1.03T parameters) on 256, 512 and
1024 H200s, and the tiny preset on one node, with `etude.optim.plan`.

Each run plans once (the optimizer's own `group_units` / `assign_owners` / `job_chunks` on
the layout `etude plan muon` chooses) and predicts the step under two settings, side by side:

- default: Muon's defaults (`job_numel = 2**24` elements per member per job) and the cost
  model's default assumptions; this is the prediction for the optimizer as it ships;
- ns_at_matmul_rate: the same with Newton–Schulz at the 0.80 of peak a lent H200 reached on
  a plain bf16 matmul, an optimistic bound on the NS term.

The planner's wall time on this machine is recorded per run.

Run: .venv/bin/python benchmarks/muon_plan_scale.py   (writes
benchmarks/results/muon_plan_scale.json)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import replace
from pathlib import Path

import torch

from etude.optim.plan import Assumptions, plan, predict

RUNS = [("kimi-k2", 256), ("kimi-k2", 512), ("kimi-k2", 1024), ("tiny", 8)]
MATMUL_RATE = 0.80  # measured bf16 matmul rate of a lent H200, fraction of peak


def run(model: str, gpus: int, gpu: str) -> dict:
    """Plan `model` on `gpus` GPUs once and predict the step under each setting."""
    planned = plan(model, gpus)
    default = Assumptions()
    settings = {
        "default": default,
        "ns_at_matmul_rate": replace(default, ns_efficiency=MATMUL_RATE),
    }
    return {
        "model": model,
        "gpus": gpus,
        "gpu": gpu,
        "planner_s": planned.planner_s,
        "planner_cpu_s": planned.planner_cpu_s,
        "predictions": {name: predict(planned, gpu, a) for name, a in settings.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="h200", choices=["h100", "h200"])
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "muon_plan_scale.json")
    )
    args = parser.parse_args()
    results = []
    for model, gpus in RUNS:
        t0 = time.perf_counter()
        results.append(run(model, gpus, args.gpu))
        r = results[-1]
        print(
            f"{model} on {gpus} GPUs: planned in {r['planner_s']:.1f} s "
            f"({r['planner_cpu_s']:.1f} s CPU)",
            flush=True,
        )
        for name, p in r["predictions"].items():
            t = p["time"]
            print(
                f"  {name:40s} step {t['step_s']:.4f} s  (ns {t['ns_s']:.4f}, exposed comm "
                f"{t['exposed_comm_s']:.4f}, elementwise {t['elementwise_s']:.4f}, host "
                f"{t['host_s']:.4f}; dominant {t['dominant']})"
            )
        print(f"  total {time.perf_counter() - t0:.1f} s")
    out = {
        "benchmark": "muon_plan_scale",
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
        },
        "runs": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
