"""Which Newton–Schulz formulation and schedule each unit shape runs: the one home of that
choice, asked by `sharded.group_units` for Muon's plan and for the planner's alike.

Without an accuracy table every shape runs Muon's `ns_coefficients` for `ns_steps` steps,
in the formulation `ns_method` names ("auto": `choose_method`, the fewest FLOPs).

With one (`AccuracyTable`, read from `benchmarks/results/ns_accuracy.json` by
`load_accuracy_table`), a shape may run 4 steps of `"minimax_4"` instead of 5 quintic
steps, but only where that was measured to be accurate enough. The table holds, per unit
shape `(short, long)`, schedule and formulation, the polar error against the SVD polar
factor divided by that of 5 standard bf16 quintic steps (`torch.optim.Muon`'s default) on
the same matrix (`vs_quintic5`). `ns_schedule_for` takes, among

- 5 quintic steps in the formulation Muon would run (the fallback: what runs without a
  table), and
- `"minimax_4"` in that formulation and, under "auto", in the standard one,

the one with the fewest FLOPs (`ns_flops`, as run) whose measured ratio is at most the bar
(`ACCURACY_BAR`, 1.10). A table that opts into FP8 (`fp8=True`; Muon's `ns_fp8`) adds, per
formulation ("standard" and "gram"; under "auto" both), 5 quintic steps with the products
of the first k steps in FP8 (`newton_schulz(fp8_steps=k)`), measured as the worst of three
matrices (`quintic_fp8_<k>` rows); the cost compared is then the FLOPs with those of FP8
products counted at 1 / `FP8_SPEEDUP` (`choice_cost`).

The 4-step candidates must meet the bar in the very formulation they would run: on K2's
2048 x 7168 experts `"minimax_4"` is 1.087 in the standard formulation but 1.104 in the
Gram one, so there the candidates are standard-4 (550 GFLOP) against the Gram fallback's 5
steps (481 GFLOP), and the fallback wins on FLOPs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from etude.optim.newton_schulz import (
    METHODS,
    MINIMAX_4,
    QUINTIC,
    Coefficients,
    choose_method,
    coefficient_schedule,
    ns_flops,
    ns_fp8_flops,
)

# A 4-step schedule is taken for a shape only if its polar error is at most this many
# times that of 5 standard bf16 quintic steps (benchmarks/ns_accuracy.py's bar).
ACCURACY_BAR = 1.10
# The schedules a table is read for: name in ns_accuracy.json -> (coefficients, steps).
FALLBACK = (QUINTIC, 5)
FEWER_STEPS = ("minimax_4", len(MINIMAX_4))
SCHEDULES = {"quintic": FALLBACK, "minimax_4": FEWER_STEPS}
# Dense FP8 tensor-core peak over the bf16 one on H100 and H200 (NVIDIA datasheets: 1979 vs
# 989 TFLOP/s): how much cheaper an FP8 product is taken to be when choosing.
FP8_SPEEDUP = 2.0
FP8_METHODS = ("standard", "gram")


def fp8_schedule_name(fp8_steps: int) -> str:
    """The table's name of 5 quintic steps whose first `fp8_steps` run FP8 products."""
    return f"quintic_fp8_{fp8_steps}"


@dataclass(frozen=True)
class NSChoice:
    """How the units of one shape are orthogonalized: a resolved formulation ("standard",
    "gram" or "gram_triangular") and the per-step coefficients (`len(schedule)` steps)."""

    method: str
    schedule: tuple[Coefficients, ...]
    fp8_steps: int = 0  # the first steps whose products are FP8 (`newton_schulz`)

    @property
    def steps(self) -> int:
        return len(self.schedule)


def choice_cost(shape: tuple[int, int], choice: NSChoice, block: int | None = None) -> float:
    """FLOPs of one `shape` unit under `choice`, its FP8 products at 1 / FP8_SPEEDUP."""
    flops = ns_flops(*shape, choice.steps, choice.method, block=block)
    fp8 = ns_fp8_flops(*shape, choice.steps, choice.method, choice.fp8_steps)
    return flops - fp8 * (1 - 1 / FP8_SPEEDUP)


def choice_of(method: str, coefficients: Coefficients | str, steps: int) -> NSChoice:
    """`NSChoice` of a formulation and a schedule as Muon's options name them."""
    return NSChoice(method, tuple(coefficient_schedule(coefficients, steps)))


def schedule_label(schedule: tuple[Coefficients, ...]) -> str:
    """A readable name for reports: "quintic", "minimax_4" or "custom"."""
    if schedule == tuple(MINIMAX_4):
        return "minimax_4"
    return "quintic" if all(c == QUINTIC for c in schedule) else "custom"


@dataclass(frozen=True)
class AccuracyTable:
    """`ratios[(short, long)][(schedule, method)]`: measured polar error over that of 5
    standard bf16 quintic steps on the same matrix; "gram_triangular" rows were measured
    with symmetric products in blocks of `block` rows. `fp8`: whether its FP8 rows
    (`fp8_schedule_name`) are candidates (opt-in)."""

    ratios: dict[tuple[int, int], dict[tuple[str, str], float]]
    block: int | None
    source: str
    bar: float = ACCURACY_BAR
    fp8: bool = False

    def ratio(self, shape: tuple[int, int], schedule: str, method: str, block: int | None):
        """The measured ratio, or None (not measured, or "gram_triangular" planned with
        another block than the one measured)."""
        if method == "gram_triangular" and block != self.block:
            return None
        return self.ratios.get((min(shape), max(shape)), {}).get((schedule, method))


