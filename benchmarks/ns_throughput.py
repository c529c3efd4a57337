"""Single-process Newton–Schulz throughput: etude's batched NS against a per-unit loop.

`etude.optim.Muon` orthogonalizes all units (matrices, heads, experts) of one shape as one
batch `[B, m, n]`; `torch.optim.Muon` loops over parameters, one 2-D NS at a time. This
benchmark times both on the same units, those of the tiny MoE and of the scaled-up model of
`muon_dist.py`, in bf16 and fp32:

- batched: `etude.optim.newton_schulz` once per unit shape;
- loop_torch: `torch.optim._muon._zeropower_via_newtonschulz` (what `torch.optim.Muon` runs)
  once per unit; bf16 only, since it always casts to bf16;
- loop_etude: `etude.optim.newton_schulz` on one unit at a time, which isolates batching
  from kernel differences (fp32 and bf16);
- muon_step: a whole `etude.optim.Muon.step()` on the model's Muon parameters as plain
  tensors (momentum, the same batched NS, update), to show the optimizer's overhead on top.

Variants are interleaved within each repeat so that drift in the machine's load hits them
alike; figures are medians over repeats. ratio = loop time / batched time (> 1: batching is
faster). Results must agree: fp32 batched equals the fp32 loop (rtol 1e-5), and the bf16
difference to torch's loop is recorded.

Run: .venv/bin/python benchmarks/ns_throughput.py   (writes benchmarks/results/ns_throughput.json)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from muon_dist import MODELS, granularity, muon_shapes
from torch import Tensor
from torch.optim._muon import _zeropower_via_newtonschulz

from etude.optim import QUINTIC, Muon, newton_schulz, ns_flops
from etude.optim.newton_schulz import coefficient_schedule
from etude.optim.units import unit_boxes, unit_matrix_shape

NS_STEPS, EPS = 5, 1e-7
SCHEDULE = coefficient_schedule(QUINTIC, NS_STEPS)
RESULTS = Path(__file__).parent / "results" / "ns_throughput.json"


def unit_batches(model: str, seed: int = 0) -> dict[tuple[int, int], Tensor]:
    """One random `[B, m, n]` batch per unit shape, B = how many units of that shape."""
    counts: dict[tuple[int, int], int] = {}
    for s in muon_shapes(model):
        g = granularity(s.muon)
        shape = unit_matrix_shape(s.shape, g)
        counts[shape] = counts.get(shape, 0) + len(unit_boxes(s.shape, g))
    gen = torch.Generator().manual_seed(seed)
    return {shape: torch.randn(n, *shape, generator=gen) for shape, n in counts.items()}


def batched(batches: dict, dtype: torch.dtype) -> list[Tensor]:
    """etude: one batched Newton–Schulz per unit shape."""
    return [newton_schulz(b, SCHEDULE, eps=EPS, dtype=dtype) for b in batches.values()]


def loop_etude(batches: dict, dtype: torch.dtype) -> list[Tensor]:
    """etude's Newton–Schulz on one unit at a time."""
    return [
        torch.cat([newton_schulz(u[None], SCHEDULE, eps=EPS, dtype=dtype) for u in b])
        for b in batches.values()
    ]


def loop_torch(batches: dict, dtype: torch.dtype) -> list[Tensor]:
    """torch.optim.Muon's Newton–Schulz (always bf16) on one unit at a time."""
    assert dtype == torch.bfloat16, "torch.optim.Muon's Newton–Schulz is bf16 only"
    return [
        torch.stack([_zeropower_via_newtonschulz(u, QUINTIC, NS_STEPS, EPS) for u in b])
        for b in batches.values()
    ]


def muon_step(model: str, dtype: torch.dtype) -> Callable[[], Any]:
    """A closure running one etude Muon step on the model's Muon parameters (one process)."""
    groups = []
    for i, s in enumerate(muon_shapes(model)):
        p = torch.nn.Parameter(torch.randn(s.shape, generator=torch.Generator().manual_seed(i)))
        p.grad = torch.randn(s.shape, generator=torch.Generator().manual_seed(1000 + i))
        groups.append({"params": [(s.name, p)], **s.muon})
    return Muon(groups, lr=0.02, ns_dtype=dtype).step


