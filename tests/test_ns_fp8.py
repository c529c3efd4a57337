"""FP8 steps of Newton–Schulz (`fp8_matmul`, `newton_schulz(fp8_steps=)`, Muon's `ns_fp8`):
the product against its dequantized operands, the FLOPs and bytes the planner counts against
what runs, the per-shape choice only when opted in and within the bar, and sharded Muon with
FP8 units equal to single-process Muon on gloo ranks."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.utils._python_dispatch import TorchDispatchMode

from etude.optim import Muon
from etude.optim.fp8_matmul import E4M3_MAX, fp8_gram, fp8_matmul
from etude.optim.newton_schulz import (
    QUINTIC,
    coefficient_schedule,
    newton_schulz,
    ns_flops,
    ns_fp8_flops,
)
from etude.optim.ns_choice import (
    AccuracyTable,
    choice_cost,
    fp8_schedule_name,
    load_accuracy_table,
    ns_schedule_for,
)
from etude.optim.plan import ns_host_ops
from etude.spawn import run_on_ranks

MEASURED = Path(__file__).parent.parent / "benchmarks" / "results" / "ns_accuracy.json"
FIVE = coefficient_schedule(QUINTIC, 5)


def _dequantized(x: torch.Tensor, dim: int) -> torch.Tensor:
    """`x` rounded to e4m3 under per-slice scales along `dim`, back in fp32."""
    scale = x.float().abs().amax(dim=dim, keepdim=True) / E4M3_MAX
    return (x / scale.to(x.dtype)).to(torch.float8_e4m3fn).float() * scale


def test_fp8_matmul_is_the_product_of_the_rounded_operands():
    gen = torch.Generator().manual_seed(0)
    u = torch.randn(2, 32, 48, generator=gen).bfloat16()
    v = torch.randn(2, 48, 16, generator=gen).bfloat16()
    out = fp8_matmul(u, v, alpha=2.0)
    assert out.shape == (2, 32, 16) and out.dtype == torch.bfloat16
    reference = 2.0 * _dequantized(u, -1) @ _dequantized(v, -2)
    torch.testing.assert_close(out.float(), reference, rtol=2**-7, atol=1e-3)
    # and e4m3 rounding is visible against the exact product (3 mantissa bits)
    exact = 2.0 * u.float() @ v.float()
    error = float((out.float() - exact).norm() / exact.norm())
    assert 1e-3 < error < 0.1
    # x x^T cast once equals the general product of x and its transpose
    x = torch.randn(3, 16, 64, generator=gen).bfloat16()
    torch.testing.assert_close(fp8_gram(x), fp8_matmul(x, x.mT), rtol=2**-7, atol=1e-3)


def test_fp8_inputs_that_cannot_run_are_refused():
    with pytest.raises(ValueError, match="divisible by 16"):
        fp8_matmul(torch.ones(1, 24, 32).bfloat16(), torch.ones(1, 32, 16).bfloat16())
    g = torch.randn(1, 32, 80)
    with pytest.raises(ValueError, match=r"fp8_steps must be in \[0, 5\]"):
        newton_schulz(g, FIVE, fp8_steps=6)
    with pytest.raises(ValueError, match="not 'gram_triangular'"):
        newton_schulz(g, FIVE, method="gram_triangular", block=16, fp8_steps=2)
    with pytest.raises(ValueError, match="bf16 iteration"):
        newton_schulz(g, FIVE, dtype=torch.float32, fp8_steps=2)
    with pytest.raises(ValueError, match="ns_fp8=True chooses FP8 steps"):
        Muon([torch.nn.Parameter(torch.ones(32, 32))], ns_fp8=True)
    with pytest.raises(ValueError, match=r"ns_dtype=torch\.bfloat16"):
        Muon(
            [torch.nn.Parameter(torch.ones(32, 32))],
            ns_fp8=True,
            ns_accuracy=MEASURED.as_posix(),
            ns_dtype=torch.float32,
        )


class _ScaledMMFlops(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.flops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in (torch.ops.aten._scaled_mm.default, torch.ops.aten._scaled_mm.out):
            a, b = args[0], args[1]
            self.flops += 2 * a.shape[0] * a.shape[1] * b.shape[1]
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("method", ["standard", "gram"])
@pytest.mark.parametrize("shape", [(32, 80), (80, 32)])
def test_fp8_flops_are_those_of_the_products_that_run(method, shape):
    g = torch.randn(3, *shape, generator=torch.Generator().manual_seed(1))
    previous = None
    for k in range(6):
        counter = _ScaledMMFlops()
        with counter:
            o = newton_schulz(g, FIVE, method=method, fp8_steps=k)
        assert o.shape == g.shape
        assert counter.flops == 3 * ns_fp8_flops(*shape, 5, method, k)
        assert ns_fp8_flops(*shape, 5, method, k) <= ns_flops(*shape, 5, method)
        if previous is not None:
            assert not torch.equal(o, previous)  # each further FP8 step changes the result
        previous = o
    # all 5 standard steps in FP8 are every product of the iteration
    assert ns_fp8_flops(*shape, 5, "standard", 5) == ns_flops(*shape, 5, "standard")


def test_host_ops_of_fp8_calls_grow_with_the_batch():
    one, two, three = (ns_host_ops((32, 80), 5, "gram", None, 2, batch=b) for b in (1, 2, 3))
    assert two > one and three - two == two - one
    assert ns_host_ops((32, 80), 5, "gram", None, 0, batch=3) == ns_host_ops(
        (32, 80), 5, "gram", None
    )


def _table(fp8: bool) -> AccuracyTable:
    """(32, 96): Gram FP8 in 4 steps within the bar, in 5 not; standard FP8 in 5 within."""
    ratios = {
        (32, 96): {("quintic", "standard"): 1.0, ("quintic", "gram"): 1.0}
        | {(fp8_schedule_name(4), "gram"): 1.05, (fp8_schedule_name(5), "gram"): 1.5}
        | {(fp8_schedule_name(5), "standard"): 1.09}
    }
    return AccuracyTable(ratios, None, "test table", fp8=fp8)


def test_fp8_steps_are_chosen_only_when_opted_in_and_within_the_bar():
    assert ns_schedule_for((32, 96), "auto", _table(False)).fp8_steps == 0
    chosen = ns_schedule_for((32, 96), "auto", _table(True))
    candidates = [("gram", 4), ("standard", 5)]
    costs = {(m, k): choice_cost((32, 96), type(chosen)(m, tuple(FIVE), k)) for m, k in candidates}
    assert (chosen.method, chosen.fp8_steps) == min(costs, key=costs.get)
    assert choice_cost((32, 96), chosen) < ns_flops(32, 96, 5, "gram")
    # an explicit formulation keeps to it; "gram_triangular" has no FP8 steps
    assert ns_schedule_for((96, 32), "standard", _table(True)).fp8_steps == 5
    assert ns_schedule_for((32, 96), "gram_triangular", _table(True), ns_block=16).fp8_steps == 0


def test_the_measured_table_opts_into_fp8_only_within_the_bar():
    table = load_accuracy_table(MEASURED, fp8=True)
    for shape in table.ratios:
        chosen = ns_schedule_for(shape, "auto", table)
        if chosen.fp8_steps:
            ratio = table.ratio(shape, fp8_schedule_name(chosen.fp8_steps), chosen.method, None)
            assert ratio <= table.bar
    assert not any(
        ns_schedule_for(shape, "auto", load_accuracy_table(MEASURED)).fp8_steps
        for shape in table.ratios
    )


def test_a_table_without_fp8_rows_cannot_opt_in(tmp_path):
    report = json.loads(MEASURED.read_text())
    for unit in report["units"]:
        rows = unit["schedules"]["quintic"]
        for variant in [v for v in rows if "_fp8_" in v]:
            del rows[variant]
    path = tmp_path / "no_fp8.json"
    path.write_text(json.dumps(report))
    with pytest.raises(ValueError, match="no FP8 rows"):
        load_accuracy_table(path, fp8=True)


# Unit shapes of the gloo test (short, long): each with one FP8 row within the bar.
FP8_ROWS = {
    (16, 48): ("gram", 2),
    (32, 64): ("standard", 5),
    (16, 32): ("standard", 3),
}


def _fp8_table() -> AccuracyTable:
    ratios = {
        shape: {("quintic", "standard"): 1.0, ("quintic", "gram"): 1.0}
        | {(fp8_schedule_name(k), m): 1.0}
        for shape, (m, k) in FP8_ROWS.items()
    }
    return AccuracyTable(ratios, None, "test table", fp8=True)


# (mesh, placements, param groups): uneven shards of FP8 units and units without FP8 rows.
LAYOUTS = {
    "fsdp": ((4,), (Shard(0),)),
    "hsdp": ((2, 2), (Replicate(), Shard(0))),
}
GROUPS = [
    ({}, [("w48x16", (48, 16)), ("w32x64", (32, 64)), ("w18x40", (18, 40))]),
    ({"heads": 3, "head_dim": 0}, [("heads", (48, 32))]),  # 3 heads of 16 x 32
]


def _full(seed: int, shape: tuple[int, ...]) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def _run(layout: str | None) -> tuple[dict, list[int]]:
    mesh = placements = None
    if layout is not None:
        shape, placements = LAYOUTS[layout]
        mesh = init_device_mesh("cpu", shape)
    params, groups = {}, []
    for options, named in GROUPS:
        entries = []
        for name, shape in named:
            full = _full(zlib.crc32(name.encode()), shape)
            t = full if mesh is None else distribute_tensor(full, mesh, placements)
            params[name] = torch.nn.Parameter(t)
            entries.append((name, params[name]))
        groups.append({"params": entries, **options})
    opt = Muon(groups, lr=0.02, ns_accuracy=_fp8_table(), ns_fp8=True)
    flops = []
    for step in range(2):
        for name, p in params.items():
            g = _full(1000 + step + len(name), tuple(p.shape))
            p.grad = g if mesh is None else distribute_tensor(g, mesh, placements)
        opt.step()
        flops.append(opt.last_step_stats.ns_flops)
    full = {n: (p if mesh is None else p.full_tensor()).detach().clone() for n, p in params.items()}
    return full, flops


def _rank_fp8() -> dict:
    return {layout: _run(layout) for layout in LAYOUTS}


@pytest.mark.dist
def test_sharded_fp8_units_equal_single_process():
    results = run_on_ranks(_rank_fp8, 4, timeout_s=120)
    reference, ref_flops = _run(None)
    for layout in LAYOUTS:
        for rank, by_layout in enumerate(results):
            for name, ref in reference.items():
                torch.testing.assert_close(
                    by_layout[layout][0][name],
                    ref,
                    rtol=1e-5,
                    atol=1e-6,
                    msg=lambda m, lay=layout, r=rank, n=name: f"{lay} rank {r} {n}: {m}",
                )
        for step in range(2):  # each unit orthogonalized once, HSDP replicas sharing
            total = sum(by_layout[layout][1][step] for by_layout in results)
            assert total == ref_flops[step], (layout, step)
    # the FP8 rows were taken
    opt = Muon([torch.nn.Parameter(torch.ones(32, 64))], ns_accuracy=_fp8_table(), ns_fp8=True)
    assert opt.ns_choice(opt.param_groups[0], opt.param_groups[0]["params"][0]).fp8_steps == 5
