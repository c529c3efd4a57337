"""Distributed Muon on gloo ranks: `etude.optim.Muon` against the obvious alternatives.

For W in (2, 4) ranks, the Muon parameters of the tiny MoE (`PRESETS["tiny"]`) and of a
scaled-up one (`MODELS["scaled"]`, defined here) are DTensors sharded FSDP-style (`Shard(0)`
on a 1-D mesh), with gradients from a seed. Each implementation runs whole optimizer steps
on them (momentum, Newton–Schulz, weight decay, update); steps of all implementations are
interleaved, so that drift in the machine's load hits them alike:

- etude: `etude.optim.Muon`, all-to-all to unit owners, NS once per unit, overlap on;
- etude_no_overlap: the same with `max_in_flight=1`;
- redundant: every rank all-gathers the full momentum updates and orthogonalizes every unit;
- round_robin: the modded-nanogpt scheme: within each group of same-shape parameters,
  parameter i is owned by rank i % W; shards go to the owner (all-to-all), the owner
  orthogonalizes it per head / expert, and its full result is all-gathered to every rank;
- muon_fsdp2 (PyPI `muon-fsdp2`, if installed): whole-parameter round robin with
  gather/scatter, bf16 only; `dtensor-muon` is tried too and why it cannot run is recorded.

Before timing, every baseline runs a few fp32 steps from the same parameters and gradients
as etude and must end at the same parameters (rtol 1e-5), so only correct implementations
are compared. Counting follows etude's `StepStats`: bytes to and from other ranks only,
NS FLOPs by `ns_flops`, exposed communication = time blocked in collectives or waits.

Run: .venv/bin/python benchmarks/muon_dist.py   (writes benchmarks/results/muon_dist.json)
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor

from etude.models.config import PRESETS, MoEConfig, ParamShape
from etude.optim import (
    Muon,
    StepStats,
    adjusted_lr,
    momentum_direction,
    newton_schulz,
    ns_flops,
)
from etude.optim.newton_schulz import QUINTIC, coefficient_schedule
from etude.optim.units import Granularity, unit_boxes, unit_matrix_shape
from etude.spawn import run_on_ranks

MODELS: dict[str, MoEConfig] = {
    "tiny": PRESETS["tiny"],
    # Four times the tiny model's width: units of 64x256 (heads) to 512x256 (dense FFN), about
    # 6 GFLOP of Newton–Schulz per step, so that NS is no longer negligible next to latency.
    "scaled": MoEConfig(
        vocab_size=256,
        dim=256,
        n_layers=2,
        n_heads=4,
        n_kv_heads=2,
        head_dim=64,
        n_experts=8,
        top_k=2,
        expert_ffn_dim=128,
        n_shared_experts=1,
        n_dense_layers=1,
        dense_ffn_dim=512,
    ),
}
LR, MOMENTUM, WEIGHT_DECAY, NS_STEPS, EPS = 0.02, 0.95, 0.1, 5, 1e-7
SCHEDULE = coefficient_schedule(QUINTIC, NS_STEPS)
RESULTS = Path(__file__).parent / "results" / "muon_dist.json"


# --- the model's Muon parameters, sharded, with seeded gradients -------------------------


def muon_shapes(model: str, whole_matrices: bool = False) -> list[ParamShape]:
    """The model's parameters that Muon updates; `whole_matrices` drops per-head units."""
    shapes = [p for p in MODELS[model].parameter_shapes() if p.muon is not None]
    if whole_matrices:
        shapes = [ParamShape(p.name, p.shape, {} if "heads" in p.muon else p.muon) for p in shapes]
    return shapes


def granularity(options: dict) -> Granularity:
    """The Newton–Schulz units a Muon param-group's options ask for."""
    if options.get("experts"):
        return Granularity("experts")
    if "heads" in options:
        return Granularity("heads", options["heads"], options.get("head_dim", 0))
    return Granularity("matrix")


def seeded(seed: int, shape: tuple[int, ...]) -> Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def make_params(shapes: list[ParamShape], mesh: DeviceMesh) -> list[torch.nn.Parameter]:
    """Parameters as `Shard(0)` DTensors; every rank builds the same full tensor from a seed."""
    return [
        torch.nn.Parameter(
            distribute_tensor(
                seeded(zlib.crc32(s.name.encode()), s.shape), mesh, [Shard(0)], src_data_rank=None
            )
        )
        for s in shapes
    ]