def time_variants(
    variants: dict[str, Callable[[], Any]], repeats: int, warmup: int
) -> dict[str, list[float]]:
    """Seconds per call of each variant, interleaved, after `warmup` untimed rounds."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    for k in range(warmup + repeats):
        for name, fn in variants.items():
            t0 = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - t0
            if k >= warmup:
                times[name].append(elapsed)
    return times


def max_rel_diff(a: list[Tensor], b: list[Tensor]) -> float:
    return max(
        float((x.float() - y.float()).abs().max() / y.float().abs().max()) for x, y in zip(a, b)
    )


def bench_model(model: str, repeats: int, warmup: int) -> dict:
    """Times and agreement of the three variants on one model's units, per dtype."""
    batches = unit_batches(model)
    flops = sum(len(b) * ns_flops(*shape, NS_STEPS) for shape, b in batches.items())
    out: dict[str, Any] = {
        "unit_shapes": {f"{m}x{n}": len(b) for (m, n), b in batches.items()},
        "units": sum(len(b) for b in batches.values()),
        "ns_flops_per_call": flops,
    }
    for dtype in (torch.bfloat16, torch.float32):
        variants = {
            "batched": lambda d=dtype: batched(batches, d),
            "loop_etude": lambda d=dtype: loop_etude(batches, d),
        }
        if dtype == torch.bfloat16:
            variants["loop_torch"] = lambda: loop_torch(batches, torch.bfloat16)
        variants["muon_step"] = muon_step(model, dtype)
        times = time_variants(variants, repeats, warmup)
        medians = {name: statistics.median(t) for name, t in times.items()}
        row: dict[str, Any] = {f"{name}_median_s": medians[name] for name in variants}
        for name in variants:
            row[f"{name}_gflops"] = flops / medians[name] / 1e9
            if name != "batched":
                row[f"ratio_{name}_over_batched"] = medians[name] / medians["batched"]
        reference = batched(batches, dtype)
        row["loop_etude_max_rel_diff"] = max_rel_diff(loop_etude(batches, dtype), reference)
        if dtype == torch.bfloat16:
            row["loop_torch_max_rel_diff"] = max_rel_diff(loop_torch(batches, dtype), reference)
        else:
            row["loop_equals_batched_rtol_1e-5"] = all(
                torch.allclose(x, y, rtol=1e-5, atol=1e-6)
                for x, y in zip(loop_etude(batches, dtype), reference)
            )
        out[str(dtype).removeprefix("torch.")] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--summarize", type=Path, help="only print the table of an existing result file"
    )
    args = parser.parse_args()
    if args.summarize:
        print(summary(json.loads(args.summarize.read_text())))
        return

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    result: dict[str, Any] = {
        "machine": {
            "cpu_count": os.cpu_count(),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "threads": args.threads,
            "load_average_at_start": os.getloadavg(),
        },
        "repeats": args.repeats,
        "warmup": args.warmup,
        "ns_steps": NS_STEPS,
        "models": {m: bench_model(m, args.repeats, args.warmup) for m in args.models},
    }
    result["machine"]["load_average_at_end"] = os.getloadavg()
    result["wall_s"] = time.perf_counter() - t0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(summary(result))
    if not all(r["float32"]["loop_equals_batched_rtol_1e-5"] for r in result["models"].values()):
        raise SystemExit("batched fp32 Newton–Schulz differs from the per-unit loop")


def summary(result: dict) -> str:
    """A markdown table of the figures (the one quoted in docs/muon.md)."""
    lines = [
        "| model | NS dtype | units | batched ms | batched GFLOP/s | torch loop ms "
        "| etude loop ms | torch loop / batched | etude loop / batched | Muon.step ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for model, r in result["models"].items():
        for dtype in ("bfloat16", "float32"):
            row = r[dtype]
            torch_ms = row.get("loop_torch_median_s")
            torch_ratio = row.get("ratio_loop_torch_over_batched")
            lines.append(
                f"| {model} | {dtype} | {r['units']} | {row['batched_median_s'] * 1e3:.2f}"
                f" | {row['batched_gflops']:.0f}"
                f" | {'n/a (bf16 only)' if torch_ms is None else f'{torch_ms * 1e3:.2f}'}"
                f" | {row['loop_etude_median_s'] * 1e3:.2f}"
                f" | {'n/a' if torch_ratio is None else f'{torch_ratio:.2f}'}"
                f" | {row['ratio_loop_etude_over_batched']:.2f}"
                f" | {row['muon_step_median_s'] * 1e3:.2f} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
