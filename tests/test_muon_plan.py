"""`etude plan muon`: the cost model counts what the optimizer's planner and runtime do.

FLOPs are checked against an independent count from the model's shapes, bytes against a
hand-worked case, and imbalance, FLOPs, bytes and collectives against what `Muon` itself
reports for real DTensor parameters on 4 gloo ranks under the same layout.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.utils._python_dispatch import TorchDispatchMode

import etude.optim.muon as muon_module
import etude.optim.sharded as sharded_module
from etude.cli import main as cli_main
from etude.models.config import preset
from etude.optim import Muon
from etude.optim.elementwise import element_bytes
from etude.optim.newton_schulz import (
    QUINTIC,
    coefficient_schedule,
    newton_schulz,
    ns_flops,
)
from etude.optim.ns_choice import AccuracyTable
from etude.optim.plan import (
    HARDWARE,
    PIECE_COPY_OPS,
    Assumptions,
    Family,
    _OpCounter,
    choose_layout,
    ns_calls_per_rank,
    ns_host_ops,
    per_rank,
    piece_copies_per_rank,
    plan,
    plan_and_choose_spread,
    plan_group,
    predict,
)
from etude.optim.plan_models import planner_model
from etude.optim.sharded import (
    ParamSpec,
    Unit,
    assign_owners,
    group_units,
    job_chunks,
    ns_result,
    rebalance_owners,
)
from etude.optim.units import Granularity, shard_boxes


def _expected_flops(model: str) -> dict[str, int]:
    """NS FLOPs of one copy of each family, counted from the shapes alone."""
    total = {"dense": 0, "experts": 0}
    for p in planner_model(model).parameter_shapes():
        if p.muon is None:
            continue
        if p.muon.get("experts"):
            e, rows, cols = p.shape
            total["experts"] += e * ns_flops(rows, cols, 5, "auto")
        elif "heads" in p.muon:
            h, rows, cols = p.muon["heads"], *p.shape
            shape = (rows // h, cols) if p.muon.get("head_dim", 0) == 0 else (rows, cols // h)
            total["dense"] += h * ns_flops(*shape, 5, "auto")
        else:
            total["dense"] += ns_flops(*p.shape, 5, "auto")
    return total


@pytest.mark.parametrize(
    ("model", "gpus", "per_node", "spread"),
    [
        ("tiny", 4, 8, True),
        ("tiny", 16, 4, True),
        ("tiny", 16, 4, False),
        ("kimi-k2", 16, 8, True),
    ],
)
def test_flops_per_group_add_up_to_every_unit_once(model, gpus, per_node, spread):
    planned = plan(model, gpus, gpus_per_node=per_node, spread_replicas=spread)
    expected = _expected_flops(model)
    replicas = planned.layout.dense_mesh[0]
    copies = {"dense": 1 if spread else replicas, "experts": 1}
    for g in planned.groups:
        # Spread, the replicas share the units (each once); else one copy is planned.
        assert int(g.flops.sum()) == expected[g.family.name]
        assert g.replicas == (replicas if spread and g.family.name == "dense" else 1)
    # Every rank's total is its dense member's plus its expert member's share.
    assert int(per_rank(planned, "flops").sum()) == (
        expected["dense"] * copies["dense"] + expected["experts"]
    )
    if spread and replicas > 1:
        dense = next(g for g in planned.groups if g.family.name == "dense")
        # Each member receives the other replicas' shares of its shard: all of it but the
        # share its own replica orthogonalized.
        own = dense.local_numel - dense.gather_received_numel
        assert (own >= 0).all() and int(own.sum()) == int(
            dense.local_numel[: dense.local_numel.size // replicas].sum()
        )


def test_bytes_of_a_hand_worked_case():
    # Two 16x16 matrices row-sharded over 4 ranks, 2 per node: each rank holds 64 elements
    # of each. LPT gives matrix A to rank 0 (tie: most held, lowest rank), B to rank 1.
    specs = [ParamSpec(n, (16, 16), Granularity("matrix")) for n in ("A", "B")]
    boxes = [shard_boxes(s.name, s.shape, (4,), (Shard(0),)) for s in specs]
    family = Family("dense", specs, boxes, np.arange(4), 1, "hand-worked")
    g = plan_group(family, gpus_per_node=2, ns_steps=5, method="standard")
    assert g.owners.tolist() == [0, 1]
    # rank 0: sends its B piece to rank 1 (NVLink), returns A's pieces to 1 (NVLink), 2, 3
    # (network); rank 1 symmetric; ranks 2 and 3 send their A and B pieces across nodes.
    assert g.nvlink_numel.tolist() == [128, 128, 0, 0]
    assert g.network_numel.tolist() == [128, 128, 128, 128]
    assert g.owned_numel.tolist() == [256, 256, 0, 0]
    assert g.local_numel.tolist() == [128] * 4
    assert g.jobs(1 << 24) == (1, 1)
    assert g.jobs(1) == (2, 2)  # a job holds at least one unit


def test_rebalancing_moves_units_off_the_busiest_rank_to_holders_first():
    # Four units of 10 FLOPs, each held in halves by ranks 0 and 1 but the last (ranks 2
    # and 3); unit 4, held whole by rank 0, stays. Rank 0 starts with 31.
    held = [[4, 4, 0, 0]] * 3 + [[0, 0, 4, 4], [8, 0, 0, 0]]
    units = [
        Unit(0, np.zeros((2, 2)), (2, 4), "standard", (), 0, 1 if k == 4 else 10, np.array(h))
        for k, h in enumerate(held)
    ]
    owners, load = [0, 0, 0, 2, 0], np.array([31, 0, 10, 0])
    assert rebalance_owners(units, owners, load) == 3
    # Units 0 and 1 to rank 1, which holds them; then rank 1 is the busiest and only rank
    # 3, which holds none of unit 0, can take one below its load.
    assert owners == [3, 1, 0, 2, 0]
    assert load.tolist() == [11, 10, 10, 10]
    # assign_owners runs it after its slack: the same units from another start.
    start = np.array([0, 25, 5, 0])
    plain, flops = assign_owners(units, 4, start, rebalance=False)
    balanced, balanced_flops = assign_owners(units, 4, start)
    assert rebalance_owners(units, plain, flops + start) > 0
    assert plain == balanced and balanced_flops.sum() == 41


def test_jobs_hold_about_job_numel_elements_per_member():
    specs = [ParamSpec(f"w{i}", (16, 16), Granularity("matrix")) for i in range(10)]
    boxes = [shard_boxes(s.name, s.shape, (4,), (Shard(0),)) for s in specs]
    units = group_units(specs, list(range(10)), boxes, 5, "standard")
    assert [len(c) for c in job_chunks(units, 4, 256)] == [4, 4, 2]
    assert [len(c) for c in job_chunks(units, 4, 512)] == [8, 2]
    assert [c for chunk in job_chunks(units, 4, 512) for c in chunk] == list(range(10))


def test_small_shapes_share_a_job_in_shape_order():
    shapes = [(16, 16), (8, 4), (16, 16), (8, 4)]
    specs = [ParamSpec(f"w{i}", s, Granularity("matrix")) for i, s in enumerate(shapes)]
    boxes = [shard_boxes(s.name, s.shape, (2,), (Shard(0),)) for s in specs]
    units = group_units(specs, list(range(4)), boxes, 5, "standard")
    assert job_chunks(units, 2, 1 << 24) == [[0, 2, 1, 3]]  # one job, units bucketed by shape
    assert job_chunks(units, 2, 128) == [[0], [2], [1, 3]]  # 256 elements a job


def test_predicted_terms_follow_the_documented_formula():
    planned = plan("tiny", 16, gpus_per_node=4)
    a = Assumptions()
    report = predict(planned, "h100", a)
    t, pr = report["time"], report["per_rank"]
    assert t["step_s"] == pytest.approx(max(t["host_s"], t["device_s"]))
    assert t["device_s"] == pytest.approx(
        t["ns_s"] + t["exposed_comm_s"] + t["elementwise_s"] - t["elementwise_hidden_s"]
    )
    assert t["host_launch_s"] == pytest.approx(pr["collectives"] * a.collective_overhead_s)
    assert t["ns_s"] <= pr["ns_flops"]["max"] / (a.ns_efficiency * 989e12) * (1 + 1e-12)
    # Larger jobs mean fewer collectives, never more.
    bigger = predict(planned, "h100", Assumptions(job_numel=1 << 30))
    assert bigger["per_rank"]["collectives"] <= pr["collectives"]


def test_overlap_hides_the_stated_fraction_of_the_passes_between_first_and_last_jobs():
    # Jobs of 64 elements per member, so that some of the tiny preset's passes can hide,
    # and NS slow enough (0.1 % of peak) to hide them under.
    planned = plan("tiny", 16, gpus_per_node=4)
    a = Assumptions(job_numel=64, ns_efficiency=1e-3)
    on = predict(planned, "h200", a)
    off = predict(planned, "h200", replace(a, overlap_elementwise=False))
    assert off["time"]["elementwise_hidden_s"] == 0
    assert on["time"]["elementwise_s"] == off["time"]["elementwise_s"]
    t, w = on["time"], on["time"]["slowest_rank"]
    local = per_rank(planned, "local_numel")[w]
    dense, experts = planned.groups
    assert dense.replicas == 4 and experts.replicas == 1  # dense spread over 4 replicas
    spread, share = (int(x[w % len(x)]) for x in (dense.local_numel, dense.share_numel))
    assert 0 < share < spread  # most of a rank's dense elements come in the exchange
    eb, rate = element_bytes(4, 2, True), 0.8 * HARDWARE["h200"].hbm_bytes_s
    momentum = eb.local - eb.update
    # The spread group's momentum pass split: the directions of its replica's share, the
    # buffer's advance over every element.
    passes = (local - spread) * eb.local + spread * (eb.advance + eb.update) + share * eb.direction
    assert on["per_rank"]["elementwise_bytes"]["max"] >= passes
    # Before the first NS: the spread group's share's directions and the experts' first
    # 4 + 1 jobs' momentum passes.
    first = share * eb.direction + min(local - spread, 5 * 64) * momentum
    # Beside NS: the passes, the experts' loads and stores of received pieces but for the
    # loads of a rank's first job and the stores of its last, the replicas' exchange
    # packed and unpacked; after the last NS the experts' last job's updates.
    # (A job takes one expert unit here, half of it, 1024 elements, received by its owner:
    # the loads of the first and the stores of the last, the same job for a rank that owns
    # one, are exposed; a rank that owns three has its middle one's beside NS.)
    ends = sum(experts.received_at_ends(64))
    assert (ends == 2 * np.minimum(experts.received_numel, 1024)).all()
    assert (experts.received_numel == 3 * 1024).any()
    ends = ends[w]
    packed, unpacked = (per_rank(planned, f"gather_{x}_numel")[w] for x in ("sent", "received"))
    copies = 2 * experts.received_numel[w] - ends + packed + unpacked
    last = min(local - spread, 64) * eb.update
    hidden = 0.5 * (passes + copies * eb.moved - first - last) / rate
    assert 0 < hidden < t["ns_s"]
    assert t["elementwise_hidden_s"] == pytest.approx(hidden)
    assert t["elementwise_overlappable_s"] == pytest.approx(2 * hidden)
    # As the runtime ran before each lever: each hides less.
    before = {
        "split_momentum": (first - share * eb.direction + spread * momentum, passes, copies),
        "copies_beside": (first, passes, copies - 2 * experts.received_numel[w] + ends),
        "exchange_packed_aside": (first, passes, copies - packed),
    }
    for lever, (first_b, passes_b, copies_b) in before.items():
        if lever == "split_momentum":  # one pass over every element, the buffer's included
            passes_b = local * eb.local
        got = predict(planned, "h200", replace(a, **{lever: False}))["time"]
        want = 0.5 * (passes_b + copies_b * eb.moved - first_b - last) / rate
        assert got["elementwise_hidden_s"] == pytest.approx(want), lever
        assert got["elementwise_hidden_s"] <= t["elementwise_hidden_s"], lever
    # Unpacked after the last NS instead, the spread group's updates and advance are
    # exposed too.
    after = predict(planned, "h200", replace(a, exchange_aside=False))["time"]
    last = min(local, 64 + spread) * eb.update + spread * eb.advance
    copies -= unpacked
    want = 0.5 * (passes + copies * eb.moved - first - last) / rate
    assert after["elementwise_hidden_s"] == pytest.approx(want)
    assert after["elementwise_hidden_s"] < t["elementwise_hidden_s"]
    assert on["sources"]["elementwise_overlap"] == "stated"
    assert t["device_s"] < off["time"]["device_s"]
    with pytest.raises(ValueError, match=r"elementwise_overlap must be in \[0, 1\]"):
        predict(planned, "h200", Assumptions(elementwise_overlap=1.5))


@pytest.mark.parametrize(
    ("shape", "method", "block"),
    [((24, 40), "gram_triangular", 5), ((40, 24), "gram", None), ((16, 16), "standard", 256)],
)
def test_ns_host_ops_are_the_ops_a_real_call_issues(shape, method, block):
    # As sharded Muon calls it: a bf16 stack, the result written into a kept buffer.
    g, schedule = torch.randn(3, *shape).bfloat16(), coefficient_schedule(QUINTIC, 5)
    out = ns_result(3, *shape, torch.bfloat16, g.device)
    with _OpCounter() as counter:
        result = newton_schulz(g, schedule, method=method, block=block, out=out)
    assert counter.ops == ns_host_ops(shape, 5, method, block)
    assert result.data_ptr() == out.data_ptr()
    torch.testing.assert_close(result, newton_schulz(g, schedule, method=method, block=block))


def test_host_term_counts_every_ns_call_op():
    planned = plan("tiny", 16, gpus_per_node=4, ns_block=16)
    a = Assumptions(job_numel=1 << 10)  # jobs of one or a few units
    t = predict(planned, "h200", a)["time"]
    calls, ops = ns_calls_per_rank(planned, a.job_numel)
    assert calls.min() > 0 and ops.min() > calls.min()
    copies = piece_copies_per_rank(planned, a.job_numel) * PIECE_COPY_OPS
    host = t["host_launch_s"] + t["host_python_s"] + (ops + copies) * a.host_per_op_s
    assert t["host_s"] == pytest.approx(host.max())
    # Larger jobs batch more units per call: fewer calls, never more.
    fewer, _ = ns_calls_per_rank(planned, 1 << 30)
    assert (fewer <= calls).all() and fewer.sum() < calls.sum()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": "nope", "gpus": 8}, "unknown model preset"),
        ({"model": "tiny", "gpus": 0}, "--gpus must be >= 1"),
        ({"model": "tiny", "gpus": 12}, "not a whole number of nodes"),
        ({"model": "tiny", "gpus": 1024}, "no expert-parallel size fits"),
        ({"model": "tiny", "gpus": 16, "ep": 3}, "must be >= 1 and divide"),
        ({"model": "tiny", "gpus": 16, "ep": 16}, "exceeds the model's 8 experts"),
        ({"model": "tiny", "gpus": 8, "gpus_per_node": 0}, "--gpus-per-node must be >= 1"),
    ],
)
def test_bad_layouts_raise_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plan(kwargs.pop("model"), kwargs.pop("gpus"), **kwargs)


def test_bad_hardware_or_assumptions_raise():
    planned = plan("tiny", 4)
    with pytest.raises(ValueError, match="unknown GPU"):
        predict(planned, "a100")
    with pytest.raises(ValueError, match="efficiencies must be in"):
        predict(planned, "h200", Assumptions(ns_efficiency=0))
    with pytest.raises(ValueError, match="--job-numel must be >= 1"):
        predict(planned, "h200", Assumptions(job_numel=0))


def test_default_layout_for_kimi_k2_keeps_each_expert_in_a_node():
    cfg = planner_model("kimi-k2")
    for gpus, efsdp in ((256, 2), (512, 4), (1024, 8)):
        layout = choose_layout(cfg, gpus)
        assert (layout.ep, layout.efsdp, layout.gpus_per_node) == (128, efsdp, 8)


def test_cli_prints_the_tiny_plan(capsys):
    assert cli_main(["plan", "muon", "--model", "tiny", "--gpus", "4"]) == 0
    out = capsys.readouterr().out
    assert "Predicted Muon step" in out and "experts" in out and "dense" in out
    assert "full products (no --ns-block)" in out
    assert cli_main(["plan", "muon", "--model", "tiny", "--gpus", "16", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["gpus"] == 16 and report["layout"]["ep"] == 8
    assert {g["family"] for g in report["groups"]} == {"dense", "experts"}
    assert report["time"]["step_s"] > 0


def test_planner_chooses_the_faster_spreading():
    # tiny on 4 nodes of 4 GPUs: the dense units are HSDP with 4 replicas
    chosen = plan_and_choose_spread("tiny", 16, gpus_per_node=4)
    both = {
        s: predict(plan("tiny", 16, gpus_per_node=4, spread_replicas=s))["time"]["step_s"]
        for s in (True, False)
    }
    choice = chosen["spread_replicas"]
    assert (choice["step_s_spread"], choice["step_s_repeated"]) == (both[True], both[False])
    assert choice["chosen"] == (both[True] <= both[False])
    assert chosen["time"]["step_s"] == min(both.values())
    dense = next(g for g in chosen["groups"] if g["family"] == "dense")
    assert dense["spread_over_replicas"] == (4 if choice["chosen"] else 1)


def test_cli_spread_and_steps_options(capsys):
    args = ["plan", "muon", "--model", "tiny", "--gpus", "16", "--gpus-per-node", "4"]
    assert cli_main([*args, "--spread", "off", "--ns-steps", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ns_steps"] == 3 and "spread_replicas" not in report
    assert {g["family"]: g["spread_over_replicas"] for g in report["groups"]}["dense"] == 1
    assert cli_main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "chosen" in report["spread_replicas"]
    assert report["assumptions"]["overlap_elementwise"]  # Muon's default on CUDA
    assert cli_main([*args, "--no-overlap", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert not report["assumptions"]["overlap_elementwise"]
    assert report["time"]["elementwise_hidden_s"] == 0


def test_cli_ns_block_opts_into_symmetric_products(capsys):
    args = ["plan", "muon", "--model", "tiny", "--gpus", "8", "--spread", "off", "--json"]

    def methods(report: dict) -> set[str]:
        return {row["method"] for g in report["groups"] for row in g["units_by_shape"]}

    assert cli_main(args) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["ns_block"] is None and "gram_triangular" not in methods(default)
    assert cli_main([*args, "--ns-block", "16"]) == 0
    opted = json.loads(capsys.readouterr().out)
    assert opted["ns_block"] == 16 and "gram_triangular" in methods(opted)
    assert default["time"]["ns_mirror_s"] == 0 < opted["time"]["ns_mirror_s"]


def test_cli_turns_bad_input_into_exit_code_2(capsys):
    assert cli_main(["plan", "muon", "--model", "tiny", "--gpus", "12"]) == 2
    assert "not a whole number of nodes" in capsys.readouterr().err
    assert cli_main(["plan", "muon", "--model", "tiny", "--gpus", "4", "--ns-steps", "0"]) == 2
    assert "--ns-steps must be in [1, 99], got 0" in capsys.readouterr().err
    assert cli_main(["plan", "muon", "--model", "tiny", "--gpus", "4", "--ns-block", "0"]) == 2
    assert "--ns-block must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        cli_main(["plan", "muon", "--model", "tiny", "--gpus", "4", "--ns-block", "big"])
    assert exit_.value.code == 2
    assert "argument --ns-block: invalid int value: 'big'" in capsys.readouterr().err


# 4 ranks: 2 nodes of 2 GPUs. Dense: HSDP (Replicate, Shard(0)) on mesh (2, 2); experts:
# (Shard(0), Shard(1)) on the same mesh, i.e. ep = 2 and efsdp = 2.
WORLD, PER_NODE, EP = 4, 2, 2


# Per-shape schedules for the tiny preset's units (short, long): its 16 x 64 heads run 4
# Gram steps of "minimax_4", its 32 x 64 experts and shared expert 4 standard steps (Gram's
# miss the bar, and standard-4 costs fewer FLOPs than Gram-5), the 64 x 128 FFN 5 quintic
# steps (not in the table).
TINY_TABLE = AccuracyTable(
    {
        (16, 64): {("minimax_4", "gram"): 1.0, ("minimax_4", "standard"): 1.0},
        (32, 64): {("minimax_4", "gram"): 1.2, ("minimax_4", "standard"): 1.05},
    },
    None,
    "tiny test table",
)
# (ns_method, ns_block, ns_accuracy): Muon's default (full products), blocks of 16 rows,
# which split most tiny units into blocks (gram_triangular), the standard iteration, which
# normalizes each unit by a pass over it, and per-shape schedules.
SETTINGS = (
    ("auto", None, None),
    ("auto", 16, None),
    ("standard", None, None),
    ("auto", None, TINY_TABLE),
)


def _rank_tiny_step() -> list:
    return [*(_tiny_step(*setting) for setting in SETTINGS), _tiny_overlap_is_sequential()]


_MATMULS = {torch.ops.aten.mm, torch.ops.aten.bmm, torch.ops.aten.baddbmm, torch.ops.aten.addmm}
_FACTORIES = {torch.ops.aten.empty, torch.ops.aten.empty_strided, torch.ops.aten.zeros_like}
_VIEWS = {torch.ops.aten._unsafe_view}  # a view that is not marked as one (matmul's reshape)


class _HbmBytes(TorchDispatchMode):
    """Bytes every op of a Muon step reads and writes on floating-point tensors: views,
    allocations and collectives move none, `copy_` reads its source and writes its
    destination, others read their tensor arguments and write their results. Inside
    `newton_schulz` only what touches a whole-batch tensor outside the matmuls counts
    (the small Gram matrices' ops and the matmuls are NS work); each elementwise pass
    counts as the one kernel it compiles to: its tensors read, its results written."""

    # A Muon step's own ops are few and plain; anything else it dispatched (a hidden copy,
    # a cast) would count, and the comparison with the planner would fail.

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0
        # Ops (views included) `orthogonalize` issues outside newton_schulz, collectives
        # aside: the host's piece copies.
        self.ops = 0
        self.in_orthogonalize = False
        self.batch_numel: int | None = None  # inside newton_schulz: the batch's elements
        self.paused = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        packet = func.overloadpacket
        if self.in_orthogonalize and self.batch_numel is None and func.namespace != "c10d":
            self.ops += 1
        if self.paused or func.is_view or packet in _FACTORIES | _VIEWS or func.namespace == "c10d":
            return out
        if self.batch_numel is not None and packet in _MATMULS:
            return out
        reads = args[1:] if packet is torch.ops.aten.copy_ else [*args, *(kwargs or {}).values()]
        for t in [*reads, *(out if isinstance(out, (tuple, list)) else [out])]:
            whole = self.batch_numel is None or getattr(t, "numel", int)() == self.batch_numel
            if isinstance(t, torch.Tensor) and t.is_floating_point() and whole:
                self.bytes += t.numel() * t.element_size()
        return out


def _counting_ns(counter: _HbmBytes, ns):
    def wrapper(g, *args, **kwargs):
        counter.batch_numel = g.numel()
        try:
            return ns(g, *args, **kwargs)
        finally:
            counter.batch_numel = None

    return wrapper


def _counting_orthogonalize(counter: _HbmBytes, fn):
    def wrapper(*args, **kwargs):
        counter.in_orthogonalize = True
        try:
            return fn(*args, **kwargs)
        finally:
            counter.in_orthogonalize = False

    return wrapper


def _counting_pass(counter: _HbmBytes, fn, reads: tuple[int, ...], writes: tuple[int, ...]):
    """`fn` counted as one kernel: arguments `reads` read, arguments `writes` written."""

    def wrapper(*args):
        counter.paused = True
        try:
            fn(*args)
        finally:
            counter.paused = False
        tensors = [args[i] for i in (*reads, *writes)]
        counter.bytes += sum(t.numel() * t.element_size() for t in tensors)

    return wrapper


def _tiny_groups() -> list[dict]:
    """The tiny preset's Muon parameters as DTensors on the 2 x 2 layout, with gradients."""
    mesh = init_device_mesh("cpu", (2, 2))
    groups = []
    for i, p in enumerate(preset("tiny").parameter_shapes()):
        if p.muon is None:
            continue
        placements = (Shard(0), Shard(1)) if p.muon.get("experts") else (Replicate(), Shard(0))
        gen = torch.Generator().manual_seed(i)
        full, grad = torch.randn(p.shape, generator=gen), torch.randn(p.shape, generator=gen)
        param = torch.nn.Parameter(distribute_tensor(full, mesh, placements, src_data_rank=None))
        param.grad = distribute_tensor(grad, mesh, placements, src_data_rank=None)
        groups.append({"params": [(p.name, param)], **p.muon})
    return groups


def _tiny_overlap_is_sequential() -> bool:
    """Whether two overlapped steps (the replicas' exchange unpacked and the dense units
    updated before the experts' jobs) give the bits of two sequential ones."""
    results = []
    for overlap in (True, False):
        groups = _tiny_groups()
        opt = Muon(groups, lr=0.02, overlap_elementwise=overlap)
        for _ in range(2):
            opt.step()
        results.append([p.to_local() for g in groups for _, p in g["params"]])
    return all(torch.equal(a, b) for a, b in zip(*results))


def _tiny_step(method: str, ns_block: int | None, accuracy: AccuracyTable | None) -> tuple:
    groups = _tiny_groups()
    # ns_dtype bf16: 2 bytes per element moved
    opt = Muon(groups, lr=0.02, ns_method=method, ns_block=ns_block, ns_accuracy=accuracy)
    opt.step()  # the first step also builds the plan and the momentum buffers
    counter = _HbmBytes()
    ns, ortho = sharded_module.newton_schulz, muon_module.orthogonalize
    names = ("momentum_direction", "momentum_direction_only", "momentum_advance", "apply_update")
    passes = {name: getattr(muon_module, name) for name in names}
    sharded_module.newton_schulz = _counting_ns(counter, ns)
    muon_module.orthogonalize = _counting_orthogonalize(counter, ortho)
    # Arguments read and written: grad and buf read, buf and the direction written (a spread
    # group's split pass: the direction alone, then buf alone); param and update read,
    # param written.
    counted = {
        "momentum_direction": ((0, 1), (1, 4)),
        "momentum_direction_only": ((0, 1), (4,)),
        "momentum_advance": ((0, 1), (1,)),
        "apply_update": ((0, 1), (0,)),
    }
    for name, (reads, writes) in counted.items():
        setattr(muon_module, name, _counting_pass(counter, passes[name], reads, writes))
    try:
        with counter:
            opt.step()
    finally:
        sharded_module.newton_schulz, muon_module.orthogonalize = ns, ortho
        for name, fn in passes.items():
            setattr(muon_module, name, fn)
    s = opt.last_step_stats
    stats = (s.imbalance, s.bytes_sent, s.bytes_received, s.ns_flops, s.collectives, s.ns_calls)
    return (*stats, counter.bytes, counter.ops)


@pytest.mark.dist
def test_prediction_equals_what_muon_reports_on_gloo():
    from etude.spawn import run_on_ranks

    by_rank = run_on_ranks(_rank_tiny_step, WORLD, timeout_s=120)
    flops_of = {}
    for k, setting in enumerate(SETTINGS):
        flops_of[setting[:2], setting[2] is not None] = _check_prediction(
            [r[k] for r in by_rank], *setting
        )
    assert all(r[-1] for r in by_rank)  # the overlapped step is the sequential one, bit for bit
    # The owners were rebalanced on this layout (one unit moved): Muon's FLOPs per rank,
    # equal to the planner's, are not those of the owners before rebalancing.
    before = plan("tiny", WORLD, gpus_per_node=PER_NODE, ep=EP, rebalance=False)
    assert (per_rank(before, "flops") != flops_of[("auto", None), False]).any()
    default = flops_of[("auto", None), False].sum()
    assert flops_of[("auto", 16), False].sum() < default  # triangular ran
    assert flops_of[("auto", None), True].sum() < default  # so did 4-step units


def _check_prediction(
    results: list[tuple], method: str, ns_block: int | None, accuracy: AccuracyTable | None
) -> np.ndarray:
    planned = plan(
        "tiny",
        WORLD,
        gpus_per_node=PER_NODE,
        ep=EP,
        method=method,
        ns_block=ns_block,
        ns_accuracy=accuracy,
    )
    normalized = per_rank(planned, "normalized_numel")
    if accuracy is not None:  # the units taking 4 standard steps are normalized by a pass
        steps = {(u.method, len(u.schedule)) for g in planned.groups for u in g.units}
        assert steps == {("gram", 4), ("standard", 4), ("gram", 5)}, steps
        assert normalized.sum() > 0
    else:
        assert (normalized > 0).all() if method == "standard" else (normalized == 0).all()
    assert planned.layout.efsdp == 2
    report = predict(planned, "h200", Assumptions())
    moved = per_rank(planned, "nvlink_numel") + per_rank(planned, "network_numel")
    sent = (moved + per_rank(planned, "gather_sent_numel")) * 2
    received = (moved + per_rank(planned, "gather_received_numel")) * 2
    flops = per_rank(planned, "flops")
    calls, _ = ns_calls_per_rank(planned, Assumptions().job_numel)
    imbalance = max(g.imbalance for g in planned.groups)
    eb = element_bytes(4, 2, fused=True)
    elementwise = sum(
        per_rank(planned, f"{name}_numel") * getattr(eb, name)
        for name in ("local", "moved", "owned", "normalized")
    )
    # The dense units are spread over the 2 replicas: their momentum pass is split, the
    # directions of the replica's share, the buffer's advance over every element.
    dense = next(g for g in planned.groups if g.replicas > 1)
    spread, share = dense.local_numel, dense.share_numel
    assert (share < spread).all()
    elementwise += share * eb.direction - spread * (eb.local - eb.advance - eb.update)
    assert report["per_rank"]["elementwise_bytes"]["max"] == elementwise.max()
    copies = piece_copies_per_rank(planned, Assumptions().job_numel)
    # The experts' group is not spread: its passes move its held pieces, with no copies.
    assert (per_rank(planned, "folded_numel") > 0).all()
    through_buffers = piece_copies_per_rank(planned, Assumptions().job_numel, fold_copies=False)
    assert (through_buffers > copies).all()
    for rank, (
        imb,
        bytes_sent,
        bytes_received,
        ns,
        collectives,
        ns_calls,
        hbm,
        host_ops,
    ) in enumerate(results):
        # What the step's ops read and wrote outside NS proper is what the planner counts,
        # and so are the ops the host issues for the piece copies (runs merged).
        assert hbm == elementwise[rank], (rank, hbm, elementwise[rank])
        assert host_ops == copies[rank] * PIECE_COPY_OPS, (rank, host_ops, copies[rank])
        assert imb <= imbalance
        assert (bytes_sent, bytes_received) == (sent[rank], received[rank])
        assert ns == flops[rank]
        assert ns_calls == calls[rank]
        # One extra collective: Muon's check that ranks agree on which grads exist. The
        # report counts the busiest replica's jobs.
        assert collectives <= report["per_rank"]["collectives"] + 1
    assert max(r[0] for r in results) == imbalance
    assert max(r[4] for r in results) == report["per_rank"]["collectives"] + 1
    assert math.isclose(report["per_rank"]["imbalance"], flops.max() / flops.mean())
    assert sum(r[1] for r in results) > 0  # the case does move data
    return flops