def set_grads(params: list[torch.nn.Parameter], mesh: DeviceMesh, step: int) -> None:
    """Gradients of step `step`, the same on every rank and for every implementation."""
    for i, p in enumerate(params):
        full = seeded(10_000 + 97 * step + i, tuple(p.shape))
        p.grad = distribute_tensor(full, mesh, [Shard(0)], src_data_rank=None)


def apply_update(p: torch.nn.Parameter, shape: ParamShape, orthogonal_local: Tensor) -> None:
    """Decoupled weight decay and the lr-adjusted step, exactly as etude.optim.Muon does."""
    unit = unit_matrix_shape(shape.shape, granularity(shape.muon))
    local = p.to_local()
    local.mul_(1 - LR * WEIGHT_DECAY)
    local.add_(orthogonal_local, alpha=-adjusted_lr(LR, None, unit))


def orthogonalize_units(
    fulls: list[Tensor], shapes: list[ParamShape], dtype: torch.dtype
) -> tuple[list[Tensor], int]:
    """Newton–Schulz of every unit (matrix, head, expert) of full tensors, one batch per unit
    shape as etude does. Returns the results (in `dtype`) and the NS FLOPs spent."""
    by_shape: dict[tuple[int, int], list[tuple[int, tuple[slice, ...]]]] = {}
    for i, s in enumerate(shapes):
        unit = unit_matrix_shape(s.shape, granularity(s.muon))
        for box in unit_boxes(s.shape, granularity(s.muon)):
            index = tuple(slice(int(a), int(b)) for a, b in box)
            by_shape.setdefault(unit, []).append((i, index))
    results = [torch.empty(f.shape, dtype=dtype) for f in fulls]
    flops = 0
    for unit, members in by_shape.items():
        batch = torch.stack([fulls[i][index].reshape(unit) for i, index in members])
        orthogonal = newton_schulz(batch, SCHEDULE, eps=EPS, dtype=dtype)
        for (i, index), o in zip(members, orthogonal):
            results[i][index] = o.reshape(results[i][index].shape)
        flops += len(members) * ns_flops(*unit, NS_STEPS)
    return results, flops


def comm(stats: StepStats, fn: Callable[[], Any]) -> Any:
    """Run a blocking collective (or a wait), counting the time as exposed communication."""
    t0 = time.perf_counter()
    out = fn()
    stats.comm_wait_s += time.perf_counter() - t0
    return out


# --- implementations: each has step() -> this rank's StepStats -----------------------------


class Etude:
    """`etude.optim.Muon`, one param group per parameter with its head / expert options."""

    def __init__(self, params, shapes, dtype: torch.dtype, max_in_flight: int = 4) -> None:
        groups = [{"params": [(s.name, p)], **s.muon} for s, p in zip(shapes, params)]
        self.opt = Muon(
            groups,
            lr=LR,
            momentum=MOMENTUM,
            weight_decay=WEIGHT_DECAY,
            ns_dtype=dtype,
            max_in_flight=max_in_flight,
        )

    def step(self) -> StepStats:
        self.opt.step()
        return self.opt.last_step_stats


class Redundant:
    """Every rank all-gathers every full update (in the NS dtype) and runs all of NS itself."""

    def __init__(self, params, shapes, dtype: torch.dtype) -> None:
        self.params, self.shapes, self.dtype = params, shapes, dtype
        self.buffers = [torch.zeros_like(p.to_local()) for p in params]
        world = dist.get_world_size()
        if any(s.shape[0] % world for s in shapes):
            raise ValueError("the redundant baseline assumes dim 0 divides evenly over ranks")

    @torch.no_grad()
    def step(self) -> StepStats:
        stats = StepStats()
        world, rank = dist.get_world_size(), dist.get_rank()
        updates = [torch.empty_like(b, dtype=self.dtype) for b in self.buffers]
        for p, b, u in zip(self.params, self.buffers, updates):
            momentum_direction(p.grad.to_local(), b, MOMENTUM, True, u)
        flat = torch.cat([u.reshape(-1) for u in updates])
        gathered = torch.empty(world * flat.numel(), dtype=self.dtype)
        comm(stats, lambda: dist.all_gather_single(gathered, flat))
        gathered = gathered.view(world, -1)
        stats.collectives += 1
        stats.bytes_sent = stats.bytes_received = (world - 1) * flat.numel() * flat.element_size()
        fulls, offset = [], 0
        for u in updates:
            pieces = gathered[:, offset : offset + u.numel()].reshape(world, *u.shape)
            fulls.append(torch.cat(list(pieces)))
            offset += u.numel()
        orthogonal, stats.ns_flops = orthogonalize_units(fulls, self.shapes, self.dtype)
        for p, s, o, u in zip(self.params, self.shapes, orthogonal, updates):
            rows = u.shape[0]
            apply_update(p, s, o[rank * rows : (rank + 1) * rows])
        return stats


