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

Variants, each with its FLOPs as run (`ns_flops`):

- 5 steps of the fixed quintic and of Polar Express: standard fp32 (the reference), standard
  bf16 (torch.optim.Muon), Gram bf16 with etude's restarts (`gram_restarts`, marked
  `_etude`: once, before step 2), the same with block-triangular symmetric products
  (`gram_triangular_bf16`, etude's "gram_triangular", blocks of `SYMMETRIC_BLOCK` rows: on
  units whose short side fits in one block, the same FLOPs as "gram", rounded in another
  order, `a I` added after the product and `Q^T` for `Q`) and with every
  square product mirrored, also `Q R` and `P Q`, symmetric only in exact arithmetic
  (`gram_triangular_commuting_bf16`, not adopted), and with each other restart pattern:
  every 2 steps,
  first only before step 3, none; and Gram bf16 after an AOL rescaling (the
  rows scaled by the inverse square roots of the absolute row sums of R = X X^T, which
  bounds the spectral norm by 1 more tightly than the Frobenius norm, as Turbo-Muon does;
  free here, since R is formed anyway, but it orthogonalizes D X, not X).
- Fewer steps (the quintic and Polar Express in 4 steps, Polar Express in 3, and the two
  schedules designed for 4 steps on the scalar map by `benchmarks/ns_schedule_design.py`:
  `minimax_4`, etude's "minimax_4", and `minimax_4_quintic_interval`, the greedy minimax
  schedule on the 5-step quintic's interval): standard fp32, standard bf16, Gram bf16 with
  etude's restarts (full and triangular), the mirrored-commuting variant and the
  AOL-rescaled Gram.

Each variant's `vs_quintic5` is its polar error over that of 5 standard bf16 quintic steps
(torch.optim.Muon's default) on the same matrix: etude adopts a variant only if it stays
within 1.10 of it on every shape.

FP8 variants (`--fp8`): 5 quintic steps, standard or Gram (etude's restarts), with the
products of the first k steps (k = 1..5) as `fp8_matmul`s (`newton_schulz(fp8_steps=k)`;
the Gram iteration keeps its products that apply Q to X in bf16). Each is measured on the
shape's matrix and on two more (seeds + 100, + 200), each against its own 5-step bf16
quintic, and its `vs_quintic5` is the worst of the three: a single matrix is not enough to
adopt a lower precision on. Per-shape schedules (`ns_choice`) may take an FP8 variant
only when Muon's `ns_fp8=True` opts in.

The dense FFN unit (7168 x 18432, 3 units in layer 0) is left out by default: its fp32
reference alone is 22.6 TFLOP, hours on a 2-core CPU (`--dense` adds it).

Run: .venv/bin/python benchmarks/ns_accuracy.py   (resumable; writes
benchmarks/results/ns_accuracy.json after each shape)
     .venv/bin/python benchmarks/ns_accuracy.py --schedules minimax_4 ...   (only those
     schedules, on every shape, merged into the existing file's rows; the yardstick is the
     file's quintic row, which the same seeds reproduce)
     .venv/bin/python benchmarks/ns_accuracy.py --fp8   (the FP8 variants, merged into the
     existing file's quintic rows as `<formulation>_fp8_<k>`)
     .venv/bin/python benchmarks/ns_accuracy.py --summarize   (its tables, as in docs/muon.md)
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
    QUINTIC,
    SYMMETRIC_BLOCK,
    choose_method,
    coefficient_schedule,
    gram_iteration,
    gram_restarts,
    newton_schulz,
    ns_flops,
    ns_fp8_flops,
    symmetric_matmul,
    symmetric_matmul_flops,
)
from etude.optim.ns_design import covered_interval, minimax_schedule, quintic_band
from etude.optim.plan_models import planner_model, unit_shapes

STEPS = 5
CPU_FLOP_LIMIT = 5e12  # units whose fp32 reference costs more are left out unless --dense
# name -> (coefficients, steps); the first is the yardstick (torch.optim.Muon's default)
SCHEDULES = {
    "quintic": (QUINTIC, 5),
    "polar_express": ("polar_express", 5),
    "quintic_4_steps": (QUINTIC, 4),
    "polar_express_4_steps": ("polar_express", 4),
    "polar_express_3_steps": ("polar_express", 3),
    "minimax_4": ("minimax_4", 4),
    # the greedy minimax schedule on the interval the quintic's 5 steps cover (its band is
    # wider than the quintic's: benchmarks/results/ns_schedule_design.json)
    "minimax_4_quintic_interval": (
        minimax_schedule(covered_interval(QUINTIC, 5, quintic_band(QUINTIC)), 4),
        4,
    ),
}
COMPARABLE = 1.10  # adopted only within this factor of the 5-step quintic's polar error
# FP8 variants (--fp8): 5 quintic steps, the first k of them with FP8 products, measured on
# the shape's matrix and on FP8_SEEDS more; their vs_quintic5 is the worst of those.
FP8_METHODS = {"standard_bf16": "standard", "gram_bf16_restarts_2_etude": "gram"}
FP8_SEEDS = (100, 200)


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


def normalized_bf16(g: torch.Tensor) -> torch.Tensor:
    x = g.to(torch.bfloat16)
    return x / x.norm(dim=(-2, -1), keepdim=True)


def aol_gram(g: torch.Tensor, schedule, restarts) -> torch.Tensor:
    """Gram bf16 on `g` `[B, s, l]` after AOL row scaling D = diag(sum_j |R_ij|)^-1/2."""
    x = normalized_bf16(g)
    d = (x @ x.mT).abs().sum(-1).rsqrt()
    return gram_iteration(x * d[..., :, None], schedule, restarts, normalize=False)


def commuting_triangular(g: torch.Tensor, schedule, restarts) -> torch.Tensor:
    """Gram bf16 on `g` `[B, s, l]` with every square product mirrored, also Q R and P Q
    (symmetric only while Q and P commute with R, as they do in exact arithmetic)."""
    x, block = normalized_bf16(g), SYMMETRIC_BLOCK

    def product(u, v):
        return symmetric_matmul(u, v, block)

    q = None
    for i, (a, b, c) in enumerate(schedule):
        if q is None or i in restarts:
            if q is not None:
                x = q @ x
            r = product(x, x.mT)
            q, s = None, r
        else:
            s = product(product(q, r), q)
        poly = symmetric_matmul(s, s, block, add=s, beta=b, alpha=c)
        poly.diagonal(dim1=-2, dim2=-1).add_(a)
        q = poly if q is None else product(poly, q)
    return q @ x


def commuting_triangular_flops(short: int, long: int, steps: int) -> int:
    phases = [b - a for a, b in zip([0, *gram_restarts(steps)], [*gram_restarts(steps), steps])]
    sym = symmetric_matmul_flops
    return sum(
        sym(short, long, SYMMETRIC_BLOCK)
        + 2 * short * short * long
        + (1 + 4 * (k - 1)) * sym(short, short, SYMMETRIC_BLOCK)
        for k in phases
    )


def variants(schedule, steps: int, short: int, long: int) -> dict:
    """name -> (function of a [1, short, long] batch, FLOPs of one unit as run)."""
    standard = ns_flops(short, long, steps, "standard")
    etude = gram_restarts(steps)

    def gram_with(restarts):
        return lambda g: gram_iteration(normalized_bf16(g), schedule, restarts)

    rows = {
        "standard_fp32": (
            lambda g: newton_schulz(g, schedule, dtype=torch.float32, method="standard"),
            standard,
        ),
        "standard_bf16": (
            lambda g: newton_schulz(g, schedule, dtype=torch.bfloat16, method="standard"),
            standard,
        ),
        f"gram_bf16_restarts_{'_'.join(map(str, etude)) or 'none'}_etude": (
            lambda g: newton_schulz(g, schedule, dtype=torch.bfloat16, method="gram"),
            ns_flops(short, long, steps, "gram"),
        ),
        "gram_triangular_bf16": (
            lambda g: newton_schulz(
                g, schedule, dtype=torch.bfloat16, method="gram_triangular", block=SYMMETRIC_BLOCK
            ),
            ns_flops(short, long, steps, "gram_triangular", block=SYMMETRIC_BLOCK),
        ),
        "gram_triangular_commuting_bf16": (
            lambda g: commuting_triangular(g, schedule, etude),
            commuting_triangular_flops(short, long, steps),
        ),
    }
    if steps == STEPS:
        for restarts in [r for r in [(2,), (2, 4), (3,), ()] if r != etude]:
            name = f"gram_bf16_restarts_{'_'.join(map(str, restarts)) or 'none'}"
            rows[name] = (gram_with(restarts), ns_flops(short, long, steps, "gram", restarts))
    # as run here, R is formed twice (2 s^2 l more); folded into the first phase it would not be
    rows["gram_bf16_aol"] = (
        lambda g: aol_gram(g, schedule, etude),
        ns_flops(short, long, steps, "gram") + 2 * short * short * long,
    )
    return rows


def _schedule(coefficients, steps: int) -> list:
    """A named or fixed schedule through `coefficient_schedule`; a designed list as it is."""
    if isinstance(coefficients, list):
        return coefficients
    return coefficient_schedule(coefficients, steps)


def measure(
    name: str, shape: tuple[int, int], count: int, seed: int, only=None, yardstick=None
) -> dict:
    """One unit's rows for every schedule of SCHEDULES (or those in `only`); the yardstick
    is the 5-step bf16 quintic's polar error, measured here unless `yardstick` gives it."""
    short, long = sorted(shape)
    g = gradient_like(short, long, seed)
    polar = polar_factor(g).float()
    out = {
        "unit": name,
        "shape": [short, long],
        "units_in_model": count,
        # what "auto" takes with symmetric products opted into (ns_block=SYMMETRIC_BLOCK)
        "chosen_method": choose_method(short, long, STEPS, SYMMETRIC_BLOCK),
        "flops": {
            m: ns_flops(short, long, STEPS, m, block=SYMMETRIC_BLOCK)
            for m in ("standard", "gram", "gram_triangular")
        },
        "schedules": {},
    }
    for sched_name, (coefficients, steps) in SCHEDULES.items():
        if only is not None and sched_name not in only:
            continue
        schedule = _schedule(coefficients, steps)
        rows, reference = {}, None
        for variant, (fn, flops) in variants(schedule, steps, short, long).items():
            t0 = time.perf_counter()
            o = fn(g[None])[0].float()
            seconds = time.perf_counter() - t0
            if reference is None:
                reference = o
            lo, hi = singular_range(o)
            error = float((o - polar).norm() / polar.norm())
            rows[variant] = {
                "flops": flops,
                "polar_error": error,
                "vs_fp32_standard": float((o - reference).norm() / reference.norm()),
                "singular_min": lo,
                "singular_max": hi,
                "cpu_s": seconds,
            }
            print(f"  {name} {sched_name} {variant}: {rows[variant]}", flush=True)
        out["schedules"][sched_name] = rows
    if yardstick is None:
        yardstick = out["schedules"]["quintic"]["standard_bf16"]["polar_error"]
    for rows in out["schedules"].values():
        for row in rows.values():
            row["vs_quintic5"] = row["polar_error"] / yardstick
    return out


def measure_fp8(name: str, shape: tuple[int, int], seed: int) -> dict:
    """The FP8 variants' rows of one unit (5 quintic steps, the first k with FP8 products,
    k = 1..5, in each formulation of FP8_METHODS), each the worst over the unit's seed and
    FP8_SEEDS: its polar error over that of 5 standard bf16 quintic steps on the same
    matrix."""
    short, long = sorted(shape)
    schedule = coefficient_schedule(QUINTIC, STEPS)
    variants = {
        f"{variant}_fp8_{k}": (method, k)
        for variant, method in FP8_METHODS.items()
        for k in range(1, STEPS + 1)
    }
    per_seed: dict[str, list[dict]] = {v: [] for v in variants}
    for s in (seed, *(seed + extra for extra in FP8_SEEDS)):
        g = gradient_like(short, long, s)[None]
        polar = polar_factor(g[0]).float()

        def error(o: torch.Tensor, polar: torch.Tensor = polar) -> float:
            return float((o[0].float() - polar).norm() / polar.norm())

        yardstick = error(newton_schulz(g, schedule, method="standard"))
        for variant, (method, k) in variants.items():
            t0 = time.perf_counter()
            o = newton_schulz(g, schedule, method=method, fp8_steps=k)
            seconds = time.perf_counter() - t0
            lo, hi = singular_range(o[0].float())
            err = error(o)
            per_seed[variant].append(
                {
                    "seed": s,
                    "polar_error": err,
                    "vs_quintic5": err / yardstick,
                    "singular_min": lo,
                    "singular_max": hi,
                    "cpu_s": seconds,
                }
            )
        print(
            f"  {name} fp8 seed {s}: "
            + ", ".join(f"{v} {rows[-1]['vs_quintic5']:.3f}" for v, rows in per_seed.items()),
            flush=True,
        )
    rows = {}
    for variant, seeds in per_seed.items():
        method, k = variants[variant]
        worst = max(seeds, key=lambda r: r["vs_quintic5"])
        rows[variant] = {
            "flops": ns_flops(short, long, STEPS, method),
            "fp8_flops": ns_fp8_flops(short, long, STEPS, method, k),
            "fp8_steps": k,
            "polar_error": worst["polar_error"],
            "vs_quintic5": worst["vs_quintic5"],
            "singular_min": min(r["singular_min"] for r in seeds),
            "singular_max": max(r["singular_max"] for r in seeds),
            "seeds": seeds,
        }
    return rows


def _cell(row: dict) -> str:
    lo, hi = row["singular_min"], row["singular_max"]
    err = f"{row['polar_error']:.3f}" if row["polar_error"] < 10 else f"{row['polar_error']:.3g}"
    return f"{err} (x{row['vs_quintic5']:.2f}) [{lo:.2f}, {hi:.3g}]"


def summarize(report: dict) -> str:
    """Markdown tables of a report: polar error (x the 5-step quintic's) [singular range]."""
    five = [
        "standard_bf16",
        "gram_bf16_restarts_2_etude",
        "gram_triangular_bf16",
        "gram_triangular_commuting_bf16",
        "gram_bf16_restarts_2_4",
        "gram_bf16_restarts_3",
        "gram_bf16_restarts_none",
        "gram_bf16_aol",
    ]
    lines = [
        "| unit | shape | units | schedule | GFLOP standard / gram / triangular | "
        + " | ".join(five)
        + " |",
        "|---|---|---:|---|---:|" + "---|" * len(five),
    ]
    fewer = ["standard_bf16", "gram_bf16_restarts_2_etude", "gram_triangular_bf16", "gram_bf16_aol"]
    short = [
        "| unit | shape | schedule | GFLOP standard / gram / triangular | "
        + " | ".join(fewer)
        + " |",
        "|---|---|---|---:|" + "---|" * len(fewer),
    ]
    for u in report["units"]:
        unit, shape = u["unit"].split(".")[-2], "x".join(map(str, u["shape"]))
        for name, rows in u["schedules"].items():
            gflops = (
                f"{rows['standard_bf16']['flops'] / 1e9:.1f} / "
                f"{rows['gram_bf16_restarts_2_etude']['flops'] / 1e9:.1f} / "
                f"{rows['gram_triangular_bf16']['flops'] / 1e9:.1f}"
                if "gram_bf16_restarts_2_etude" in rows
                else ""
            )
            if "gram_bf16_restarts_2_4" in rows:
                cells = " | ".join(_cell(rows[v]) for v in five)
                lines.append(
                    f"| {unit} | {shape} | {u['units_in_model']} | {name} | {gflops} | {cells} |"
                )
            else:
                etude = next(v for v in rows if v.endswith("_etude"))
                cells = " | ".join(
                    _cell(rows[v])
                    for v in ["standard_bf16", etude, "gram_triangular_bf16", "gram_bf16_aol"]
                )
                gflops = (
                    f"{rows['standard_bf16']['flops'] / 1e9:.1f} / "
                    f"{rows[etude]['flops'] / 1e9:.1f} / "
                    f"{rows['gram_triangular_bf16']['flops'] / 1e9:.1f}"
                )
                short.append(f"| {unit} | {shape} | {name} | {gflops} | {cells} |")
    return "\n".join(lines) + "\n\n" + "\n".join(short)


def summarize_fp8(report: dict) -> str:
    """Markdown table of the FP8 variants: worst polar error ratio over the matrices, per
    formulation and number of FP8 steps, and the share of FLOPs they run in FP8."""
    lines = [
        "| unit | shape | formulation | "
        + " | ".join(f"{k} FP8 steps" for k in range(1, STEPS + 1))
        + " |",
        "|---|---|---|" + "---:|" * STEPS,
    ]
    for u in report["units"]:
        rows = u["schedules"]["quintic"]
        unit, shape = u["unit"].split(".")[-2], "x".join(map(str, u["shape"]))
        for variant, method in FP8_METHODS.items():
            cells = []
            for k in range(1, STEPS + 1):
                row = rows.get(f"{variant}_fp8_{k}")
                cells.append(
                    ""
                    if row is None
                    else f"x{row['vs_quintic5']:.3f} ({row['fp8_flops'] / row['flops']:.0%})"
                )
            lines.append(f"| {unit} | {shape} | {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "ns_accuracy.json")
    )
    parser.add_argument("--dense", action="store_true", help="add the 18432x7168 dense FFN")
    parser.add_argument("--summarize", action="store_true", help="print --out's tables")
    parser.add_argument(
        "--schedules",
        nargs="+",
        choices=sorted(SCHEDULES),
        help="rerun only these schedules on every shape done, merged into --out's rows",
    )
    parser.add_argument(
        "--fp8",
        action="store_true",
        help="add the FP8 variants (first k of 5 quintic steps in FP8, 3 matrices each) to "
        "every shape done in --out",
    )
    args = parser.parse_args()
    if args.summarize:
        report = json.loads(Path(args.out).read_text())
        print(summarize(report))
        if any("fp8" in v for u in report["units"] for v in u["schedules"]["quintic"]):
            print("\n" + summarize_fp8(report))
        return
    out_path = Path(args.out)
    done = json.loads(out_path.read_text()) if out_path.exists() else None
    results = {r["unit"]: r for r in done["units"]} if done else {}
    units = [
        (u.name, u.shape, u.count)
        for u in unit_shapes(planner_model("kimi-k2"))
        if args.dense or ns_flops(*u.shape, STEPS) <= CPU_FLOP_LIMIT
    ]
    machine = {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
    }
    if (args.schedules or args.fp8) and not results:
        raise SystemExit(f"--schedules and --fp8 merge into an existing {out_path}; run it first")
    merging = args.schedules or (["fp8"] if args.fp8 else None)
    for seed, (name, shape, count) in enumerate(units):
        t0 = time.perf_counter()
        if args.fp8:
            if name not in results:
                continue
            results[name]["schedules"]["quintic"].update(measure_fp8(name, shape, seed))
        elif args.schedules:
            if name not in results:
                continue
            old = results[name]
            yardstick = old["schedules"]["quintic"]["standard_bf16"]["polar_error"]
            new = measure(name, shape, count, seed, set(args.schedules), yardstick)
            old["schedules"].update(new["schedules"])
        elif name in results:
            continue
        else:
            results[name] = measure(name, shape, count, seed)
        print(f"{name}: {time.perf_counter() - t0:.0f} s", flush=True)
        report = {
            "benchmark": "ns_accuracy",
            "steps": STEPS,
            "gram_restarts": list(gram_restarts(STEPS)),
            "symmetric_block": SYMMETRIC_BLOCK,
            "comparable_within": COMPARABLE,
            "yardstick": "standard bf16, 5 steps of the fixed quintic (torch.optim.Muon)",
            "input": "gradient-like: singular values ~ 1/i plus a 30% Gaussian noise floor",
            "machine": done["machine"] if merging else machine,
            "units": [results[n] for n, _, _ in units if n in results],
        }
        if args.fp8 or (done and "fp8_seeds" in done):
            report["fp8_seeds"] = ["the unit's", *FP8_SEEDS]
        if merging or (done and "merged" in done):
            # which schedules a later run added, and on what machine
            merged = [m for m in done.get("merged", []) if m["schedules"] != merging]
            if merging:
                merged.append({"schedules": merging, "machine": machine})
            report["merged"] = merged
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(report, indent=2) + "\n")
        tmp.replace(out_path)
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
