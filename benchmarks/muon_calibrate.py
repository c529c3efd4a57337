"""Measure on one GPU the rates `etude plan muon --rates FILE` predicts from (about 3-5
minutes on an H200; never needed for CI):

1. batched bf16 Newton–Schulz FLOP/s for every Kimi K2 unit shape and formulation
   ("standard", "gram", and "gram_triangular" where the short side exceeds one block of
   `--ns-block` rows, etude's `SYMMETRIC_BLOCK` by default: its symmetric products are one
   small GEMM per panel of rows, which may run well below a full product's rate; they are
   opt-in in Muon and the planner until this measures them), in
   batches of about 2**24 elements: what one rank orthogonalizes per job at Muon's default
   `job_numel` (one K2 expert unit), counted at the FLOPs `ns_flops` says each runs;
2. the bandwidth of Muon's fused elementwise passes (`elementwise.py`: compiled on CUDA)
   on 2**28 fp32 elements, counted at the bytes `element_bytes` says the passes move;
3. one Muon step against `torch.optim.Muon` on a slice of a K2 MoE layer (8 experts of
   each projection as stacked `[E, out, in]` tensors, given to torch.optim.Muon as one 2-D
   parameter per expert, plus the MLA projections as whole matrices), both with the
   standard NS (the same math), and ours again with `ns_method="auto"` (Muon's default:
   full products) and with `ns_block` set to the calibration's block (the opt-in);
4. batched NS with FP8 steps (`fp8_steps`, rows with that key) for each K2 unit shape that
   `--ns-fp8` gives FP8 steps from benchmarks/results/ns_accuracy.json, at the FLOPs it
   runs (FP8 and bf16 products together): the planner's `--ns-fp8` then takes these in
   place of the stated rates and the casts' bytes; with each, its polar error over the
   5-step bf16 quintic's on the same matrix, both run on the GPU (`vs_quintic5`: the
   accuracy table's ratio with cuBLAS's FP8 and bf16 numerics, to set beside the CPU's);
5. the fraction of the fused elementwise passes that hides under Newton–Schulz when they
   run beside it on a side stream (Muon's `overlap_elementwise`): a batched NS call on K2's
   most numerous unit shape (the expert projections), in the formulation the
   recommendation runs, about Muon's recommended job of 2**27 elements, on the current
   stream, and the two passes on a side stream, repeated until alone they take about
   `PASSES_SHARE` of the NS call's time; each timed alone and both together (`"overlap"`,
   which `--rates` takes in place of the stated `elementwise_overlap`).

Medians of a few timed repetitions after a warm-up; CUDA is synchronized around each.
`--tiny` runs the same code on the tiny preset's unit shapes with small tensors on CPU and
blocks of 16 rows (the test of this script); its JSON is a valid `--rates` file for
`--model tiny` planned with `ns_block=16`. The planner takes a "gram_triangular" rate only
when it plans with the block it was measured at (`--ns-block`).

Run (on the GPU machine), then predict from its rates:
    OUT=benchmarks/results/muon_calibration_h200.json
    .venv/bin/python benchmarks/muon_calibrate.py --out $OUT
    .venv/bin/etude plan muon --model kimi-k2 --gpus 256 --rates $OUT
    .venv/bin/etude plan muon --model kimi-k2 --gpus 256 --rates $OUT \
        --ns-block 256 --job-numel 134217728
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch

from etude.optim import Muon
from etude.optim.elementwise import apply_update, element_bytes, fused, momentum_direction
from etude.optim.newton_schulz import (
    QUINTIC,
    SYMMETRIC_BLOCK,
    choose_method,
    coefficient_schedule,
    newton_schulz,
    ns_flops,
)
from etude.optim.ns_choice import load_accuracy_table, ns_schedule_for
from etude.optim.plan_models import planner_model, unit_shapes

STEPS = 5
ACCURACY = Path(__file__).parent / "results" / "ns_accuracy.json"
# The passes' time over NS's in K2's recommended step at 256 GPUs (32.0 of 175.3 ms,
# docs/muon-planner.md): the overlap is measured at the mix the step has.
PASSES_SHARE = 0.18


def timed(fn: Callable[[], object], device: torch.device, reps: int) -> float:
    """Median seconds of `fn()` over `reps` runs after one warm-up run."""
    fn()
    samples = []
    for _ in range(reps):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def ns_rates(
    model: str, device: torch.device, batch_numel: int, block: int, reps: int
) -> list[dict]:
    """Batched bf16 NS FLOP/s per unit shape of `model` and method."""
    schedule = coefficient_schedule(QUINTIC, STEPS)
    rows = []
    for unit in unit_shapes(planner_model(model)):
        short, long = unit.shape
        batch = max(1, batch_numel // (short * long))
        g = torch.randn(batch, short, long, device=device, dtype=torch.bfloat16)
        methods = ["standard", "gram"] + (["gram_triangular"] if short > block else [])
        for method in methods:
            seconds = timed(
                lambda g=g, m=method: newton_schulz(g, schedule, method=m, block=block),
                device,
                reps,
            )
            flops = batch * ns_flops(short, long, STEPS, method, block=block)
            rows.append(
                {
                    "unit": unit.name,
                    "shape": [short, long],
                    "method": method,
                    "batch": batch,
                    "seconds": seconds,
                    "flop_per_s": flops / seconds,
                }
            )
            print(f"  NS {short}x{long} {method}: {flops / seconds / 1e12:.1f} TFLOP/s", flush=True)
    return rows


def fp8_choices(model: str) -> list[tuple[tuple[int, int], str, int]]:
    """(unit shape, method, FP8 steps) to time: for kimi-k2 what `--ns-fp8` chooses per shape
    from the measured accuracy table; for the tiny preset the Gram iteration with 2 FP8
    steps on each shape (so that the test of this script runs the FP8 path)."""
    shapes = [u.shape for u in unit_shapes(planner_model(model))]
    if model == "tiny":
        return [(shape, "gram", 2) for shape in shapes]
    table = load_accuracy_table(ACCURACY, fp8=True)
    chosen = [(shape, ns_schedule_for(shape, "auto", table)) for shape in shapes]
    return [(shape, c.method, c.fp8_steps) for shape, c in chosen if c.fp8_steps]


def fp8_vs_quintic5(short: int, long: int, method: str, k: int, device: torch.device) -> float:
    """Polar error of 5 quintic steps with `k` FP8 steps over that of 5 standard bf16 quintic
    steps, both run on `device`, on ns_accuracy.py's gradient-like matrix (seed 0): the
    accuracy table's ratio with this device's FP8 and bf16 numerics (cuBLAS on a GPU)."""
    from ns_accuracy import gradient_like, polar_factor  # a sibling script, as run

    g = gradient_like(short, long, 0).to(device)
    polar = polar_factor(g).float()
    schedule = coefficient_schedule(QUINTIC, STEPS)

    def error(**options) -> float:
        o = newton_schulz(g[None], schedule, **options)[0].float()
        return float((o - polar).norm() / polar.norm())

    return error(method=method, fp8_steps=k) / error(method="standard")


def fp8_ns_rates(model: str, device: torch.device, batch_numel: int, reps: int) -> list[dict]:
    """Batched NS FLOP/s (all its FLOPs over its time) of the FP8 choices (`fp8_choices`),
    each with its accuracy ratio on this device (`fp8_vs_quintic5`)."""
    schedule = coefficient_schedule(QUINTIC, STEPS)
    rows = []
    for (short, long), method, k in fp8_choices(model):
        batch = max(1, batch_numel // (short * long))
        g = torch.randn(batch, short, long, device=device, dtype=torch.bfloat16)
        seconds = timed(
            lambda g=g, m=method, k=k: newton_schulz(g, schedule, method=m, fp8_steps=k),
            device,
            reps,
        )
        flops = batch * ns_flops(short, long, STEPS, method)
        rows.append(
            {
                "shape": [short, long],
                "method": method,
                "fp8_steps": k,
                "batch": batch,
                "seconds": seconds,
                "flop_per_s": flops / seconds,
                "vs_quintic5": fp8_vs_quintic5(short, long, method, k, device),
            }
        )
        print(
            f"  NS {short}x{long} {method} {k} FP8 steps: {flops / seconds / 1e12:.1f} TFLOP/s, "
            f"x{rows[-1]['vs_quintic5']:.3f} the bf16 quintic's polar error"
        )
    return rows


def fused_passes(device: torch.device, numel: int) -> Callable[[], None]:
    """Muon's two passes (momentum + Nesterov + cast; decay + update) on `numel` fp32
    elements with a bf16 direction, compiled into one kernel each on CUDA, as one call."""
    compiled = device.type == "cuda"
    direction = fused(momentum_direction) if compiled else momentum_direction
    update = fused(apply_update) if compiled else apply_update
    grad, buf, param = (torch.randn(numel, device=device) for _ in range(3))
    ortho = torch.randn(numel, device=device, dtype=torch.bfloat16)

    def passes() -> None:
        direction(grad, buf, 0.95, True, ortho)
        update(param, ortho, 0.999, 0.01)

    return passes


def elementwise_rate(device: torch.device, numel: int, reps: int) -> dict:
    """Bandwidth of the two fused passes (`fused_passes`)."""
    compiled = device.type == "cuda"
    seconds = timed(fused_passes(device, numel), device, reps)
    # The two passes alone (the copies to and from NS are counted apart: `moved`).
    per_element = element_bytes(4, 2, fused=True).local
    return {
        "numel": numel,
        "compiled": compiled,
        "bytes_per_element": per_element,
        "seconds": seconds,
        "bytes_per_s": numel * per_element / seconds,
    }


def overlap_fraction(
    model: str, device: torch.device, batch_numel: int, numel: int, block: int, reps: int
) -> dict:
    """Seconds of a batched NS call (`[B, short, long]` of the unit shape `model` has most
    units of) on the current stream, of the fused passes on `numel` fp32 elements repeated
    to about `PASSES_SHARE` of it, and of both issued together, the passes on a side stream
    (on CPU, where there are no streams, one after the other); the fraction of the passes'
    time hidden, `(ns + passes - together) / passes`, clipped to [0, 1]."""
    unit = max(unit_shapes(planner_model(model)), key=lambda u: u.count)
    short, long = unit.shape
    method = choose_method(short, long, STEPS, block)
    g = torch.randn(max(1, batch_numel // (short * long)), short, long, device=device)
    g = g.to(torch.bfloat16)
    schedule = coefficient_schedule(QUINTIC, STEPS)
    compiled = device.type == "cuda"
    passes_once = fused_passes(device, numel)

    def ns():
        newton_schulz(g, schedule, method=method, block=block)

    ns_s, once_s = timed(ns, device, reps), timed(passes_once, device, reps)
    repeats = max(1, round(PASSES_SHARE * ns_s / once_s))

    def passes():
        for _ in range(repeats):
            passes_once()

    side = torch.cuda.Stream(device) if compiled else None

    def together():
        if side is None:
            ns()
            passes()
            return
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            passes()
        ns()
        torch.cuda.current_stream(device).wait_stream(side)

    passes_s, together_s = timed(passes, device, reps), timed(together, device, reps)
    fraction = min(1.0, max(0.0, (ns_s + passes_s - together_s) / passes_s))
    print(
        f"  overlap: NS {ns_s * 1e3:.2f} ms, passes {passes_s * 1e3:.2f} ms, together "
        f"{together_s * 1e3:.2f} ms: {fraction:.2f} of the passes hidden",
        flush=True,
    )
    return {
        "shape": [short, long],
        "method": method,
        "batch": g.shape[0],
        "numel": numel,
        "repeats": repeats,
        "side_stream": side is not None,
        "ns_s": ns_s,
        "passes_s": passes_s,
        "together_s": together_s,
        "fraction": fraction,
    }


def muon_step(device: torch.device, scale: int, block: int, reps: int) -> dict:
    """One step of etude's Muon vs torch.optim.Muon on a slice of a K2 MoE layer."""
    d, f, e = 7168 // scale, 2048 // scale, 8
    mla = [(1536 // scale, d), (12288 // scale, 1536 // scale), (576 // scale, d)]
    mla += [(16384 // scale, 512 // scale), (d, 8192 // scale)]
    gen = torch.Generator(device=device).manual_seed(0)
    stacks = [(e, f, d), (e, f, d), (e, d, f)]
    ours = [torch.randn(s, device=device, generator=gen) for s in stacks + mla]
    grads = [torch.randn(p.shape, device=device, generator=gen) for p in ours]
    theirs = [p[i].clone() for p in ours[:3] for i in range(e)] + [p.clone() for p in ours[3:]]
    their_grads = [g[i] for g in grads[:3] for i in range(e)] + grads[3:]
    numel = sum(p.numel() for p in ours)

    def step_of(opt, params, gs):
        def step():
            for p, g in zip(params, gs):
                p.grad = g
            opt.step()

        return step

    results = {"elements": numel, "experts_per_projection": e, "scale": scale}
    runs = {
        "etude_standard": (ours, grads, {"ns_method": "standard"}),
        "etude_auto": (ours, grads, {"ns_method": "auto"}),
        "etude_auto_ns_block": (ours, grads, {"ns_method": "auto", "ns_block": block}),
        "torch_optim_muon": (theirs, their_grads, None),
    }
    for name, (tensors, gs, options) in runs.items():
        params = [torch.nn.Parameter(t.clone()) for t in tensors]
        opt = (
            torch.optim.Muon(params, lr=0.02)
            if options is None
            else Muon(params, lr=0.02, **options)
        )
        results[name + "_s"] = timed(step_of(opt, params, gs), device, reps)
        print(f"  Muon step {name}: {results[name + '_s'] * 1e3:.1f} ms", flush=True)
    results["torch_over_etude_standard"] = (
        results["torch_optim_muon_s"] / results["etude_standard_s"]
    )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="calibration JSON to write")
    parser.add_argument("--tiny", action="store_true", help="tiny shapes on CPU (a test)")
    parser.add_argument(
        "--ns-block", type=int, default=None, help="rows of the symmetric products' blocks"
    )
    args = parser.parse_args()
    if args.tiny:
        device, model, batch_numel, numel, scale, reps, block = (
            torch.device("cpu"),
            "tiny",
            1 << 14,
            1 << 16,
            64,
            1,
            16,
        )
    else:
        if not torch.cuda.is_available():
            raise SystemExit("muon_calibrate: no CUDA device; use --tiny for the CPU check")
        device, model, batch_numel, numel, scale, reps, block = (
            torch.device("cuda"),
            "kimi-k2",
            1 << 24,
            1 << 28,
            1,
            5,
            SYMMETRIC_BLOCK,
        )
    if args.ns_block is not None:
        if args.ns_block < 1:
            raise SystemExit(f"muon_calibrate: --ns-block must be >= 1, got {args.ns_block}")
        block = args.ns_block
    t0 = time.perf_counter()
    report = {
        "benchmark": "muon_calibrate",
        "device": torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else platform.processor() or "cpu",
        "torch": torch.__version__,
        "model": model,
        "ns_steps": STEPS,
        "ns_block": block,
        "ns": ns_rates(model, device, batch_numel, block, reps)
        + fp8_ns_rates(model, device, batch_numel, reps),
        "elementwise": elementwise_rate(device, numel, reps),
        "overlap": overlap_fraction(model, device, 8 * batch_numel, numel, block, reps),
        "muon_step": muon_step(device, scale, block, reps),
    }
    report["wall_s"] = time.perf_counter() - t0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    tmp.replace(out)
    print(f"wrote {out} in {report['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