class RoundRobin:
    """modded-nanogpt's ownership: same-shape parameters in groups of W, the i-th owned by
    rank i. Shards reach the owner by all-to-all (issued up front, waited per group); the
    owner orthogonalizes per head / expert; the full result is all-gathered asynchronously
    (non-owners of a short last group contribute padding, as in modded-nanogpt)."""

    def __init__(self, params, shapes, dtype: torch.dtype) -> None:
        self.params, self.shapes, self.dtype = params, shapes, dtype
        self.buffers = [torch.zeros_like(p.to_local()) for p in params]
        world = dist.get_world_size()
        if any(s.shape[0] % world for s in shapes):
            raise ValueError("the round-robin baseline assumes dim 0 divides evenly over ranks")
        by_shape: dict[tuple[int, ...], list[int]] = {}
        for i, s in enumerate(shapes):
            by_shape.setdefault(s.shape, []).append(i)
        self.groups = [
            ids[k : k + world] for ids in by_shape.values() for k in range(0, len(ids), world)
        ]

    @torch.no_grad()
    def step(self) -> StepStats:
        stats = StepStats()
        world, rank = dist.get_world_size(), dist.get_rank()
        updates = [torch.empty_like(b, dtype=self.dtype) for b in self.buffers]
        for p, b, u in zip(self.params, self.buffers, updates):
            momentum_direction(p.grad.to_local(), b, MOMENTUM, True, u)
        elt = updates[0].element_size()
        forward = []
        for group in self.groups:  # shard of group[j] -> rank j
            shard = updates[group[0]].numel()
            send = torch.cat([updates[i].reshape(-1) for i in group])
            send_sizes = [shard if j < len(group) else 0 for j in range(world)]
            recv_sizes = [shard if rank < len(group) else 0] * world
            recv = torch.empty(sum(recv_sizes), dtype=self.dtype)
            work = dist.all_to_all_single(recv, send, recv_sizes, send_sizes, async_op=True)
            forward.append((recv, work))
            stats.collectives += 1
            stats.bytes_sent += (sum(send_sizes) - send_sizes[rank]) * elt
            stats.bytes_received += (sum(recv_sizes) - recv_sizes[rank]) * elt
        backward = []
        for group, (recv, work) in zip(self.groups, forward):
            comm(stats, work.wait)
            full_shape = self.shapes[group[0]].shape
            if rank < len(group):
                mine = group[rank]
                (result,), flops = orthogonalize_units(
                    [recv.reshape(full_shape)], [self.shapes[mine]], self.dtype
                )
                stats.ns_flops += flops
            else:
                result = torch.zeros(full_shape, dtype=self.dtype)
            out = torch.empty(world * full_shape[0], *full_shape[1:], dtype=self.dtype)
            work = dist.all_gather_single(out, result, async_op=True)
            backward.append((group, out.view(world, *full_shape), work))
            stats.collectives += 1
            stats.bytes_sent += (world - 1) * result.numel() * elt
            stats.bytes_received += (world - 1) * result.numel() * elt
        for group, out, work in backward:
            comm(stats, work.wait)
            for j, i in enumerate(group):
                rows = updates[i].shape[0]
                apply_update(
                    self.params[i], self.shapes[i], out[j][rank * rows : (rank + 1) * rows]
                )
        return stats


