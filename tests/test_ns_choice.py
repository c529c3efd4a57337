"""Per-shape Newton–Schulz schedules from a measured accuracy table (`etude.optim.ns_choice`):
4 steps only where the table puts them within the bar in the formulation that would run
them, and Muon running each shape's choice exactly as a Muon given that choice outright."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from etude.optim import Muon
from etude.optim.newton_schulz import MINIMAX_4, QUINTIC, choose_method, ns_flops
from etude.optim.ns_choice import (
    ACCURACY_BAR,
    AccuracyTable,
    load_accuracy_table,
    ns_choice,
    ns_schedule_for,
)

MEASURED = Path(__file__).parent.parent / "benchmarks" / "results" / "ns_accuracy.json"
METHODS = ("standard", "gram", "gram_triangular")


def table(rows: dict[tuple[int, int], dict[str, float]], block: int | None = None):
    """A table whose "minimax_4" ratio per (short, long) and method is `rows`; 5 quintic
    steps measured everywhere at 1.0."""
    ratios = {
        shape: {("quintic", m): 1.0 for m in METHODS}
        | {("minimax_4", m): r for m, r in by_method.items()}
        for shape, by_method in rows.items()
    }
    return AccuracyTable(ratios, block, "test table")


def test_four_steps_only_within_the_bar_in_the_formulation_that_runs_them():
    t = table(
        {
            (18, 40): {"standard": 1.0, "gram": 1.05},  # within: Gram 4 steps
            (8, 28): {"standard": 1.0, "gram": 1.2},  # Gram 4 steps too far off
            (16, 64): {"standard": 1.5, "gram": 1.0999},
        }
    )
    chosen = ns_schedule_for((18, 40), "auto", t)
    assert (chosen.method, chosen.schedule) == ("gram", MINIMAX_4)
    assert ns_schedule_for((40, 18), "auto", t) == chosen  # either orientation
    assert ns_schedule_for((16, 64), "auto", t).schedule == MINIMAX_4  # at 1.0999 <= 1.10
    # (8, 28): Gram-4 misses the bar; standard-4 meets it but costs more than Gram-5.
    assert ns_flops(8, 28, 4, "standard") > ns_flops(8, 28, 5, "gram")
    fallback = ns_schedule_for((8, 28), "auto", t)
    assert (fallback.method, fallback.schedule) == ("gram", (QUINTIC,) * 5)
    # Asked for the standard formulation, only standard-4 is a candidate.
    standard = ns_schedule_for((8, 28), "standard", t)
    assert (standard.method, standard.schedule) == ("standard", MINIMAX_4)


def test_standard_four_steps_win_when_they_cost_less_than_gram_five():
    # 32 x 64: standard-4 (1.31 MFLOP) costs less than Gram-5 (1.44 MFLOP).
    assert ns_flops(32, 64, 4, "standard") < ns_flops(32, 64, 5, "gram")
    t = table({(32, 64): {"standard": 1.05, "gram": 1.2}})
    chosen = ns_schedule_for((32, 64), "auto", t)
    assert (chosen.method, chosen.schedule) == ("standard", MINIMAX_4)
    t = table({(32, 64): {"standard": 1.101, "gram": 1.2}})
    assert ns_schedule_for((32, 64), "auto", t).schedule == (QUINTIC,) * 5


def test_unknown_shapes_and_methods_are_named_when_strict():
    t = table({(18, 40): {"standard": 1.0, "gram": 1.0}})
    assert ns_schedule_for((5, 9), "auto", t).schedule == (QUINTIC,) * 5
    with pytest.raises(ValueError, match=r"unit shape 5x9: not measured .*test table"):
        ns_schedule_for((5, 9), "auto", t, strict=True)
    with pytest.raises(ValueError, match="unknown Newton–Schulz method 'fast'"):
        ns_schedule_for((18, 40), "fast", t)
    # gram_triangular measured with no block (here): planned with blocks of 4 it is unknown.
    assert ns_schedule_for((18, 40), "gram_triangular", t, ns_block=4).steps == 5
    with pytest.raises(ValueError, match=r"'gram_triangular' \(blocks of 4\) is not measured"):
        ns_schedule_for((18, 40), "gram_triangular", t, ns_block=4, strict=True)
    with pytest.raises(ValueError, match="leave ns_coefficients and ns_steps"):
        ns_choice((18, 40), "auto", QUINTIC, 4, accuracy=t)


def test_measured_table_gives_four_steps_only_where_it_meets_the_bar():
    t = load_accuracy_table(MEASURED)
    assert t.bar == ACCURACY_BAR == json.loads(MEASURED.read_text())["comparable_within"]
    fours = 0
    for shape in t.ratios:
        for block in (None, t.block):
            chosen = ns_schedule_for(shape, "auto", t, ns_block=block)
            resolved = choose_method(*shape, 5, block)
            five = ns_flops(*shape, 5, resolved, block=block)
            if chosen.steps == 4:
                fours += 1
                assert t.ratio(shape, "minimax_4", chosen.method, block) <= t.bar
                assert ns_flops(*shape, 4, chosen.method, block=block) < five
            else:  # no 4-step candidate both meets the bar and costs less
                assert chosen.method == resolved
                for m in {resolved, "standard"}:
                    ratio = t.ratio(shape, "minimax_4", m, block)
                    cheaper = ns_flops(*shape, 4, m, block=block) < five
                    assert ratio is None or ratio > t.bar or not cheaper, (shape, block, m)
    assert fours > 0
    # What the table says of K2's o_proj heads and experts (docs/muon-planner.md).
    assert ns_schedule_for((7168, 128), "auto", t).steps == 5
    experts = ns_schedule_for((2048, 7168), "auto", t)
    assert (experts.method, experts.steps) == ("gram", 5)


def test_a_file_that_is_not_an_accuracy_table_is_named(tmp_path):
    bad = tmp_path / "rates.json"
    bad.write_text(json.dumps({"ns": []}))
    with pytest.raises(ValueError, match=r"rates\.json: not a file from benchmarks/ns_accuracy"):
        load_accuracy_table(bad)


HYPER = dict(lr=0.02, weight_decay=0.1, ns_dtype=torch.float32)
SHAPES = {"wide": (18, 40), "tall": (40, 18), "small": (3, 7)}
PER_SHAPE = table({(18, 40): {"gram": 1.0, "standard": 1.0}, (3, 7): {"gram": 1.5}})


def _muon_params(names) -> dict[str, torch.nn.Parameter]:
    """Parameters of `SHAPES` by name, each from its own seed whatever the others."""
    return {
        n: torch.nn.Parameter(torch.randn(SHAPES[n], generator=_gen(list(SHAPES).index(n))))
        for n in names
    }


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _steps(opt: Muon, params: dict, steps: int = 2) -> dict[str, torch.Tensor]:
    for step in range(steps):
        for name, p in params.items():
            p.grad = torch.randn(p.shape, generator=_gen(100 + 7 * step + list(SHAPES).index(name)))
        opt.step()
    return {n: p.detach().clone() for n, p in params.items()}


def test_muon_runs_each_shapes_choice_as_muon_given_it_outright():
    params = _muon_params(SHAPES)
    opt = Muon(list(params.items()), **HYPER, ns_accuracy=PER_SHAPE)
    chosen = {n: opt.ns_choice(opt.param_groups[0], p) for n, p in params.items()}
    assert [c.steps for c in chosen.values()] == [4, 4, 5]
    got = _steps(opt, params)
    for name, c in chosen.items():
        alone = _muon_params([name])
        coefficients = "minimax_4" if c.steps == 4 else QUINTIC
        ref = Muon(
            list(alone.values()),
            **HYPER,
            ns_method=c.method,
            ns_coefficients=coefficients,
            ns_steps=c.steps,
        )
        torch.testing.assert_close(got[name], _steps(ref, alone)[name], rtol=1e-5, atol=1e-6)
    # 4 steps changed the update: the default 5 quintic steps end elsewhere.
    default = _muon_params(SHAPES)
    default = _steps(Muon(list(default.items()), **HYPER), default)
    assert (default["wide"] - got["wide"]).abs().max() > 1e-4
    torch.testing.assert_close(default["small"], got["small"], rtol=0, atol=0)


def test_strict_muon_refuses_an_unmeasured_shape_at_construction():
    params = _muon_params(["wide", "small"])
    with pytest.raises(ValueError, match="unit shape 3x7: not measured"):
        Muon(list(params.items()), ns_accuracy=table({(18, 40): {"gram": 1.0}}), strict=True)
    with pytest.raises(ValueError, match="leave ns_coefficients and ns_steps"):
        Muon(list(params.items()), ns_accuracy=PER_SHAPE, ns_steps=4, ns_coefficients="minimax_4")
