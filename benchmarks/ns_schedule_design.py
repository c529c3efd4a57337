"""A 4-step Newton–Schulz schedule designed on the scalar map: how wide an interval of
normalized singular values can 4 degree-5 steps bring into the 5-step quintic's band?

On the scalar map only (`etude.optim.ns_design`; no matrix is looked at):

1. the quintic (3.4445, -4.7750, 2.0315) bounces between its two critical values, its band
   (about [0.682, 1.202]); `ell_quintic_5` is the smallest normalized singular value whose
   whole interval [ell, 1] its 5 steps bring into that band (and what 4 and 6 steps do there);
2. the greedy minimax schedule of Polar Express (arXiv:2505.16932) for exactly 4 steps on
   [ell_quintic_5, 1], with the 1.01 safety factor on all but the last step: the narrowest
   band any 4-step degree-5 composition reaches on that interval (the paper's optimality
   theorem; without the safety factor, also reported, it is exactly that optimum);
3. `ell_band_matched`: the ell at which the greedy 4-step schedule's band has the same ratio
   of its ends (hi / lo) as the quintic's, and that schedule: etude's "minimax_4"
   (`etude.optim.newton_schulz.MINIMAX_4`, which a test checks against this design).

After the design, not part of it: `o_proj_spectrum`, why `benchmarks/ns_accuracy.py` finds
minimax_4 worse than the quintic on `o_proj` (128 x 7168): the quantiles of that benchmark's
matrix's normalized singular values and the scalar maps' RMS distance from 1 on them.

Run: .venv/bin/python benchmarks/ns_schedule_design.py   (seconds; writes
benchmarks/results/ns_schedule_design.json)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from etude.optim.newton_schulz import MINIMAX_4, QUINTIC
from etude.optim.ns_design import (
    band_matched_ell,
    covered_interval,
    minimax_schedule,
    quintic_band,
    schedule_band,
)

sys.path.insert(0, str(Path(__file__).parent))
STEPS = 4
SAFETY = 1.01
QUANTILES = (0.0, 0.1, 0.5, 0.9, 1.0)


def o_proj_spectrum() -> dict:
    """The scalar maps on ns_accuracy.py's o_proj matrix (seed 4: its place among the units)."""
    from ns_accuracy import gradient_like  # a sibling script (sys.path above)

    s = torch.linalg.svdvals(gradient_like(128, 7168, 4).double())
    x = s / s.norm()
    q = torch.tensor(QUANTILES, dtype=torch.float64)

    def mapped(schedule):
        y = x
        for a, b, c in schedule:
            y = y * (a + y * y * (b + c * y * y))
        return {
            "quantiles": y.quantile(q).tolist(),
            "rms_distance_from_1": float(((1 - y) ** 2).mean().sqrt()),
        }

    return {
        "quantiles_at": list(QUANTILES),
        "normalized_singular_values": x.quantile(q).tolist(),
        "quintic_5": mapped([QUINTIC] * 5),
        "minimax_4": mapped(MINIMAX_4),
    }


def design() -> dict:
    band = quintic_band(QUINTIC)
    ell_q = covered_interval(QUINTIC, 5, band)
    on_quintic = minimax_schedule(ell_q, STEPS, SAFETY)
    on_quintic_exact = minimax_schedule(ell_q, STEPS, 1.0)
    ratio = band[1] / band[0]
    ell_m = band_matched_ell(STEPS, ratio, SAFETY)
    matched = minimax_schedule(ell_m, STEPS, SAFETY)

    def entry(schedule, ell):
        lo, hi = schedule_band(schedule, ell)
        return {
            "ell": ell,
            "coefficients": [list(c) for c in schedule],
            "band": [lo, hi],
            "band_ratio": hi / lo,
            "max_error_from_1": max(1 - lo, hi - 1),
        }

    return {
        "benchmark": "ns_schedule_design",
        "steps": STEPS,
        "safety": SAFETY,
        "quintic": {
            "coefficients": list(QUINTIC),
            "band": list(band),
            "band_ratio": ratio,
            "ell_quintic_5": ell_q,
            "band_on_ell_quintic_5": {
                f"{k}_steps": list(schedule_band([QUINTIC] * k, ell_q)) for k in (4, 5, 6)
            },
        },
        "minimax_4_on_quintic_interval": entry(on_quintic, ell_q),
        "minimax_4_on_quintic_interval_no_safety": entry(on_quintic_exact, ell_q),
        "minimax_4_band_matched": entry(matched, ell_m),
        "o_proj_spectrum": o_proj_spectrum(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "ns_schedule_design.json")
    )
    args = parser.parse_args()
    report = design()
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