class MuonFsdp2:
    """PyPI `muon-fsdp2` (gather to owner, NS of the whole parameter, scatter back), with its
    `gather`/`scatter` wrapped to count bytes and blocked time. NS is bf16 by construction."""

    def __init__(self, params, shapes, dtype: torch.dtype) -> None:
        import muon_fsdp2

        self.opt = muon_fsdp2.Muon(
            [
                dict(
                    params=params,
                    lr=LR,
                    momentum=MOMENTUM,
                    weight_decay=WEIGHT_DECAY,
                    use_muon=True,
                    rms_scale=False,  # sqrt(max(1, rows/cols)): etude's default lr rule
                    nesterov=True,
                    ns_steps=NS_STEPS,
                )
            ]
        )
        self.stats = StepStats()
        _count_collectives(muon_fsdp2, self)
        # muon_fsdp2 owns parameter i of its group on rank i % W and runs NS on it whole
        # (a 3-D expert tensor as a batch of experts).
        world, rank = dist.get_world_size(), dist.get_rank()
        self.flops = sum(
            whole_param_flops(s.shape) for i, s in enumerate(shapes) if i % world == rank
        )

    def step(self) -> StepStats:
        self.stats = StepStats(ns_flops=self.flops)
        self.opt.step()
        return self.stats


def whole_param_flops(shape: tuple[int, ...]) -> int:
    """NS FLOPs of orthogonalizing a parameter whole (experts one by one)."""
    if len(shape) == 3:
        return shape[0] * ns_flops(shape[1], shape[2], NS_STEPS)
    return ns_flops(shape[0], shape[1], NS_STEPS)


class _TimedWork:
    def __init__(self, work, owner: MuonFsdp2) -> None:
        self.work, self.owner = work, owner

    def wait(self):
        return comm(self.owner.stats, self.work.wait)


def _count_collectives(module: Any, owner: MuonFsdp2) -> None:
    """Replace the module's `gather`/`scatter` with counting wrappers (same behaviour)."""

    def gather(tensor, gather_list=None, *, group_dst, group, async_op=False):
        stats, world = owner.stats, dist.get_world_size(group)
        stats.collectives += 1
        nbytes = tensor.numel() * tensor.element_size()
        if dist.get_group_rank(group, dist.get_rank()) == group_dst:
            stats.bytes_received += (world - 1) * nbytes
        else:
            stats.bytes_sent += nbytes
        work = dist.gather(tensor, gather_list, group_dst=group_dst, group=group, async_op=True)
        return _TimedWork(work, owner) if async_op else comm(stats, work.wait)

    def scatter(tensor, scatter_list=None, *, src, group, async_op=False):
        stats, world = owner.stats, dist.get_world_size(group)
        stats.collectives += 1
        nbytes = tensor.numel() * tensor.element_size()
        if dist.get_group_rank(group, dist.get_rank()) == src:
            stats.bytes_sent += (world - 1) * nbytes
        else:
            stats.bytes_received += nbytes
        work = dist.scatter(tensor, scatter_list, src=src, group=group, async_op=True)
        return _TimedWork(work, owner) if async_op else comm(stats, work.wait)

    module.gather, module.scatter = gather, scatter


IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {
    "etude": Etude,
    "etude_no_overlap": lambda params, shapes, dtype: Etude(params, shapes, dtype, 1),
    "redundant": Redundant,
    "round_robin": RoundRobin,
}


# What reading each package's source showed (installed with `pip install --no-deps`).
PACKAGE_NOTES = {
    "muon-fsdp2": (
        "Runs on CPU/gloo. Owner of parameter i is rank i % W; dist.gather of the fp32 "
        "gradient shards to the owner, NS of the whole parameter (a 3-D tensor as a batch of "
        "experts; no per-head units) in bf16 compiled with torch.compile, dist.scatter back. "
        "1-D meshes only (2-D raises NotImplementedError); shards must be even (the owner "
        "concatenates W copies of its own shard shape); rms_scale=True would read E and out "
        "of a 3-D expert tensor as the matrix shape, so rms_scale=False is used here."
    ),
    "dtensor-muon": (
        "Not benchmarked: `import dtensor_muon` imports triton (dtensor_muon/kernels/gram.py), "
        "which the CPU build of torch does not ship; beyond the import, Muon's default "
        "zeropower(use_triton=True) launches Triton GPU kernels and MuonForeach moves every "
        "batch to torch.device('cuda') unconditionally. Its DTensor path in Muon calls "
        "full_tensor() on every rank, i.e. the 'redundant' baseline here."
    ),
}


