"""Sharded Muon at scale, predicted: the kimi-k2 preset (Kimi K2 with MLA attention, 1.03T
parameters) on 256, 512 and 1024 H200s, and the tiny preset on one node, with
`etude.optim.plan`, each lever of the optimizer's step time shown on its own.

Per GPU count it plans four times (the optimizer's own `group_units` / `assign_owners` /
`job_chunks` on the layout `etude plan muon` chooses), for NS method "standard" or "auto"
(Gram where it has fewer FLOPs) and dense units repeated on every replica or spread over
them, and predicts the step under these settings, side by side:

- baseline: standard NS on every unit, dense units on every replica, unfused elementwise
  (56 B per local element): the optimizer before these levers, on the MLA shapes;
- gram, spread, fused: the baseline with one lever on (NS method "auto"; dense units
  spread over replicas; two fused elementwise passes, 32 B per local element);
- gram_fused: Gram and fused on, dense units on every replica (`spread_replicas=False`);
- all: the three levers together (Muon's defaults);
- all_ns_at_matmul_rate: the same with NS at the 0.80 of peak a lent H200 reached on a
  plain bf16 matmul, an optimistic bound on the NS term.

NS runs at the stated 0.60 of peak in every other setting: no GPU has measured it yet
(`benchmarks/muon_calibrate.py` would). The planner's wall time on this machine is recorded.

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
# setting -> (NS method, spread dense units over replicas, fused elementwise, NS efficiency)
SETTINGS = {
    "baseline": ("standard", False, False, None),
    "gram": ("auto", False, False, None),
    "spread": ("standard", True, False, None),
    "fused": ("standard", False, True, None),
    "gram_fused": ("auto", False, True, None),
    "all": ("auto", True, True, None),
    "all_ns_at_matmul_rate": ("auto", True, True, MATMUL_RATE),
}


def run(model: str, gpus: int, gpu: str) -> dict:
    """Plan `model` on `gpus` GPUs once per (method, spread) and predict every setting."""
    plans, planner = {}, {}
    for method, spread, _, _ in SETTINGS.values():
        if (method, spread) not in plans:
            plans[method, spread] = plan(model, gpus, method=method, spread_replicas=spread)
            planned = plans[method, spread]
            planner[f"{method}/{'spread' if spread else 'repeated'}"] = {
                "wall_s": planned.planner_s,
                "cpu_s": planned.planner_cpu_s,
            }
    predictions = {}
    for name, (method, spread, fused, efficiency) in SETTINGS.items():
        a = Assumptions(fused_elementwise=fused)
        if efficiency is not None:
            a = replace(a, ns_efficiency=efficiency)
        predictions[name] = predict(plans[method, spread], gpu, a)
    return {
        "model": model,
        "gpus": gpus,
        "gpu": gpu,
        "planner": planner,
        "predictions": predictions,
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
        print(f"{model} on {gpus} GPUs: planner {r['planner']}", flush=True)
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