def _method_of_variant(variant: str) -> str | None:
    """The `newton_schulz` method an ns_accuracy.json variant ran (None: not one Muon runs)."""
    variant = variant.split("_fp8_")[0]
    if variant == "standard_bf16":
        return "standard"
    if variant.startswith("gram_bf16_restarts_") and variant.endswith("_etude"):
        return "gram"
    if variant == "gram_triangular_bf16":
        return "gram_triangular"
    return None


def load_accuracy_table(
    path: str | Path, bar: float = ACCURACY_BAR, fp8: bool = False
) -> AccuracyTable:
    """Read `benchmarks/ns_accuracy.py`'s JSON; ValueError naming the file if it is not one.
    `fp8`: its FP8 rows are candidates (`AccuracyTable.fp8`)."""
    try:
        data = json.loads(Path(path).read_text())
        ratios: dict[tuple[int, int], dict[tuple[str, str], float]] = {}
        for unit in data["units"]:
            short, long = sorted(int(s) for s in unit["shape"])
            rows = ratios.setdefault((short, long), {})
            for name in SCHEDULES:
                for variant, row in unit["schedules"].get(name, {}).items():
                    method = _method_of_variant(variant)
                    if method is None:
                        continue
                    if "fp8_steps" in row:
                        rows[(fp8_schedule_name(int(row["fp8_steps"])), method)] = float(
                            row["vs_quintic5"]
                        )
                    else:
                        rows[(name, method)] = float(row["vs_quintic5"])
        block = data.get("symmetric_block")
        block = None if block is None else int(block)
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise ValueError(
            f"NS accuracy table {path}: not a file from benchmarks/ns_accuracy.py ({e!r})"
        ) from e
    if not ratios:
        raise ValueError(f"NS accuracy table {path}: it measures no unit shape")
    if fp8 and not any("fp8" in name for rows in ratios.values() for name, _ in rows):
        raise ValueError(
            f"NS accuracy table {path}: it has no FP8 rows to opt into; measure them with "
            "benchmarks/ns_accuracy.py --fp8"
        )
    return AccuracyTable(ratios, block, str(path), bar, fp8)


def ns_schedule_for(
    shape: tuple[int, int],
    method: str,
    table: AccuracyTable,
    *,
    ns_block: int | None = None,
    strict: bool = False,
) -> NSChoice:
    """The formulation and schedule a `shape` unit runs under Muon's `ns_method` `method`
    and `ns_block`, chosen from `table` (module docstring). A shape the table has not
    measured, or whose fallback formulation it has not measured with "minimax_4", runs
    the fallback (5 quintic steps); with `strict`, either is a ValueError instead."""
    if method not in METHODS:
        raise ValueError(f"unknown Newton–Schulz method {method!r}; choose one of {METHODS}")
    short, long = sorted(shape)
    resolved = choose_method(short, long, FALLBACK[1], ns_block) if method == "auto" else method
    fallback = choice_of(resolved, *FALLBACK)
    if (short, long) not in table.ratios:
        if strict:
            measured = ", ".join(f"{a}x{b}" for a, b in sorted(table.ratios))
            raise ValueError(
                f"unit shape {shape[0]}x{shape[1]}: not measured in the NS accuracy table "
                f"{table.source} (it measures {measured}); measure it with "
                "benchmarks/ns_accuracy.py or pass strict=False to run 5 quintic steps there"
            )
        return fallback
    if table.ratio(shape, FEWER_STEPS[0], resolved, ns_block) is None and strict:
        raise ValueError(
            f"unit shape {shape[0]}x{shape[1]}: {FEWER_STEPS[0]!r} with method {resolved!r}"
            + (f" (blocks of {ns_block})" if resolved == "gram_triangular" else "")
            + f" is not measured in the NS accuracy table {table.source}"
        )
    candidates = [fallback]
    for m in dict.fromkeys([resolved] + (["standard"] if method == "auto" else [])):
        ratio = table.ratio(shape, FEWER_STEPS[0], m, ns_block)
        if ratio is not None and ratio <= table.bar:
            candidates.append(choice_of(m, *FEWER_STEPS))
    if table.fp8:
        for m in FP8_METHODS if method == "auto" else [m for m in [method] if m in FP8_METHODS]:
            for k in range(1, FALLBACK[1] + 1):
                ratio = table.ratio(shape, fp8_schedule_name(k), m, ns_block)
                if ratio is not None and ratio <= table.bar:
                    candidates.append(NSChoice(m, fallback.schedule, k))
    return min(candidates, key=lambda c: choice_cost((short, long), c, ns_block))


def ns_choice(
    shape: tuple[int, int],
    method: str,
    coefficients: Coefficients | str,
    steps: int,
    ns_block: int | None = None,
    accuracy: AccuracyTable | None = None,
    strict: bool = False,
) -> NSChoice:
    """What a `shape` unit runs under Muon's options: without `accuracy`, `coefficients` for
    `steps` steps in `method` ("auto" resolved by `choose_method`); with it,
    `ns_schedule_for`, which needs Muon's defaults (5 quintic steps: the table's yardstick
    and fallback) as `coefficients` and `steps`."""
    if accuracy is None:
        resolved = choose_method(*shape, steps, ns_block) if method == "auto" else method
        return choice_of(resolved, coefficients, steps)
    if coefficient_schedule(coefficients, steps) != coefficient_schedule(*FALLBACK):
        raise ValueError(
            f"an NS accuracy table chooses between 5 quintic steps and {FEWER_STEPS[0]!r} per "
            f"shape; leave ns_coefficients and ns_steps at their defaults (got "
            f"{coefficients!r}, {steps} steps)"
        )
    return ns_schedule_for(shape, method, accuracy, ns_block=ns_block, strict=strict)