def package_status() -> dict[str, dict[str, str]]:
    """Whether each PyPI package imports here (and if not, the error), with notes."""
    status = {}
    for package, module in (("muon-fsdp2", "muon_fsdp2"), ("dtensor-muon", "dtensor_muon")):
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        try:
            __import__(module)
            result = "ok"
        except Exception as e:  # any import failure is a finding to record
            result = f"{type(e).__name__}: {e}"
        status[package] = {"version": version, "import": result, "notes": PACKAGE_NOTES[package]}
    return status


# --- per rank: check, then time ------------------------------------------------------------


def run_steps(factory, shapes, mesh, dtype, steps: int) -> tuple[list[Tensor], list[Tensor]]:
    """Initial and final full parameters after `steps` steps with the seeded gradients."""
    params = make_params(shapes, mesh)
    initial = [p.full_tensor().detach().clone() for p in params]
    impl = factory(params, shapes, dtype)
    for step in range(steps):
        set_grads(params, mesh, step)
        impl.step()
    return initial, [p.full_tensor().detach() for p in params]


def compare(a: list[Tensor], b: list[Tensor], initial: list[Tensor]) -> dict:
    """Do parameters `a` equal reference `b` (rtol 1e-5), and how far apart are the updates."""
    equal = all(torch.allclose(x, y, rtol=1e-5, atol=1e-6) for x, y in zip(a, b))
    update_diff = max(
        float((x - y).abs().max() / (y - p0).abs().max()) for x, y, p0 in zip(a, b, initial)
    )
    return {"params_equal_rtol_1e-5": equal, "max_update_rel_diff": update_diff}


def check(model: str, mesh: DeviceMesh, steps: int, with_fsdp2: bool) -> dict:
    """Every baseline against etude, fp32 NS, from the same params and gradients."""
    shapes = muon_shapes(model)
    initial, reference = run_steps(Etude, shapes, mesh, torch.float32, steps)
    out = {}
    for name, factory in IMPLEMENTATIONS.items():
        if name != "etude":
            out[name] = compare(
                run_steps(factory, shapes, mesh, torch.float32, steps)[1], reference, initial
            )
    if with_fsdp2:
        # muon_fsdp2 runs bf16 NS on whole matrices: compare with etude configured alike,
        # next to the gap between etude's own bf16 and fp32 runs (the bf16 noise floor).
        whole = muon_shapes(model, whole_matrices=True)
        initial, etude_fp32 = run_steps(Etude, whole, mesh, torch.float32, steps)
        etude_bf16 = run_steps(Etude, whole, mesh, torch.bfloat16, steps)[1]
        theirs = run_steps(MuonFsdp2, whole, mesh, torch.bfloat16, steps)[1]
        out["muon_fsdp2"] = {
            "compared_with": "etude, whole-matrix units, bf16 NS",
            **compare(theirs, etude_bf16, initial),
            "vs_etude_fp32_max_update_rel_diff": compare(theirs, etude_fp32, initial)[
                "max_update_rel_diff"
            ],
            "etude_bf16_vs_fp32_max_update_rel_diff": compare(etude_bf16, etude_fp32, initial)[
                "max_update_rel_diff"
            ],
        }
    return out


def time_interleaved(factories: dict, shapes, mesh, dtype, steps: int, warmup: int) -> dict:
    """Per-step time and telemetry on this rank, one step of each implementation in turn,
    after `warmup` untimed rounds. Each implementation has its own copy of the parameters."""
    impls, params_of = {}, {}
    for name, factory in factories.items():
        params_of[name] = make_params(shapes, mesh)
        set_grads(params_of[name], mesh, 0)
        impls[name] = factory(params_of[name], shapes, dtype)
    grads = [p.grad.to_local().clone() for p in params_of["etude"]]
    times: dict[str, list[float]] = {name: [] for name in impls}
    cpu_times: dict[str, list[float]] = {name: [] for name in impls}
    stats: dict[str, list[StepStats]] = {name: [] for name in impls}
    for k in range(warmup + steps):
        for name, impl in impls.items():
            for p, g in zip(params_of[name], grads):  # some implementations overwrite grads
                p.grad.to_local().copy_(g)
            dist.barrier()
            t0, c0 = time.perf_counter(), time.process_time()
            s = impl.step()
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
            if k >= warmup:
                times[name].append(elapsed)
                cpu_times[name].append(cpu)
                stats[name].append(s)
    return {
        name: {
            "step_time_median_s": statistics.median(times[name]),
            "cpu_time_median_s": statistics.median(cpu_times[name]),
            "comm_wait_s_median": statistics.median(s.comm_wait_s for s in stats[name]),
            "ns_flops": stats[name][-1].ns_flops,
            "bytes_sent": stats[name][-1].bytes_sent,
            "bytes_received": stats[name][-1].bytes_received,
            "collectives": stats[name][-1].collectives,
        }
        for name in impls
    }


