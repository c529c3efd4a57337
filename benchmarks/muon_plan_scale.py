"""Sharded Muon at scale, predicted: the kimi-k2 preset (Kimi K2 with MLA attention, 1.03T
parameters) on 256, 512 and 1024 H200s, and the tiny preset on one node, with
`etude.optim.plan`, each lever of the optimizer's step time shown on its own.

Per GPU count it plans once per setting of the plan a row needs (method, steps, spread,
block, per-shape schedules, FP8 steps, rebalanced owners: the optimizer's own
`group_units` / `assign_owners` / `job_chunks` on the layout `etude plan muon` chooses) and
predicts the step with the levers added one at a time, each row on top of the one before:

- baseline: standard NS (5 quintic steps) on every unit, dense units repeated on every
  replica, unfused elementwise (56 B per local element);

the rows up to big_jobs count the elementwise bytes as the runtime moved them before its
data path changed (`PREVIOUS_BYTES`: 32 B per local element fused, 56 unfused, and 18 per
owned element: pack and unpack around the all-to-all, copy into a unit buffer, stack,
norm and scale, gather), so that each row adds one lever; the two rows after it are the
changes to that path:
- gram: NS method "auto" (the Gram iteration, restarted where `gram_restarts` says, on
  every shape where it has fewer FLOPs), full products (`ns_block=None`);
- schedule_4_steps: 4 NS steps instead of 5, for reference only: no schedule with fewer
  steps kept the orthogonality error of 5 quintic steps (benchmarks/ns_accuracy.py), so
  the rows after it keep 5;
- spread: dense units spread over the replicas where the planner predicts it pays
  (`plan_and_choose_spread`; the choice is recorded);
- fused: two fused elementwise passes (32 B per local element): Muon's defaults, what
  `etude plan muon` predicts without options;
- symmetric: opt-in block-triangular symmetric products ("gram_triangular", `ns_block`
  of `SYMMETRIC_BLOCK` rows, on every shape whose short side exceeds one block), at Muon's
  default `job_numel`;
- big_jobs: the opt-in with `job_numel` of `BIG_JOBS` elements per member, so that each
  batched NS call takes several expert units and the host issues fewer calls: etude's
  recommendation (`--ns-block 256 --job-numel 134217728`), elementwise as counted before;
- one_copy: the recommendation with each element copied once to its NS input and once
  back (no separate pack and unpack, no stack copy, a rank's own pieces skip the
  all-to-all, the replicas' exchange sends nothing to itself), with the norm and scale
  passes still on every unit;
- trace_norm: the Gram iterations taking the norm from the trace of their Gram matrix
  (no norm or scale pass);

the rows up to trace_norm count the host's piece copies as the runtime issued them before
its views were located once per plan (4 torch ops per piece, no runs); the two rows after
it are those changes:
- located: every copy's views located once per plan on kept buffers, one op (its
  `copy_`) per copy;
- runs: a holder's pieces of consecutive units of one parameter going to one owner in one
  job copied as one strided view: the recommendation with copies through direction
  buffers;
- big_jobs_full_products: the same jobs with full products, for reference ("change" is
  against "fused");
- recommended_spread_always: the recommendation (runs) with `spread_replicas=True`
  forced (Muon's default);
- recommended_4_steps: the recommendation (runs) with 4 NS steps, for reference: no
  4-step schedule measured keeps the 5-step quintic's accuracy (docs/muon.md);
- recommended_ns_at_matmul_rate: the recommendation (runs) with NS at the 0.80 of
  peak a lent H200 reached on a plain bf16 matmul, an optimistic bound on the NS term;
- per_shape: the recommendation (runs) with per-shape schedules from the measured
  accuracy table (`ACCURACY`, benchmarks/results/ns_accuracy.json; Muon's and the
  planner's `ns_accuracy`): 4 steps of "minimax_4" on each unit shape where the table
  puts them within 1.10x the 5-step quintic's polar error in the formulation they would
  run and they cost fewer FLOPs, 5 quintic steps elsewhere ("change" against "runs");
- fp8: per_shape with FP8 steps opted into (Muon's `ns_fp8`, `--ns-fp8`): the table may
  also give a shape 5 quintic steps whose first k run FP8 products, at the FP8 peak's
  rate plus the HBM bytes of their operand casts and adds (`ns_fp8_bytes`), as run
  ("change" against per_shape);
- fp8_fused_casts: the same without those bytes, for reference: a bound for casts fused
  into the products that make their operands, which etude does not have;
- overlap: per_shape with the elementwise passes overlapped with NS on side streams
  (Muon's `overlap_elementwise`, its default on CUDA), the stated fraction
  (`Assumptions.elementwise_overlap`) of the overlappable passes hidden ("change" against
  per_shape); every row above runs them before and after NS;
- overlap_ideal: the same with all of the overlappable passes hidden, for reference: a
  bound;

every row above copies each piece through a direction buffer, as the runtime did before
its passes wrote and read the NS buffers themselves (`Assumptions.fold_copies=False`);
the rows after it run that change (what Muon runs):
- fold_no_overlap: per_shape with the passes writing and reading the NS buffers: a
  parameter of a group not spread over replicas (the experts) has its momentum pass
  write its direction straight into the NS stacks and send buffers and its update read
  the results where NS and the all-to-all leave them, so only the pieces received from
  peers and the spread groups' pieces are copied ("change" against per_shape);
- fold: the same with the overlap ("change" against overlap);
- fold_ideal: the same with all of the overlappable passes hidden, a bound ("change"
  against overlap_ideal);

the rows up to fold_ideal unpack the replicas' exchange and update the spread groups'
parameters after the last NS, as the runtime did before (`exchange_aside=False`); the
two rows after them issue both on the update stream beside the experts' NS (what Muon
runs with the overlap):
- aside: fold with the exchange unpacked and the dense units updated beside the experts'
  NS ("change" against fold);
- aside_ideal: the same with all of the overlappable work hidden, a bound ("change"
  against fold_ideal);

every row above runs a spread group's momentum pass whole before its first NS, the
copies to and from NS and the exchange's pack on NS's stream, and the owners as
`assign_owners` chose them before it rebalanced; the rows after them add those changes
one at a time, each "change" against the row before (what Muon runs with the overlap):
- split_momentum: aside with the dense (spread) momentum passes split: the directions of
  the replica's share before the first NS, the buffer's advance over the whole shard on
  the update stream beside the experts' NS (`Assumptions.split_momentum`);
- copies_beside: + the loads of received pieces into a job's own NS stacks and the stores
  of their results on side streams beside other jobs' NS (`Assumptions.copies_beside`);
- exchange_packed: + the replicas' exchange packed on the update stream beside the
  experts' NS (`Assumptions.exchange_packed_aside`);
- rebalanced: + the owners rebalanced from the top (`rebalance_owners`): the
  recommendation as it runs now on CUDA;
- rebalanced_ideal: the same with all of the overlappable work hidden, a bound ("change"
  against aside_ideal);
- rebalanced_no_overlap: the same without the overlap ("change" against
  fold_no_overlap);

and Muon's defaults as they run now:
- default_now: Muon's defaults (the "fused" setting) with the elementwise work and the
  host's copies as they run now, without the elementwise overlap (`etude plan muon
  --no-overlap`; default_overlap adds it), "change" against "fused";
- default_per_shape: the same with the per-shape schedules ("change" against
  default_now);
- default_overlap: Muon's defaults with the overlap, what `etude plan muon` predicts
  without options ("change" against default_now).

NS runs at the stated 0.60 of peak in every other row, the symmetric products' small
panel GEMMs included: no GPU has measured it yet (`benchmarks/muon_calibrate.py` would).
The planner's wall time on this machine is recorded.

Run: .venv/bin/python benchmarks/muon_plan_scale.py   (writes
benchmarks/results/muon_plan_scale.json)
     .venv/bin/python benchmarks/muon_plan_scale.py --summarize   (its tables, as in
     docs/muon-planner.md)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from etude.optim.elementwise import ElementBytes, element_bytes
from etude.optim.newton_schulz import SYMMETRIC_BLOCK, gram_restarts
from etude.optim.ns_choice import load_accuracy_table
from etude.optim.plan import Assumptions, plan, predict

RUNS = [("kimi-k2", 256), ("kimi-k2", 512), ("kimi-k2", 1024), ("tiny", 8)]
MATMUL_RATE = 0.80  # measured bf16 matmul rate of a lent H200, fraction of peak
BIG_JOBS = 1 << 27  # elements per member per job: about 9 K2 expert units
ROOT = Path(__file__).resolve().parent.parent
ACCURACY = ROOT / "benchmarks" / "results" / "ns_accuracy.json"  # benchmarks/ns_accuracy.py


@dataclass(frozen=True)
class Setting:
    """One row: the NS method, steps and block of symmetric products (None: full products),
    dense units spread (True / False / "auto": the planner's choice), fused elementwise, the
    NS efficiency (None: the stated one), Muon's job_numel, the elementwise data path
    ("previous", "one_copy" or "runs": `element_bytes_of`) and the host's piece copies
    ("rebuilt", "located" or "runs": `HOST_COPIES`), and whether each unit shape's
    schedule comes from the measured accuracy table (`ACCURACY`)."""

    method: str = "auto"
    steps: int = 5
    spread: bool | str = "auto"
    fused: bool = True
    ns_efficiency: float | None = None
    block: int | None = None
    job_numel: int = 1 << 24
    data_path: str = "previous"
    host_copies: str = "rebuilt"
    per_shape: bool = False
    fp8: bool = False  # FP8 steps opted into (with per_shape)
    fp8_extra_bytes: bool = True  # count their casts' and adds' bytes
    overlap: bool = False  # elementwise passes overlapped with NS (Muon's overlap_elementwise)
    overlap_fraction: float | None = None  # of them hidden; None: the stated one
    fold: bool = False  # the passes write and read the NS buffers (Assumptions.fold_copies)
    aside: bool = False  # the exchange unpacked beside NS (Assumptions.exchange_aside)
    split: bool = False  # a spread group's momentum pass split (Assumptions.split_momentum)
    copies: bool = False  # loads and stores on side streams (Assumptions.copies_beside)
    packed: bool = False  # the exchange packed beside NS (Assumptions.exchange_packed_aside)
    rebalance: bool = False  # owners rebalanced (plan(..., rebalance=True))


# (ops per piece copy, runs merged): before the views were located once per plan, located,
# and runs of pieces as one copy (what Muon runs)
HOST_COPIES = {"rebuilt": (4, False), "located": (1, False), "runs": (1, True)}


def element_bytes_of(data_path: str, fused: bool) -> ElementBytes | None:
    """Bytes per counted element of an elementwise data path (fp32 parameters, bf16 NS):
    "previous", the runtime before the copies changed (its 4 copies around the
    all-to-all per local element, 18 B per owned element); "one_copy", one copy each way
    with the norm and scale passes on every unit; "runs": None, what Muon runs now."""
    runs = element_bytes(4, 2, fused)
    if data_path == "previous":
        return replace(runs, local=runs.local + 4 * 2, moved=0, owned=18, normalized=0)
    if data_path == "one_copy":
        return replace(runs, owned=3 * 2, normalized=0)
    return None


# the levers of the data path since "aside", and the rebalanced owners: what Muon runs
LATEST = dict(split=True, copies=True, packed=True, rebalance=True)
# Muon's defaults as they run now (with the overlap)
NOW = Setting(data_path="runs", host_copies="runs", overlap=True, fold=True, aside=True, **LATEST)
# the recommendation ("runs"): what Muon runs with --ns-block 256 --job-numel 134217728
RECOMMENDED = Setting(
    block=SYMMETRIC_BLOCK, job_numel=BIG_JOBS, data_path="runs", host_copies="runs"
)
# the recommendation with per-shape schedules, the overlap and the two data-path levers
# before the latest ones ("aside")
ASIDE = replace(RECOMMENDED, per_shape=True, overlap=True, fold=True, aside=True)
SETTINGS = {
    "baseline": Setting("standard", spread=False, fused=False),
    "gram": Setting(spread=False, fused=False),
    "schedule_4_steps": Setting(steps=4, spread=False, fused=False),
    "spread": Setting(fused=False),
    "fused": Setting(),
    "symmetric": Setting(block=SYMMETRIC_BLOCK),
    "big_jobs": Setting(block=SYMMETRIC_BLOCK, job_numel=BIG_JOBS),
    "one_copy": Setting(block=SYMMETRIC_BLOCK, job_numel=BIG_JOBS, data_path="one_copy"),
    "trace_norm": Setting(block=SYMMETRIC_BLOCK, job_numel=BIG_JOBS, data_path="runs"),
    "located": Setting(
        block=SYMMETRIC_BLOCK, job_numel=BIG_JOBS, data_path="runs", host_copies="located"
    ),
    "runs": Setting(
        block=SYMMETRIC_BLOCK, job_numel=BIG_JOBS, data_path="runs", host_copies="runs"
    ),
    "big_jobs_full_products": Setting(job_numel=BIG_JOBS),
    "recommended_spread_always": Setting(
        spread=True, block=SYMMETRIC_BLOCK, job_numel=BIG_JOBS, data_path="runs", host_copies="runs"
    ),
    # for reference: 4 steps cut NS FLOPs by a fifth, but no 4-step schedule measured
    # keeps the 5-step quintic's accuracy (docs/muon.md, "A schedule designed for 4 steps")
    "recommended_4_steps": Setting(
        steps=4, block=SYMMETRIC_BLOCK, job_numel=BIG_JOBS, data_path="runs", host_copies="runs"
    ),
    "recommended_ns_at_matmul_rate": Setting(
        ns_efficiency=MATMUL_RATE,
        block=SYMMETRIC_BLOCK,
        job_numel=BIG_JOBS,
        data_path="runs",
        host_copies="runs",
    ),
    "per_shape": replace(RECOMMENDED, per_shape=True),
    "fp8": replace(RECOMMENDED, per_shape=True, fp8=True),
    "fp8_fused_casts": replace(RECOMMENDED, per_shape=True, fp8=True, fp8_extra_bytes=False),
    "overlap": replace(RECOMMENDED, per_shape=True, overlap=True),
    "overlap_ideal": replace(RECOMMENDED, per_shape=True, overlap=True, overlap_fraction=1.0),
    "fold_no_overlap": replace(RECOMMENDED, per_shape=True, fold=True),
    "fold": replace(RECOMMENDED, per_shape=True, overlap=True, fold=True),
    "fold_ideal": replace(
        RECOMMENDED, per_shape=True, overlap=True, overlap_fraction=1.0, fold=True
    ),
    "aside": replace(RECOMMENDED, per_shape=True, overlap=True, fold=True, aside=True),
    "aside_ideal": replace(
        RECOMMENDED, per_shape=True, overlap=True, overlap_fraction=1.0, fold=True, aside=True
    ),
    "split_momentum": replace(ASIDE, split=True),
    "copies_beside": replace(ASIDE, split=True, copies=True),
    "exchange_packed": replace(ASIDE, split=True, copies=True, packed=True),
    "rebalanced": replace(ASIDE, **LATEST),
    "rebalanced_ideal": replace(ASIDE, overlap_fraction=1.0, **LATEST),
    "rebalanced_no_overlap": replace(ASIDE, overlap=False, **LATEST),
    "default_now": replace(NOW, overlap=False),
    "default_per_shape": replace(NOW, overlap=False, per_shape=True),
    "default_overlap": NOW,
}


def run(model: str, gpus: int, gpu: str) -> dict:
    """Plan `model` on `gpus` GPUs once per (method, steps, spread, block, per-shape
    schedules) and predict each setting; "auto" spreading takes whichever of the two plans
    predicts the shorter step."""
    plans, planner = {}, {}
    # the table named by its path in the repository, as the report quotes it
    accuracy = replace(load_accuracy_table(ACCURACY), source=str(ACCURACY.relative_to(ROOT)))

    def planned(setting: Setting, spread: bool):
        method, steps, block = setting.method, setting.steps, setting.block
        per_shape, fp8, rebalance = setting.per_shape, setting.fp8, setting.rebalance
        key = (method, steps, spread, block, per_shape, fp8, rebalance)
        if key not in plans:
            plans[key] = p = plan(
                model,
                gpus,
                method=method,
                ns_steps=steps,
                spread_replicas=spread,
                ns_block=block,
                ns_accuracy=replace(accuracy, fp8=fp8) if per_shape else None,
                rebalance=rebalance,
            )
            name = f"{method}/{steps} steps/{'spread' if spread else 'repeated'}/block {block}"
            name += "/per-shape schedules" if per_shape else ""
            name += "/FP8 steps" if fp8 else ""
            name += "/rebalanced" if rebalance else ""
            planner[name] = {"wall_s": p.planner_s, "cpu_s": p.planner_cpu_s}
        return plans[key]

    predictions = {}
    for name, setting in SETTINGS.items():
        ops, merge = HOST_COPIES[setting.host_copies]
        a = Assumptions(
            fused_elementwise=setting.fused,
            job_numel=setting.job_numel,
            element_bytes=element_bytes_of(setting.data_path, setting.fused),
            piece_copy_ops=ops,
            merge_runs=merge,
            fp8_extra_bytes=setting.fp8_extra_bytes,
            overlap_elementwise=setting.overlap,
            fold_copies=setting.fold,
            exchange_aside=setting.aside,
            split_momentum=setting.split,
            copies_beside=setting.copies,
            exchange_packed_aside=setting.packed,
        )
        if setting.ns_efficiency is not None:
            a = replace(a, ns_efficiency=setting.ns_efficiency)
        if setting.overlap_fraction is not None:
            a = replace(a, elementwise_overlap=setting.overlap_fraction)
        options = [True, False] if setting.spread == "auto" else [setting.spread]
        reports = {s: predict(planned(setting, s), gpu, a) for s in options}
        chosen = min(reports, key=lambda s: reports[s]["time"]["step_s"])
        predictions[name] = {
            **reports[chosen],
            "spread_replicas": {
                "chosen": chosen,
                "by_planner": setting.spread == "auto",
                **{
                    f"step_s_{'spread' if s else 'repeated'}": r["time"]["step_s"]
                    for s, r in reports.items()
                },
            },
        }
    return {
        "model": model,
        "gpus": gpus,
        "gpu": gpu,
        "planner": planner,
        "predictions": predictions,
    }


LABELS = {
    "baseline": "baseline: standard NS, dense on every replica, unfused",
    "gram": "+ Gram, restarted before step {restarts}",
    "schedule_4_steps": "(+ 4 NS steps: not adopted, for reference)",
    "spread": "+ spreading where it pays",
    "fused": "+ fused elementwise (Muon's default)",
    "symmetric": "+ symmetric products, blocks of {block} (opt-in: --ns-block {block})",
    "big_jobs": "+ jobs of 2^27 elements per member (--ns-block {block} "
    "--job-numel 134217728), elementwise as counted before",
    "one_copy": "+ one copy each way to NS (no pack / unpack, no stack copy)",
    "trace_norm": "+ Gram norm from the trace",
    "located": "+ piece views located once per plan (1 op per copy)",
    "runs": "+ runs of pieces as one strided copy (recommended: --ns-block {block} "
    "--job-numel 134217728)",
    "big_jobs_full_products": "(jobs of 2^27 with full products, for reference)",
    "recommended_spread_always": "recommended, spread_replicas=True forced",
    "recommended_4_steps": "(recommended with 4 NS steps: not adopted, for reference)",
    "recommended_ns_at_matmul_rate": "recommended, NS at matmul rate (0.80)",
    "per_shape": "recommended + per-shape schedules (4 minimax_4 steps where measured "
    "within 1.10x, --ns-accuracy)",
    "fp8": "recommended + per-shape schedules with FP8 steps (opt-in: --ns-fp8), casts as run",
    "fp8_fused_casts": "(the same with the FP8 casts and adds fused away: a bound, for reference)",
    "overlap": "recommended + per-shape schedules + elementwise overlapped with NS "
    "({overlap:.0%} hidden, stated; Muon's default on CUDA)",
    "overlap_ideal": "(the same with all of it hidden: a bound, for reference)",
    "fold_no_overlap": "recommended + per-shape schedules + the passes writing and reading "
    "the NS buffers (no copies of the experts' own pieces), without the overlap",
    "fold": "recommended + per-shape schedules + overlap + the passes writing and reading "
    "the NS buffers",
    "fold_ideal": "(the same with all of the overlappable passes hidden: a bound, for reference)",
    "aside": "+ the replicas' exchange unpacked and the dense units updated beside the experts' NS",
    "aside_ideal": "(the same with all of the overlappable work hidden: a bound, for reference)",
    "split_momentum": "+ the dense momentum passes split: the share's directions first, the "
    "buffer's advance beside the experts' NS",
    "copies_beside": "+ received pieces loaded and results stored on side streams",
    "exchange_packed": "+ the replicas' exchange packed beside the experts' NS",
    "rebalanced": "+ owners rebalanced from the top (the recommendation as it runs on CUDA)",
    "rebalanced_ideal": "(the same with all of the overlappable work hidden: a bound, for "
    "reference)",
    "rebalanced_no_overlap": "(the same without the overlap)",
    "default_now": "Muon's defaults without the overlap (etude plan muon --no-overlap)",
    "default_per_shape": "Muon's defaults + per-shape schedules (--ns-accuracy)",
    "default_overlap": "Muon's defaults, as it runs now (etude plan muon)",
}
# each row adds one lever to the one before; the references are against the row named
CHAIN = [
    "baseline",
    "gram",
    "spread",
    "fused",
    "symmetric",
    "big_jobs",
    "one_copy",
    "trace_norm",
    "located",
    "runs",
]
REFERENCE_OF = {
    "schedule_4_steps": "gram",
    "default_now": "fused",
    "big_jobs_full_products": "fused",
    "recommended_4_steps": "runs",
    "per_shape": "runs",
    "default_per_shape": "default_now",
    "fp8": "per_shape",
    "fp8_fused_casts": "per_shape",
    "overlap": "per_shape",
    "overlap_ideal": "per_shape",
    "fold_no_overlap": "per_shape",
    "fold": "overlap",
    "fold_ideal": "overlap_ideal",
    "aside": "fold",
    "aside_ideal": "fold_ideal",
    "split_momentum": "aside",
    "copies_beside": "split_momentum",
    "exchange_packed": "copies_beside",
    "rebalanced": "exchange_packed",
    "rebalanced_ideal": "aside_ideal",
    "rebalanced_no_overlap": "fold_no_overlap",
    "default_overlap": "default_now",
}


PER_SHAPE_ROWS = (
    "recommended_4_steps",
    "per_shape",
    "default_per_shape",
    "fp8",
    "fold_no_overlap",
    "rebalanced",
)


def schedules(report: dict) -> str:
    """Markdown table of the schedule each kimi-k2 unit shape took under per-shape
    schedules (the same at every GPU count; from the 256-GPU run)."""
    lines = [
        "| setting | family | unit | method | schedule | units per copy | GFLOP per unit |",
        "| --- | --- | --- | --- | --- | ---: | ---: |",
    ]
    run = next(r for r in report["runs"] if r["model"] == "kimi-k2")
    for name in ("per_shape", "default_per_shape", "fp8"):
        for g in run["predictions"][name]["groups"]:
            for row in g["units_by_shape"]:
                fp8 = f", first {row['fp8_steps']} FP8" if row.get("fp8_steps") else ""
                lines.append(
                    f"| {name} | {g['family']} | {'x'.join(map(str, row['shape']))} | "
                    f"{row['method']} | {row['schedule']} x {row['ns_steps']}{fp8} | "
                    f"{row['units']} | {row['flops_per_unit'] / 1e9:.3f} |"
                )
    return "\n".join(lines)


def summarize(report: dict) -> str:
    """Markdown tables of a report: step and breakdown per setting, and what was planned."""
    ms = 1e3
    lines = [
        "| GPUs | setting | step | change | NS (of it mirror copies) | exposed comm | "
        "elementwise (of it hidden under NS) | host (launch + Python + NS ops + piece copies) "
        "| bound by | dense units |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    planned = [
        "| GPUs | setting | NS TFLOP, max | imbalance | NVLink GB, max | network GB, max "
        "(replica exchange) | comm ms | all-to-alls | NS calls, max | NS host ops, max | "
        "piece copies, max | elementwise GB |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for run in report["runs"]:
        if run["model"] != "kimi-k2":
            continue
        p = run["predictions"]
        for name, label in LABELS.items():
            label = label.format(
                restarts=" and ".join(map(str, report["gram_restarts"])),
                block=report["ns_block_opt_in"],
                overlap=report["elementwise_overlap"],
            )
            t, pr, choice = p[name]["time"], p[name]["per_rank"], p[name]["spread_replicas"]
            before = CHAIN[CHAIN.index(name) - 1] if name in CHAIN[1:] else None
            before = REFERENCE_OF.get(name, before)
            change = f"{(t['step_s'] - p[before]['time']['step_s']) * ms:+.1f}" if before else ""
            dense = "spread" if choice["chosen"] else "repeated"
            if choice["by_planner"]:
                dense += (
                    f" (chosen: {choice['step_s_spread'] * ms:.1f} spread, "
                    f"{choice['step_s_repeated'] * ms:.1f} repeated)"
                )
            lines.append(
                f"| {run['gpus']} | {label} | {t['step_s'] * ms:.1f} | {change} | "
                f"{t['ns_s'] * ms:.1f}"
                + (f" ({t['ns_mirror_s'] * ms:.1f})" if t["ns_mirror_s"] else "")
                + (
                    f" (FP8 casts {t['ns_fp8_bytes_s'] * ms:.1f})"
                    if t.get("ns_fp8_bytes_s")
                    else ""
                )
                + f" | {t['exposed_comm_s'] * ms:.1f} | "
                f"{t['elementwise_s'] * ms:.1f}"
                + (
                    f" ({t['elementwise_hidden_s'] * ms:.1f} hidden)"
                    if t["elementwise_hidden_s"]
                    else ""
                )
                + f" | {t['host_s'] * ms:.1f} "
                f"({t['host_launch_s'] * ms:.1f} + {t['host_python_s'] * ms:.1f} + "
                f"{t['host_ns_ops_s'] * ms:.1f} + {t['host_piece_copies_s'] * ms:.1f}) | "
                f"{t['dominant']} | {dense} |"
            )
            if name in (*CHAIN, "schedule_4_steps", "default_now", *PER_SHAPE_ROWS):
                planned.append(
                    f"| {run['gpus']} | {label} | {pr['ns_flops']['max'] / 1e12:.1f} | "
                    f"{pr['imbalance']:.4f} | {pr['nvlink_bytes']['max'] / 1e9:.2f} | "
                    f"{pr['network_bytes']['max'] / 1e9:.2f} "
                    f"({pr['replica_gather_bytes']['max'] / 1e9:.2f}) | "
                    f"{t['comm_s'] * ms:.1f} | {pr['collectives']} | "
                    f"{pr['ns_calls']['max']:.0f} | {pr['ns_host_ops']['max']:.0f} | "
                    f"{pr['piece_copies']['max']:.0f} | "
                    f"{pr['elementwise_bytes']['max'] / 1e9:.0f} |"
                )
    return "\n".join(lines) + "\n\n" + "\n".join(planned) + "\n\n" + schedules(report)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="h200", choices=["h100", "h200"])
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "muon_plan_scale.json")
    )
    parser.add_argument("--summarize", action="store_true", help="print --out's tables")
    args = parser.parse_args()
    if args.summarize:
        print(summarize(json.loads(Path(args.out).read_text())))
        return
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
        "gram_restarts": list(gram_restarts(5)),
        "ns_block_opt_in": SYMMETRIC_BLOCK,
        "ns_accuracy": str(ACCURACY.relative_to(ROOT)),
        "elementwise_overlap": Assumptions().elementwise_overlap,
        "settings": {name: asdict(setting) for name, setting in SETTINGS.items()},
        "runs": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
