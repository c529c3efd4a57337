"""How exactly each Newton–Schulz formulation and coefficient schedule orthogonalizes the
real Kimi K2 unit shapes, against the exact polar factor (SVD), on CPU.

For every K2 unit shape (in its wide orientation; a tall unit is its transpose) one
gradient-like matrix G (singular values ~ 1/i plus a noise floor, like a momentum buffer) is
orthogonalized by each variant, and each result O is compared with:

- the polar factor U V^T of G's SVD G = U S V^T, computed in float64 from the
  eigendecomposition of the small G G^T (U S^-1 U^T G), as `polar_error` = |O - UV^T| / |UV^T|;
- the fp32 standard iteration of the same schedule, as `vs_fp32_standard` (the error the
  formulation and precision add; the schedule's own distance from U V^T is in the first);
- its singular values (min and max, from the eigenvalues of O O^T in float64).

Variants: standard fp32 (the reference), standard bf16 (torch.optim.Muon), Gram bf16 with a
restart every 2 steps (etude's "gram", `GRAM_PHASE`), every 3 steps, and never. Schedules:
the fixed quintic and Polar Express, 5 steps. FLOPs per variant are `ns_flops`.

The dense FFN unit (7168 x 18432, 3 units in layer 0) is left out by default: its fp32
reference alone is 22.6 TFLOP, hours on a 2-core CPU (`--dense` adds it).

Run: .venv/bin/python benchmarks/ns_accuracy.py   (resumable; writes
benchmarks/results/ns_accuracy.json after each shape)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch

from etude.optim.newton_schulz import (
    GRAM_PHASE,
    QUINTIC,
    choose_method,
    coefficient_schedule,
    gram_iteration,
    newton_schulz,
    ns_flops,
)
from etude.optim.plan_models import planner_model, unit_shapes

STEPS = 5
CPU_FLOP_LIMIT = 5e12  # units whose fp32 reference costs more are left out unless --dense
SCHEDULES = {"quintic": QUINTIC, "polar_express": "polar_express"}


def gradient_like(m: int, n: int, seed: int) -> torch.Tensor:
    """`[m, n]`: a decaying spectrum (singular values ~ 1/i) plus a 30 % noise floor."""
    g = torch.Generator().manual_seed(seed)
    k = min(m, n)
    scale = torch.arange(1, k + 1, dtype=torch.float32).reciprocal()
    low = (torch.randn(m, k, generator=g) * scale) @ torch.randn(k, n, generator=g)
    return low / low.norm() + 0.3 * torch.randn(m, n, generator=g) / (m * n) ** 0.5


def polar_factor(g: torch.Tensor) -> torch.Tensor:
    """U V^T of a wide `g` `[s, l]` in float64, from the eigendecomposition of G G^T."""
    g64 = g.double()
    w, u = torch.linalg.eigh(g64 @ g64.T)
    return (u * w.rsqrt()) @ u.T @ g64


def singular_range(o: torch.Tensor) -> tuple[float, float]:
    o64 = o.double()
    w = torch.linalg.eigvalsh(o64 @ o64.T).clamp(min=0).sqrt()
    return float(w.min()), float(w.max())


def variants(schedule) -> dict:
    """name -> (function of a [1, s, l] batch, FLOP method for ns_flops)."""

    def gram_every(phase):
        def run(g):
            x = g.to(torch.bfloat16)
            return gram_iteration(x / x.norm(dim=(-2, -1), keepdim=True), schedule, phase)

        return run

    return {
        "standard_fp32": (
            lambda g: newton_schulz(g, schedule, dtype=torch.float32, method="standard"),
            "standard",
        ),
        "standard_bf16": (
            lambda g: newton_schulz(g, schedule, dtype=torch.bfloat16, method="standard"),
            "standard",
        ),
        f"gram_bf16_restart_every_{GRAM_PHASE}": (
            lambda g: newton_schulz(g, schedule, dtype=torch.bfloat16, method="gram"),
            "gram",
        ),
        "gram_bf16_restart_every_3": (gram_every(3), None),
        "gram_bf16_no_restart": (gram_every(None), None),
    }


def measure(name: str, shape: tuple[int, int], count: int, seed: int) -> dict:
    short, long = sorted(shape)
    g = gradient_like(short, long, seed)
    polar = polar_factor(g).float()
    out = {
        "unit": name,
        "shape": [short, long],
        "units_in_model": count,
        "chosen_method": choose_method(short, long, STEPS),
        "flops": {m: ns_flops(short, long, STEPS, m) for m in ("standard", "gram")},
        "schedules": {},
    }
    for sched_name, coefficients in SCHEDULES.items():
        schedule = coefficient_schedule(coefficients, STEPS)
        rows, reference = {}, None
        for variant, (fn, _) in variants(schedule).items():
            t0 = time.perf_counter()
            o = fn(g[None])[0].float()
            seconds = time.perf_counter() - t0
            if reference is None:
                reference = o
            lo, hi = singular_range(o)
            rows[variant] = {
                "polar_error": float((o - polar).norm() / polar.norm()),
                "vs_fp32_standard": float((o - reference).norm() / reference.norm()),
                "singular_min": lo,
                "singular_max": hi,
                "cpu_s": seconds,
            }
            print(f"  {name} {sched_name} {variant}: {rows[variant]}", flush=True)
        out["schedules"][sched_name] = rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "ns_accuracy.json")
    )
    parser.add_argument("--dense", action="store_true", help="add the 18432x7168 dense FFN")
    args = parser.parse_args()
    out_path = Path(args.out)
    done = json.loads(out_path.read_text()) if out_path.exists() else None
    results = {r["unit"]: r for r in done["units"]} if done else {}
    units = [
        (u.name, u.shape, u.count)
        for u in unit_shapes(planner_model("kimi-k2"))
        if args.dense or ns_flops(*u.shape, STEPS) <= CPU_FLOP_LIMIT
    ]
    for seed, (name, shape, count) in enumerate(units):
        if name in results:
            continue
        t0 = time.perf_counter()
        results[name] = measure(name, shape, count, seed)
        print(f"{name}: {time.perf_counter() - t0:.0f} s", flush=True)
        report = {
            "benchmark": "ns_accuracy",
            "steps": STEPS,
            "gram_phase": GRAM_PHASE,
            "input": "gradient-like: singular values ~ 1/i plus a 30% Gaussian noise floor",
            "machine": {
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "torch": torch.__version__,
                "threads": torch.get_num_threads(),
            },
            "units": [results[n] for n, _, _ in units if n in results],
        }
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(report, indent=2) + "\n")
        tmp.replace(out_path)
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