def rank_main(model: str, steps: int, warmup: int, dtypes: list[str], check_steps: int) -> dict:
    """One rank's share of the benchmark on one model; returns its checks and timings."""
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    with_fsdp2 = package_status()["muon-fsdp2"]["import"] == "ok"
    out: dict[str, Any] = {"check": check(model, mesh, check_steps, with_fsdp2), "timing": {}}
    for name in dtypes:
        dtype = getattr(torch, name)
        factories = dict(IMPLEMENTATIONS)
        if with_fsdp2 and dtype == torch.bfloat16:
            factories["muon_fsdp2"] = MuonFsdp2
        out["timing"][name] = time_interleaved(
            factories, muon_shapes(model), mesh, dtype, steps, warmup
        )
    return out


# --- parent: spawn, aggregate, write ------------------------------------------------------


def numel(shape: tuple[int, ...]) -> int:
    return torch.Size(shape).numel()


def single_process_flops(model: str, whole_matrices: bool = False) -> int:
    """NS FLOPs of one unsharded step: each unit once."""
    total = 0
    for s in muon_shapes(model, whole_matrices):
        g = granularity(s.muon)
        total += len(unit_boxes(s.shape, g)) * ns_flops(*unit_matrix_shape(s.shape, g), NS_STEPS)
    return total


def aggregate(model: str, per_rank: list[dict], world: int, dtype: str) -> dict:
    """Per implementation: max over ranks of the per-rank medians, and telemetry totals.

    The byte lower bound 2(W-1)/W * (P/W) * bytes is what a rank must send when every unit is
    spread evenly over all ranks: (W-1)/W of its shard out, the same back."""
    elt = torch.empty(0, dtype=getattr(torch, dtype)).element_size()
    total = sum(numel(s.shape) for s in muon_shapes(model))
    bound = 2 * (world - 1) / world * (total / world) * elt
    out: dict[str, Any] = {"bytes_lower_bound_per_rank": bound}
    for impl in per_rank[0]["timing"][dtype]:
        rows = [r["timing"][dtype][impl] for r in per_rank]
        flops = [r["ns_flops"] for r in rows]
        sent = [r["bytes_sent"] for r in rows]
        reference = single_process_flops(model, whole_matrices=impl == "muon_fsdp2")
        out[impl] = {
            "step_time_median_s": max(r["step_time_median_s"] for r in rows),
            "step_time_median_s_per_rank": [r["step_time_median_s"] for r in rows],
            # CPU seconds the ranks' processes used per step (all threads, summed over
            # ranks): the work done, less sensitive than wall time to other load on the box.
            "cpu_time_median_s_sum_over_ranks": sum(r["cpu_time_median_s"] for r in rows),
            "ns_flops_total": sum(flops),
            "ns_flop_redundancy": sum(flops) / reference,
            "bytes_sent_per_rank_max": max(sent),
            "bytes_sent_per_rank_mean": statistics.mean(sent),
            "bytes_received_per_rank_max": max(r["bytes_received"] for r in rows),
            "bytes_sent_max_over_lower_bound": max(sent) / bound,
            "imbalance": max(flops) / statistics.mean(flops) if sum(flops) else 1.0,
            "comm_wait_s_median_max_over_ranks": max(r["comm_wait_s_median"] for r in rows),
            "comm_wait_s_median_mean_over_ranks": statistics.mean(
                r["comm_wait_s_median"] for r in rows
            ),
            "collectives_per_step": rows[0]["collectives"],
        }
        if impl == "muon_fsdp2":
            out[impl]["ns_flops_over_etude_units"] = sum(flops) / single_process_flops(model)
    for row in out.values():
        if isinstance(row, dict):
            row["step_time_over_etude"] = (
                row["step_time_median_s"] / out["etude"]["step_time_median_s"]
            )
    return out


