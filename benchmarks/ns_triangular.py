"""Block-triangular symmetric products against full ones in the Gram iteration, timed side
by side on this CPU, on a Kimi K2 expert unit scaled down.

K2's routed-expert unit is 2048 x 7168, split at etude's block of 256 rows into 8 x 8
blocks (36 of 64 computed in each symmetric product). Scaled down by 4 it is 512 x 1792;
with blocks of 64 rows it keeps K2's 8 x 8 blocks, and blocks of 128 rows (4 x 4) and 256
(2 x 2) show how the saving shrinks with fewer, larger blocks. Per dtype (fp32, bf16) and
repeat, every variant runs once on the same batch, interleaved so that load drift hits
them alike; figures are medians over repeats, and `full_over_triangular` (> 1: the
triangular products are faster) is the ratio of medians, next to the ratio of counted
FLOPs it would reach if time followed FLOPs. One thread, niced: the machine is shared.
This says nothing about a GPU, where the panels are small GEMMs of their own
(`benchmarks/muon_calibrate.py` measures those).

It also times the host's cost per torch op of a batched NS call, the planner's
`host_per_op_s`: the call on a 1 x 16 x 40 batch (compute negligible) over the ops it
issues (`etude.optim.plan.ns_host_ops`), for the full and the triangular products.

Run: nice -n 10 .venv/bin/python benchmarks/ns_triangular.py
     (writes benchmarks/results/ns_triangular.json)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from etude.optim.newton_schulz import (
    QUINTIC,
    coefficient_schedule,
    gram_restarts,
    newton_schulz,
    ns_flops,
)
from etude.optim.plan import ns_host_ops

SHAPE = (512, 1792)  # K2's expert unit 2048 x 7168, scaled down by 4
BLOCKS = (64, 128, 256)
STEPS = 5
RESULTS = Path(__file__).parent / "results" / "ns_triangular.json"


def variants() -> dict[str, tuple[str, int | None]]:
    """name -> (NS method, block)."""
    return {"full": ("gram", None)} | {
        f"triangular_block_{b}": ("gram_triangular", b) for b in BLOCKS
    }


def measure(batch: int, dtype: torch.dtype, repeats: int) -> dict:
    schedule = coefficient_schedule(QUINTIC, STEPS)
    g = torch.randn(batch, *SHAPE, generator=torch.Generator().manual_seed(0))
    runs = variants()
    samples: dict[str, list[float]] = {name: [] for name in runs}
    outputs = {}
    for name, (method, block) in runs.items():  # warm-up, and the results to compare
        outputs[name] = newton_schulz(g, schedule, dtype=dtype, method=method, block=block)
    for _ in range(repeats):
        for name, (method, block) in runs.items():
            t0 = time.perf_counter()
            newton_schulz(g, schedule, dtype=dtype, method=method, block=block)
            samples[name].append(time.perf_counter() - t0)
    full = outputs["full"].float()
    rows = {}
    for name, (method, block) in runs.items():
        flops = batch * ns_flops(*SHAPE, STEPS, method, block=block)
        median = statistics.median(samples[name])
        rows[name] = {
            "method": method,
            "block": block,
            "flops": flops,
            "median_s": median,
            "gflop_per_s": flops / median / 1e9,
            "samples_s": samples[name],
            "max_abs_diff_to_full": float((outputs[name].float() - full).abs().max()),
        }
    for name, row in rows.items():
        if name != "full":
            row["full_over_triangular"] = rows["full"]["median_s"] / row["median_s"]
            row["flop_ratio"] = rows["full"]["flops"] / row["flops"]
    return rows


def host_per_op(repeats: int) -> dict:
    """Median seconds per op of NS calls on a tiny fp32 batch, where the host is all."""
    schedule = coefficient_schedule(QUINTIC, STEPS)
    g = torch.randn(1, 16, 40, generator=torch.Generator().manual_seed(1))
    rows = {}
    for method, block in (("gram", None), ("gram_triangular", 2)):
        ops = ns_host_ops((16, 40), STEPS, method, block)
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            newton_schulz(g, schedule, dtype=torch.float32, method=method, block=block)
            samples.append(time.perf_counter() - t0)
        median = statistics.median(samples)
        rows[f"{method}_block_{block}"] = {"ops": ops, "median_s": median, "per_op_s": median / ops}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--batch", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    report = {
        "benchmark": "ns_triangular",
        "shape": list(SHAPE),
        "batch": args.batch,
        "ns_steps": STEPS,
        "gram_restarts": list(gram_restarts(STEPS)),
        "repeats": args.repeats,
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpus": os.cpu_count(),
            "threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "load_average_at_start": list(os.getloadavg()),
        },
        "dtypes": {},
    }
    for dtype in (torch.float32, torch.bfloat16):
        rows = measure(args.batch, dtype, args.repeats)
        report["dtypes"][str(dtype).removeprefix("torch.")] = rows
        for name, row in rows.items():
            ratio = row.get("full_over_triangular")
            print(
                f"{dtype} {name}: {row['median_s'] * 1e3:.1f} ms, {row['gflop_per_s']:.1f} GFLOP/s"
                + (f", full / this {ratio:.3f} (FLOPs {row['flop_ratio']:.3f})" if ratio else ""),
                flush=True,
            )
    report["host_per_op"] = host_per_op(5 * args.repeats)
    for name, row in report["host_per_op"].items():
        print(f"host {name}: {row['ops']} ops, {row['per_op_s'] * 1e6:.2f} us per op", flush=True)
    report["machine"]["load_average_at_end"] = list(os.getloadavg())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