def machine() -> dict:
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    model = next((x.split(":", 1)[1].strip() for x in lines if x.startswith("model name")), "")
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": model,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "backend": "gloo",
        "threads_per_rank": 1,
        "load_average_at_start": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--worlds", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--steps", type=int, default=20, help="timed steps per implementation")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--check-steps", type=int, default=3)
    parser.add_argument("--dtypes", nargs="+", default=["bfloat16", "float32"])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--summarize", type=Path, help="only print the tables of an existing result file"
    )
    args = parser.parse_args()
    if args.summarize:
        print(summary(json.loads(args.summarize.read_text())))
        return

    t0 = time.perf_counter()
    result: dict[str, Any] = {
        "machine": machine(),
        "steps": args.steps,
        "warmup": args.warmup,
        "check_steps": args.check_steps,
        "hyperparameters": {
            "lr": LR,
            "momentum": MOMENTUM,
            "weight_decay": WEIGHT_DECAY,
            "ns_steps": NS_STEPS,
        },
        "packages": package_status(),
        "models": {},
    }
    mismatches = []
    for model in args.models:
        shapes = muon_shapes(model)
        entry: dict[str, Any] = {
            "muon_params": len(shapes),
            "muon_numel": sum(numel(s.shape) for s in shapes),
            "single_process_ns_flops": single_process_flops(model),
            "worlds": {},
        }
        for world in args.worlds:
            per_rank = run_on_ranks(
                rank_main,
                world,
                model,
                args.steps,
                args.warmup,
                args.dtypes,
                args.check_steps,
                timeout_s=400,
            )
            for rank, r in enumerate(per_rank):
                for impl, c in r["check"].items():
                    if impl != "muon_fsdp2" and not c["params_equal_rtol_1e-5"]:
                        mismatches.append(f"{model} W={world} rank {rank} {impl}: {c}")
            entry["worlds"][str(world)] = {
                "check_vs_etude": per_rank[0]["check"],
                **{d: aggregate(model, per_rank, world, d) for d in args.dtypes},
            }
            print(f"{model} W={world} done after {time.perf_counter() - t0:.0f} s", flush=True)
        result["models"][model] = entry
    result["wall_s"] = time.perf_counter() - t0
    result["machine"]["load_average_at_end"] = os.getloadavg()
    result["mismatches"] = mismatches
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(summary(result))
    if mismatches:
        raise SystemExit("baselines disagree with etude:\n" + "\n".join(mismatches))


def summary(result: dict) -> str:
    """Markdown tables of the main figures (the ones quoted in docs/muon.md)."""
    lines = []
    for model, entry in result["models"].items():
        for world, by_dtype in entry["worlds"].items():
            dtypes = [d for d in by_dtype if not d.startswith("check")]
            bounds = ", ".join(
                f"{d} {by_dtype[d]['bytes_lower_bound_per_rank'] / 1024:.0f} KiB" for d in dtypes
            )
            lines += [
                f"{model}, W={world} (byte lower bound per rank: {bounds})",
                "",
                "| implementation | NS dtype | step ms | x etude | CPU ms (all ranks) "
                "| NS FLOP redundancy | KiB sent/rank (max) | x bound | imbalance "
                "| exposed comm ms | collectives |",
                "|---|---|---|---|---|---|---|---|---|---|---|",
            ]
            for d in dtypes:
                for impl, r in by_dtype[d].items():
                    if isinstance(r, dict):
                        lines.append(
                            f"| {impl} | {d} | {r['step_time_median_s'] * 1e3:.1f}"
                            f" | {r['step_time_over_etude']:.2f}"
                            f" | {r['cpu_time_median_s_sum_over_ranks'] * 1e3:.1f}"
                            f" | {r['ns_flop_redundancy']:.2f}"
                            f" | {r['bytes_sent_per_rank_max'] / 1024:.0f}"
                            f" | {r['bytes_sent_max_over_lower_bound']:.2f}"
                            f" | {r['imbalance']:.2f}"
                            f" | {r['comm_wait_s_median_max_over_ranks'] * 1e3:.1f}"
                            f" | {r['collectives_per_step']} |"
                        )
            lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
