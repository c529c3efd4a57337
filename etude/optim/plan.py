"""Cost model of sharded Muon at scale: `etude plan muon`.

For a model preset and a GPU count this module chooses a training layout, builds the shard
boxes of one shard group per parameter family, and runs the optimizer's own planner on them
(`group_units` and `assign_owners` from `sharded.py`, the functions `build_plan` calls), so
the owner of every unit, the NS FLOPs per rank and the elements each rank moves are exactly
what the optimizer would produce on that layout. A step time is then predicted from them
with the hardware table and the `Assumptions` below.

Layout (overridable with `--gpus-per-node` and `--ep`):
- Dense Muon parameters (attention, shared experts, dense FFN) are HSDP: `Shard(0)` within a
  node, replicated across nodes. Their all-to-all traffic stays on NVLink. With
  `spread_replicas` (Muon's default) each node orthogonalizes a share of the units and the
  results are all-gathered across nodes (network bytes, overlapped with NS like the rest);
  without it every node repeats all of them. `plan_and_choose_spread` (`--spread auto`)
  predicts both and keeps the faster.
- Routed experts are sharded on a 2-D mesh `(ep, efsdp)` with `(Shard(0), Shard(1))`: the
  expert dim over `ep` ranks (across nodes), each expert's out dim over `efsdp` GPUs inside
  a node. There is no expert replica, so the expert shard group is every GPU and the
  dominant NS work is split over all of them, and every expert's pieces lie in one node.
  By default `ep` is the largest divisor of the GPU count that divides the expert count
  with `efsdp = gpus / ep` dividing the node (kimi-k2: ep = 128 and efsdp = 2, 4, 8 at
  256, 512, 1024 GPUs).

Predicted step, for each rank `r`, taking the slowest (seconds):
    ns          = NS FLOPs[r] / (ns_efficiency * peak bf16 FLOP/s)
                  + mirror bytes[r] / HBM bw
                  (FLOPs exactly as run: "gram_triangular" units count only the blocks
                  their symmetric products compute, and their copies below the diagonal,
                  2 x ns_bytes per element, are the mirror bytes; with `--rates` a unit
                  shape measured for its method takes FLOPs / measured rate, mirror in it)
    comm        = max(NVLink bytes[r] / NVLink bw, network bytes[r] / network bw)
                  (bytes sent; links are full duplex and each rank receives what it sends;
                  network bytes include the replicas' all-gather)
    exposed     = max(0, comm - ns) + comm / comm jobs
                  (transfers overlap NS; the first job's forward and the last job's
                  backward, about one job's share, cannot be hidden)
    elementwise = (passes
                   + elements copied to or from an NS input x 2 ns_bytes
                   + elements of owned standard-NS units x 3 ns_bytes) / HBM bw
                  (`elementwise.element_bytes`; passes: local elements x bytes of the
                  two passes, but in a group spread over replicas, whose momentum pass is
                  split (`split_momentum`), local elements x (advance + update) + the
                  elements of the replica's share x direction; copies as
                  `sharded.orthogonalize` makes them: each element received from a peer
                  once into the stacks and once into the buffer sent back, and, in a
                  group spread over replicas, each held element once to NS and once back
                  and the replicas' exchange once per copy sent and once per element
                  received; in the other groups the passes write and read a held element
                  where NS and the all-to-all take and leave it, so its copies are part
                  of the passes)
    hidden      = overlap x max(0, passes + copies beside - first - last), at most ns
                  (Muon's `overlap_elementwise`, its default on CUDA: each parameter's
                  momentum pass runs on a side stream just before NS first touches its
                  direction, its update as soon as its results are back. Copies beside:
                  those the runtime issues on side streams beside NS: in groups not
                  spread over replicas, the loads of received pieces into a job's NS
                  stacks and the stores of their results (`copies_beside`), but for the
                  loads of a rank's first job and the stores of its last (nothing of its
                  own runs beside them), and, when there are such groups to run beside,
                  the replicas' exchange, packed (`exchange_packed_aside`) and unpacked
                  (`exchange_aside`), on the update stream with a spread group's buffers'
                  advance and updates. What cannot overlap (first: before the first NS;
                  last: after the last): the momentum passes of a group spread over
                  replicas, only the directions of its replica's share when split (its
                  first jobs touch nearly all its parameters; whole passes without
                  `split_momentum`), and, per other group, of about `max_in_flight` + 1
                  jobs' elements (`job_numel` each: the forwards issued first and the
                  first local job); the updates of about the last job's elements (and of
                  every local element of a spread group, with its advance, when there is
                  no other group's NS to run beside). The rest of the copies stay on NS's
                  stream. `overlap` is the stated fraction `elementwise_overlap`, or the
                  one measured with `--rates`; 0 without the overlap)
    device      = ns + exposed + elementwise - hidden
    host[r]     = collectives * collective_overhead_s
                  + sum over groups of comm jobs * members * host_per_member_s
                  (every member of a group takes part in each of the group's jobs, and the
                  runtime walks per-peer lists of length `members` several times per job)
                  + NS host ops[r] * host_per_op_s
                  + piece copies[r] * PIECE_COPY_OPS * host_per_op_s
                  (each copy of a piece, or of a run of pieces of consecutive units
                  merged into one strided view, to or from an NS input or the
                  replicas' exchange is one `copy_` of views located once per plan; the
                  passes' calls, one per parameter or, outside spread groups, per run
                  of its pieces, are not counted)
                  (each batched NS call, one per job and unit shape a rank owns units of,
                  issues `ns_host_ops` torch ops: counted on meta tensors)
    step        = max(max host, device of the slowest rank)
                  (the host issues GPU work asynchronously: NCCL's wait() only orders streams)
The slowest rank is the one with the largest device time. `dominant` names what bounds the
step: "host", or the largest of NS, communication (`comm`, when it outlasts the NS it
overlaps) and elementwise. Bandwidths are the table's figures times `bandwidth_efficiency`.
`serial_s` = host + ns + comm + elementwise (no overlap at all) is an upper bound. AdamW parameters
(embeddings, output head, router, norms) are not in the Muon path and are not modelled;
their per-rank element count is reported.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from torch.distributed.tensor import Replicate, Shard
from torch.utils._python_dispatch import TorchDispatchMode

from etude.optim.elementwise import ElementBytes, element_bytes
from etude.optim.newton_schulz import (
    QUINTIC,
    coefficient_schedule,
    newton_schulz,
    ns_fp8_bytes,
    ns_fp8_flops,
    ns_mirror_numel,
)
from etude.optim.ns_choice import AccuracyTable, load_accuracy_table, schedule_label
from etude.optim.plan_models import PlannerModel, planner_model
from etude.optim.routing import route
from etude.optim.sharded import (
    ParamSpec,
    Unit,
    assign_owners,
    group_units,
    job_chunks,
    ns_result,
)
from etude.optim.units import shard_boxes, validate


@dataclass(frozen=True)
class Hardware:
    """Per-GPU figures the cost model uses (see `HARDWARE` for sources)."""

    name: str
    bf16_flops: float  # dense bf16 matmul peak, FLOP/s
    fp8_flops: float  # dense FP8 matmul peak, FLOP/s
    hbm_bytes_s: float  # HBM bandwidth, B/s
    nvlink_bytes_s: float  # intra-node, per GPU per direction, B/s
    network_bytes_s: float  # inter-node, per GPU per direction, B/s


# Sources: NVIDIA H100 SXM and H200 SXM datasheets (989 TFLOP/s dense bf16, 1979 dense FP8;
# HBM3 3.35 TB/s, HBM3e 4.8 TB/s; NVLink 4 at 900 GB/s bidirectional = 450 GB/s per
# direction); inter-node: one 400 Gb/s NIC per GPU (8 x 400 Gb/s per node) = 50 GB/s per
# direction. A lent H200 ran a large bf16 matmul at about 790 TFLOP/s (0.80 of peak) in
# this project's measurements.
HARDWARE: dict[str, Hardware] = {
    "h100": Hardware("H100 SXM", 989e12, 1979e12, 3.35e12, 450e9, 50e9),
    "h200": Hardware("H200 SXM", 989e12, 1979e12, 4.8e12, 450e9, 50e9),
}


# Torch ops the runtime issues per copy of a piece (or of a run of pieces): the `copy_`
# alone, its views located once per plan (`sharded.data_path`); a gloo test counts every
# op of a step's copies.
PIECE_COPY_OPS = 1


@dataclass(frozen=True)
class Assumptions:
    """What the prediction rests on beyond the planner's output (module docstring)."""

    # Fraction of peak bf16 FLOP/s the batched NS sustains: 75% of the measured 790 TFLOP/s
    # matmul rate, for baddbmm epilogues, 128-row head units and SMs shared with NCCL.
    ns_efficiency: float = 0.6
    bandwidth_efficiency: float = 0.8  # fraction of HBM / NVLink / network bandwidth reached
    collective_overhead_s: float = 20e-6  # host cost of issuing one all_to_all_single
    # Python time of the runtime per group member per communicating job: the per-peer lists
    # of pack_forward, the split sizes of both directions and unpack_back, timed at 1-2.5 us
    # on the 2-core development machine; a server core is taken to be as fast as the best.
    host_per_member_s: float = 1e-6
    # Host time of one torch operation a batched NS call issues (views included): 1.5 us
    # (full products) to 5.5 us (block-triangular: mostly out= GEMMs and copies) per op
    # measured on CPU tensors on the 2-core development machine (ns_triangular.json);
    # not measured on a GPU host, where the ops that run a kernel also launch it.
    host_per_op_s: float = 3e-6
    ns_bytes: int = 2  # bytes per element in transit (Muon's ns_dtype, bf16 by default)
    job_numel: int = 1 << 24  # Muon's job_numel (its default), elements per member per job
    fused_elementwise: bool = True  # Muon's default on CUDA: two compiled passes (elementwise.py)
    # Bytes per counted element; None: what Muon runs (`element_bytes` of fp32 parameters,
    # `ns_bytes` and `fused_elementwise`). Given, it predicts another data path.
    element_bytes: ElementBytes | None = None
    # Host ops per piece copy and whether runs of pieces are one copy: what Muon runs by
    # default; the runtime before its views were located once per plan issued 4 ops (the
    # slices and views locating a piece, and its `copy_`) for every piece.
    piece_copy_ops: int = PIECE_COPY_OPS
    merge_runs: bool = True
    # The passes write and read the NS buffers themselves (what Muon runs): a parameter of
    # a group not spread over replicas has its momentum pass write its pieces into the NS
    # stacks and send buffers and its update read them back, with no copies of its own;
    # False predicts every group copying its pieces through direction buffers, as the
    # spread groups do (and every group did before).
    fold_copies: bool = True
    # The momentum pass of a group spread over replicas split in two (what Muon runs): the
    # directions of the units the rank's replica orthogonalizes before its first NS
    # (`momentum_direction_only`), the buffer's advance over the whole shard beside the
    # other groups' NS (`momentum_advance`, under `aside`): the replicas' exchange brings
    # the other directions. False: one pass over every local element before the first
    # NS, as the runtime did before.
    split_momentum: bool = True
    # A job's loads of pieces received from peers into its own NS stacks, and stores of
    # their results, on side streams beside other jobs' NS (what Muon runs with the
    # overlap, in groups not spread over replicas: `orthogonalize`'s `ahead` and
    # `behind`); False: on NS's stream, as the runtime did before.
    copies_beside: bool = True
    # The replicas' exchange unpacked, and its parameters updated, on the update stream
    # beside the other groups' NS (what Muon runs with the overlap); False: after the last
    # NS, as the runtime did before.
    exchange_aside: bool = True
    # The replicas' exchange packed (this replica's share into the send buffer once per
    # other replica) on the update stream too (what Muon runs with the overlap); False: on
    # NS's stream before the other groups' jobs, as the runtime did before.
    exchange_packed_aside: bool = True
    # Count the HBM bytes of the FP8 products' operand casts and of the adds after them
    # (`ns_fp8_bytes`, what Muon runs); False predicts them fused into the products, a bound.
    fp8_extra_bytes: bool = True
    # Muon's overlap_elementwise (its default on CUDA): the two passes issued per parameter
    # on side streams beside NS (`elementwise.JustInTime`); False: before and after all NS.
    overlap_elementwise: bool = True
    # Fraction of the overlappable passes' time that hides under NS. The NS GEMMs are
    # compute-bound and the passes memory-bound, so HBM bandwidth is not what they share:
    # SMs are. Hopper GEMMs run persistent, one block per SM, and a kernel beside them gets
    # SMs only as the GEMM's blocks retire and can push the GEMM into a second wave
    # (pytorch/pytorch#147966 caps GEMM SMs because of it), so each pass slows NS by about
    # the SM time it takes: full bandwidth needs many SMs, not all. Half is taken, between
    # no gain (SMs shared pro rata) and perfect hiding, not measured on a GPU yet
    # (`benchmarks/muon_calibrate.py` measures it; `--rates` then uses the measurement).
    elementwise_overlap: float = 0.5
    max_in_flight: int = 4  # Muon's max_in_flight: forwards issued before the first NS


@dataclass(frozen=True)
class Rates:
    """Rates measured on a GPU by `benchmarks/muon_calibrate.py` (`--rates FILE`).

    `ns` maps (short side, long side, method, FP8 steps) of a unit shape to the batched
    NS FLOP/s measured for it (its FLOPs as run over its time; "gram_triangular" with
    blocks of `ns_block` rows);
    `elementwise_bytes_s` is the bandwidth of Muon's fused elementwise passes. Shapes not
    measured fall back to the stated `ns_efficiency`. `elementwise_overlap` is the fraction
    of the passes' time measured hidden under a batched NS call (None: the calibration did
    not measure it; the stated one applies)."""

    source: str
    device: str
    ns: dict[tuple[int, int, str, int], float]
    elementwise_bytes_s: float
    ns_block: int | None = None
    elementwise_overlap: float | None = None

    def ns_rate(
        self, shape: tuple[int, int], method: str, block: int | None, fp8_steps: int = 0
    ) -> float | None:
        """Measured FLOP/s of a `shape` unit (either orientation) by `method` with
        `fp8_steps`, or None (also for "gram_triangular" planned with another `block` than
        the one measured)."""
        if method == "gram_triangular" and block != self.ns_block:
            return None
        return self.ns.get((min(shape), max(shape), method, fp8_steps))


def load_rates(path: str) -> Rates:
    """Read a calibration JSON; ValueError naming the file and what is wrong with it."""
    try:
        data = json.loads(Path(path).read_text())
        ns = {
            (
                int(min(r["shape"])),
                int(max(r["shape"])),
                str(r["method"]),
                int(r.get("fp8_steps", 0)),
            ): float(r["flop_per_s"])
            for r in data["ns"]
        }
        bandwidth = float(data["elementwise"]["bytes_per_s"])
        device = str(data["device"])
        block = data.get("ns_block")
        block = None if block is None else int(block)
        # calibrations from before the overlap was measured have no "overlap"
        overlap = data.get("overlap")
        overlap = None if overlap is None else float(overlap["fraction"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise ValueError(
            f"--rates {path}: not a calibration file from benchmarks/muon_calibrate.py ({e!r})"
        ) from e
    if not ns or any(r <= 0 for r in ns.values()) or bandwidth <= 0:
        raise ValueError(f"--rates {path}: rates must be positive and at least one NS shape")
    if overlap is not None and not 0 <= overlap <= 1:
        raise ValueError(f"--rates {path}: the overlap fraction must be in [0, 1], got {overlap}")
    return Rates(
        source=str(path),
        device=device,
        ns=ns,
        elementwise_bytes_s=bandwidth,
        ns_block=block,
        elementwise_overlap=overlap,
    )


@dataclass(frozen=True)
class Layout:
    """How the GPUs are arranged (module docstring): nodes, HSDP for dense, EP x FSDP."""

    gpus: int
    gpus_per_node: int
    ep: int
    efsdp: int

    @property
    def dense_mesh(self) -> tuple[int, int]:
        """`(replicas, shard)`: nodes by GPUs in a node."""
        return self.gpus // self.gpus_per_node, self.gpus_per_node

    @property
    def expert_mesh(self) -> tuple[int, int]:
        """`(ep, efsdp)`: the expert dim across nodes, each expert's out dim inside a node."""
        return self.ep, self.efsdp


@dataclass(frozen=True)
class Family:
    """Parameters sharing one layout, with the shards of one shard group of `W` members:
    `boxes[i]` is `[W, D, 2]` for parameter `i`; `ranks` (`[W]`) are the global ranks."""

    name: str
    specs: list[ParamSpec]
    boxes: list[np.ndarray]
    ranks: np.ndarray
    copies: int  # shard groups doing the same work (replicas)
    description: str


@dataclass
class GroupResult:
    """The planner's output for one shard group; per-member arrays are `[W]` int64."""

    family: Family
    units: list[Unit]
    owners: np.ndarray  # [U] member index of each unit's owner
    comm_unit: np.ndarray  # [U] bool: some piece lies off the owner
    flops: np.ndarray  # NS FLOPs
    nvlink_numel: np.ndarray  # elements sent inside the node (= received)
    network_numel: np.ndarray  # elements sent to other nodes (= received)
    local_numel: np.ndarray  # elements of the member's shards
    share_numel: np.ndarray  # of those, in units the member's replica orthogonalizes
    owned_numel: np.ndarray  # elements of the units it owns
    received_numel: np.ndarray  # elements it receives from peers into its NS stacks
    moved_numel: np.ndarray  # element copies to and from NS inputs (ElementBytes.moved)
    folded_numel: np.ndarray  # element copies the passes do instead (not spread: held x 2)
    normalized_numel: np.ndarray  # elements of owned units NS normalizes by a pass
    replica_of: np.ndarray  # [U] the replica orthogonalizing each unit (all 0: not spread)
    gather_sent_numel: np.ndarray  # elements of the all-gather across replicas, sent
    gather_received_numel: np.ndarray  # and received

    @property
    def replicas(self) -> int:
        """Replicas the units are spread over (1: each copy does all of them)."""
        return len(self.flops) // len(self.family.ranks)

    @property
    def imbalance(self) -> float:
        """max / mean NS FLOPs over the members of the worst replica's group, as
        `Plan.imbalance` defines it for a rank of that replica."""
        worst = 1.0
        for flops in self.flops.reshape(self.replicas, -1):
            if flops.sum() > 0:
                worst = max(worst, float(flops.max() / flops.mean()))
        return worst

    def ns_seconds(self, unit_seconds) -> np.ndarray:
        """NS seconds per member (`[len(flops)]`): `unit_seconds(unit)` summed on each
        unit's owner's slot."""
        slot = self.replica_of * len(self.family.ranks) + self.owners
        cost = np.array([unit_seconds(u) for u in self.units])
        return np.bincount(slot, weights=cost, minlength=len(self.flops))

    def ns_calls(self, job_numel: int) -> dict[tuple, tuple[np.ndarray, np.ndarray]]:
        """Batched NS calls and the units they take, per member slot (`[len(flops)]` each),
        for each `Unit.key` (unit shape, method, schedule, FP8 steps): one call per job and
        key a member owns units of, with jobs cut as `build_plan` cuts them."""
        n = len(self.family.ranks)
        calls: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        for replica in range(self.replicas):
            share = np.flatnonzero(self.replica_of == replica)
            for chunk in job_chunks([self.units[k] for k in share], n, job_numel):
                owned: dict[tuple, int] = {}
                for c in chunk:
                    slot = (int(self.owners[share[c]]), self.units[share[c]].key)
                    owned[slot] = owned.get(slot, 0) + 1
                for (owner, key), units in owned.items():
                    if key not in calls:
                        zeros = np.zeros(len(self.flops), dtype=np.int64)
                        calls[key] = (zeros, zeros.copy())
                    calls[key][0][replica * n + owner] += 1
                    calls[key][1][replica * n + owner] += units
        return calls

    def job_of(self, job_numel: int) -> np.ndarray:
        """`[U]` the job of each unit (numbered over all replicas), cut as `build_plan` cuts
        them."""
        job = np.zeros(len(self.units), dtype=np.int64)
        count = 0
        for replica in range(self.replicas):
            share = np.flatnonzero(self.replica_of == replica)
            for chunk in job_chunks(
                [self.units[k] for k in share], len(self.family.ranks), job_numel
            ):
                job[share[chunk]] = count
                count += 1
        return job

    def piece_copies(
        self, job_numel: int, merge_runs: bool = True, fold_copies: bool = True
    ) -> np.ndarray:
        """`copy_` calls per member slot (`[len(flops)]`) of one step, as
        `sharded.data_path` locates them with jobs of `job_numel`: a holder's pieces of
        consecutive units of one parameter, of one shape, going to one owner in one job
        form a run, copied as one strided view (`located_copies`). In a group spread over
        replicas (every group without `fold_copies`) each run is copied into the send
        buffer and back out by a holder that does not own its units, into the NS stacks
        and out of the results by the owner, and once more in the replicas' exchange
        (`_exchange_copies`); in any other group only the runs an owner receives from its
        peers are copied, into the stacks and out of the results (the passes move the
        rest). Without `merge_runs`, every piece is its own run."""
        n, replicas = len(self.family.ranks), self.replicas
        job = self.job_of(job_numel)
        owner_slot = self.replica_of * n + self.owners
        copies = np.zeros(replicas * n, dtype=np.int64)
        runs = np.zeros(replicas * n, dtype=np.int64)  # runs held, per member slot
        size = replicas * n
        for start, stop in _param_spans(self.units):  # arrays [U_p, W, D]
            boxes = np.stack([u.box for u in self.units[start:stop]])
            shards = self.family.boxes[self.units[start].param]
            lo = np.maximum(boxes[:, None, :, 0], shards[None, :, :, 0])
            extent = np.clip(np.minimum(boxes[:, None, :, 1], shards[None, :, :, 1]) - lo, 0, None)
            has = (extent > 0).all(axis=-1)  # [U_p, W]
            slot, unit_job = owner_slot[start:stop], job[start:stop]
            same = (slot[1:] == slot[:-1]) & (unit_job[1:] == unit_job[:-1])
            continues = np.zeros_like(has)
            continues[1:] = merge_runs & (
                has[1:] & has[:-1] & same[:, None] & (extent[1:] == extent[:-1]).all(axis=-1)
            )
            first = has & ~continues  # runs, by their first unit
            holder = self.replica_of[start:stop, None] * n + np.arange(n)[None, :]
            away = first & (self.owners[start:stop, None] != np.arange(n)[None, :])
            if fold_copies and replicas == 1:
                copies += 2 * _counts(slot, away.sum(axis=1), size)
            else:
                copies += 2 * _counts(holder.ravel(), away.ravel(), size)
                copies += 2 * _counts(slot, first.sum(axis=1), size)
            runs += _counts(holder.ravel(), first.ravel(), size)
        return copies + _exchange_copies(runs.reshape(replicas, n), replicas)

    def received_at_ends(self, job_numel: int) -> tuple[np.ndarray, np.ndarray]:
        """Elements each member slot (`[len(flops)]`) receives from peers into its NS
        stacks in the first and in the last job it owns units of, with jobs cut as
        `build_plan` cuts them: the loads and stores that no NS of its own runs beside."""
        job = self.job_of(job_numel)
        slot = self.replica_of * len(self.family.ranks) + self.owners
        received = np.array([u.numel - u.held[o] for u, o in zip(self.units, self.owners)])
        first = np.full(len(self.flops), job.max() + 1 if len(job) else 0)
        last = np.full(len(self.flops), -1)
        np.minimum.at(first, slot, job)
        np.maximum.at(last, slot, job)
        size = len(self.flops)
        return (
            _counts(slot, received * (job == first[slot]), size),
            _counts(slot, received * (job == last[slot]), size),
        )

    def jobs(self, job_numel: int) -> tuple[int, int]:
        """Jobs and communicating jobs of the busiest replica, cut by `job_chunks` exactly as
        `build_plan` cuts them (each rank runs only its replica's jobs)."""
        most = (0, 0)
        for replica in range(self.replicas):
            share = np.flatnonzero(self.replica_of == replica)
            chunks = job_chunks([self.units[k] for k in share], len(self.family.ranks), job_numel)
            counts = (len(chunks), sum(bool(self.comm_unit[share[c]].any()) for c in chunks))
            most = max(most, counts)
        return most


@dataclass
class Planned:
    """A model planned on a layout: one `GroupResult` per family."""

    model: str
    cfg: PlannerModel
    layout: Layout
    groups: list[GroupResult]
    ns_steps: int
    method: str
    ns_block: int | None  # block of "gram_triangular"'s symmetric products
    planner_s: float  # wall time
    planner_cpu_s: float  # CPU time of this process
    ns_accuracy: AccuracyTable | None = None  # per-shape schedules chosen from it
    rebalance: bool = True  # owners as `assign_owners` rebalances them (what Muon runs)


def choose_layout(
    cfg: PlannerModel, gpus: int, gpus_per_node: int = 8, ep: int | None = None
) -> Layout:
    """The layout for `gpus` GPUs (module docstring); ValueError if it cannot use them."""
    if gpus < 1:
        raise ValueError(f"--gpus must be >= 1, got {gpus}")
    if gpus_per_node < 1:
        raise ValueError(f"--gpus-per-node must be >= 1, got {gpus_per_node}")
    node = min(gpus, gpus_per_node)
    if gpus % node:
        raise ValueError(
            f"--gpus {gpus} is not a whole number of nodes of {gpus_per_node} GPUs; "
            "dense parameters are sharded within a node and replicated across nodes"
        )
    if cfg.n_experts == 0:
        if ep is not None:
            raise ValueError("--ep given, but the model has no routed experts")
        return Layout(gpus=gpus, gpus_per_node=node, ep=1, efsdp=gpus)
    if ep is None:
        fits = [
            d
            for d in range(1, gpus + 1)
            if gpus % d == 0 and cfg.n_experts % d == 0 and node % (gpus // d) == 0
        ]
        if not fits:
            raise ValueError(
                f"no expert-parallel size fits {gpus} GPUs: it must divide the GPU count and "
                f"the {cfg.n_experts} experts, leaving a divisor of the node ({node} GPUs) "
                "to shard each expert over; pass --ep to choose one"
            )
        ep = max(fits)
    if ep < 1 or gpus % ep:
        raise ValueError(f"--ep {ep} must be >= 1 and divide --gpus {gpus}")
    if ep > cfg.n_experts:
        raise ValueError(f"--ep {ep} exceeds the model's {cfg.n_experts} experts")
    return Layout(gpus=gpus, gpus_per_node=node, ep=ep, efsdp=gpus // ep)


def families(cfg: PlannerModel, layout: Layout) -> list[Family]:
    """The dense and expert families of `cfg`'s Muon parameters under `layout`, each with
    the shard boxes of one of its shard groups (replica 0 for dense)."""
    dense, experts = [], []
    for p in cfg.parameter_shapes():
        if p.muon is None:
            continue
        spec = ParamSpec(p.name, p.shape, route(p.name, p.name, p.shape, p.muon).granularity)
        validate(spec.name, spec.shape, spec.granularity)
        (experts if spec.granularity.kind == "experts" else dense).append(spec)
    node = layout.gpus_per_node
    dense_placements = (Replicate(), Shard(0))
    expert_placements = (Shard(0), Shard(1))
    out = [
        Family(
            name="dense",
            specs=dense,
            boxes=[
                shard_boxes(s.name, s.shape, layout.dense_mesh, dense_placements)[0] for s in dense
            ],
            ranks=np.arange(node),
            copies=layout.dense_mesh[0],
            description=(
                f"HSDP mesh {layout.dense_mesh} (Replicate, Shard(0)): sharded over the "
                f"{node} GPUs of a node, one copy per node"
            ),
        ),
        Family(
            name="experts",
            specs=experts,
            # Mesh coordinates in row-major order are global ranks, as in init_device_mesh.
            boxes=[
                shard_boxes(s.name, s.shape, layout.expert_mesh, expert_placements).reshape(
                    layout.gpus, len(s.shape), 2
                )
                for s in experts
            ],
            ranks=np.arange(layout.gpus),
            copies=1,
            description=(
                f"mesh (ep={layout.ep}, efsdp={layout.efsdp}) (Shard(0), Shard(1)): experts "
                f"over {layout.ep} EP ranks, each expert's out dim over {layout.efsdp} GPUs"
            ),
        ),
    ]
    return [f for f in out if f.specs]


def plan_group(
    family: Family,
    gpus_per_node: int,
    ns_steps: int,
    method: str,
    spread: bool = True,
    initial_load: np.ndarray | None = None,
    ns_block: int | None = None,
    ns_accuracy: AccuracyTable | None = None,
    rebalance: bool = True,
) -> GroupResult:
    """Run the optimizer's planner on one shard group of `family` and count, per member,
    FLOPs, elements sent inside and across nodes, and elements held and owned.

    With `spread` and more than one copy, every unit gets one owner among all replicas'
    members, as `build_plan` assigns it, and the per-member arrays cover every replica:
    `[copies * W]`, replica-major (global rank order). `initial_load` (`[gpus]`) is the NS
    FLOPs per global rank of groups planned before, which ownership evens out.
    `ns_accuracy` chooses each shape's schedule as Muon's `ns_accuracy` does;
    `rebalance=False` predicts owners as `assign_owners` chose them before it rebalanced.
    """
    n = len(family.ranks)
    ids = list(range(len(family.specs)))
    units = group_units(
        family.specs, ids, family.boxes, ns_steps, method, ns_block, accuracy=ns_accuracy
    )
    replicas = family.copies if spread else 1
    # Slots as build_plan orders them (member-major); global rank = replica * n + member.
    slot_ranks = (np.arange(replicas)[None, :] * n + family.ranks[:, None]).reshape(-1)
    tiled = [replace(u, held=np.repeat(u.held, replicas)) for u in units]
    start = None if initial_load is None else initial_load[slot_ranks]
    slots, slot_flops = assign_owners(tiled, replicas * n, start, rebalance)
    slots = np.asarray(slots, dtype=np.int64)
    replica_of, owners = slots % replicas, slots // replicas
    flops = slot_flops.reshape(n, replicas).T.reshape(-1)
    node = family.ranks // gpus_per_node
    comm_unit = np.zeros(len(units), dtype=bool)
    per_replica = []
    for replica in range(replicas):
        share = np.flatnonzero(replica_of == replica)
        counts = _count_share([units[k] for k in share], owners[share], n, node)
        comm_unit[share] = counts["comm_unit"]
        per_replica.append(counts)
    local = np.zeros(n, dtype=np.int64)
    for boxes in family.boxes:
        local += np.prod(boxes[..., 1] - boxes[..., 0], axis=-1)
    # All-gather across replicas: a member sends its share to every other replica and
    # receives theirs.
    held = np.stack([c["held"] for c in per_replica])  # [replicas, n]
    gather_sent = ((replicas - 1) * held).reshape(-1)
    gather_received = (held.sum(axis=0)[None, :] - held).reshape(-1)
    # Each held element to NS and back: copied through the direction buffers in a spread
    # group, written and read by the passes themselves in any other.
    held_copies = 2 * held.reshape(-1)
    from_peers = np.concatenate([c["received"] for c in per_replica])
    spread_over = replicas > 1
    return GroupResult(
        family=family,
        units=units,
        owners=owners,
        comm_unit=comm_unit,
        flops=flops,
        nvlink_numel=np.concatenate([c["nvlink"] for c in per_replica]),
        network_numel=np.concatenate([c["network"] for c in per_replica]),
        local_numel=np.tile(local, replicas),
        share_numel=held.reshape(-1),
        owned_numel=np.concatenate([c["owned"] for c in per_replica]),
        received_numel=from_peers,
        moved_numel=2 * from_peers + gather_sent + gather_received + spread_over * held_copies,
        folded_numel=(not spread_over) * held_copies,
        normalized_numel=np.concatenate([c["normalized"] for c in per_replica]),
        replica_of=replica_of,
        gather_sent_numel=gather_sent,
        gather_received_numel=gather_received,
    )


def _param_spans(units: list[Unit]) -> Iterator[tuple[int, int]]:
    """(start, stop) of each parameter's run of `units` (they come in parameter order): one
    parameter at a time keeps the per-unit arrays small, `[U_p, W]`."""
    start = 0
    while start < len(units):
        stop = start
        while stop < len(units) and units[stop].param == units[start].param:
            stop += 1
        yield start, stop
        start = stop


def _counts(index: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """`weights` summed per `index` into `size` int64 bins."""
    return np.bincount(index, weights=weights, minlength=size).astype(np.int64)


def _count_share(
    units: list[Unit], owners: np.ndarray, n: int, node: np.ndarray
) -> dict[str, np.ndarray]:
    """Per member of a group of `n` on nodes `node` (`[n]`), for `units` owned by `owners`:
    elements sent inside / across nodes, owned, held, received from peers into the
    owner's NS stacks (each copied there and its result back into the buffer sent back)
    and owned in units of the standard NS, and which units communicate."""
    nvlink = np.zeros(n, dtype=np.int64)
    network = np.zeros(n, dtype=np.int64)
    owned = np.zeros(n, dtype=np.int64)
    from_peers = np.zeros(n, dtype=np.int64)
    normalized = np.zeros(n, dtype=np.int64)
    held_total = np.zeros(n, dtype=np.int64)
    comm_unit = np.zeros(len(units), dtype=bool)
    for start, stop in _param_spans(units):
        held = np.stack([u.held for u in units[start:stop]])
        own = owners[start:stop]
        # Forward, each piece held off the owner goes to it; backward, the owner returns it.
        away = np.where(own[:, None] == np.arange(n)[None, :], 0, held)
        cross = node[None, :] != node[own][:, None]
        for sent, moved in ((nvlink, away * ~cross), (network, away * cross)):
            sent += moved.sum(axis=0)
            sent += _counts(own, moved.sum(axis=1), n)
        unit_numel = held.sum(axis=1)
        owned += _counts(own, unit_numel, n)
        from_peers += _counts(own, away.sum(axis=1), n)
        standard = np.array([u.method == "standard" for u in units[start:stop]])
        normalized += _counts(own, unit_numel * standard, n)
        held_total += held.sum(axis=0)
        comm_unit[start:stop] = away.sum(axis=1) > 0
    return {
        "comm_unit": comm_unit,
        "nvlink": nvlink,
        "network": network,
        "owned": owned,
        "received": from_peers,
        "normalized": normalized,
        "held": held_total,
    }


def _exchange_copies(runs: np.ndarray, replicas: int) -> np.ndarray:
    """`copy_` calls of the replicas' exchange per member slot (`[replicas * n]`), given
    the runs of pieces each member holds of each replica's share (`runs`, `[replicas, n]`):
    its own share's runs copied into the send buffer once, that share copied whole for
    each further replica, and every run of the other shares copied out of the receive
    buffer."""
    if replicas == 1:
        return np.zeros(runs.size, dtype=np.int64)
    others = runs.sum(axis=0)[None, :] - runs
    return (runs + (replicas - 2) + others).reshape(-1)


def plan(
    model: str,
    gpus: int,
    *,
    gpus_per_node: int = 8,
    ep: int | None = None,
    ns_steps: int = 5,
    method: str = "auto",
    spread_replicas: bool = True,
    ns_block: int | None = None,
    ns_accuracy: AccuracyTable | None = None,
    rebalance: bool = True,
) -> Planned:
    """Choose the layout for `model` on `gpus` GPUs and run the planner on each family
    (`method`, `spread_replicas`, `ns_block` and `ns_accuracy` mean what Muon's
    `ns_method`, `spread_replicas`, `ns_block` and `ns_accuracy` do: None, the default,
    plans full products and `ns_steps` quintic steps on every shape; a shape the table has
    not measured runs 5 quintic steps, as in Muon without `strict`). `rebalance=False`
    plans the owners as Muon chose them before `rebalance_owners`."""
    if not 1 <= ns_steps < 100:
        raise ValueError(f"--ns-steps must be in [1, 99], got {ns_steps}")
    if ns_block is not None and ns_block < 1:
        raise ValueError(
            f"--ns-block must be >= 1 (rows of the symmetric products' blocks; omit it for "
            f"full products), got {ns_block}"
        )
    cfg = planner_model(model)
    layout = choose_layout(cfg, gpus, gpus_per_node, ep)
    t0, c0 = time.perf_counter(), time.process_time()
    # As build_plan: groups spanning every GPU seed the ownership of the groups after them.
    world_load = np.zeros(layout.gpus, dtype=np.int64)
    groups = []
    for f in families(cfg, layout):
        g = plan_group(
            f,
            layout.gpus_per_node,
            ns_steps,
            method,
            spread_replicas,
            world_load,
            ns_block,
            ns_accuracy,
            rebalance,
        )
        if len(g.flops) == layout.gpus:
            world_load += g.flops
        groups.append(g)
    return Planned(
        model,
        cfg,
        layout,
        groups,
        ns_steps,
        method,
        ns_block,
        planner_s=time.perf_counter() - t0,
        planner_cpu_s=time.process_time() - c0,
        ns_accuracy=ns_accuracy,
        rebalance=rebalance,
    )


def per_rank(planned: Planned, attr: str, spread: bool | None = None) -> np.ndarray:
    """`GroupResult.<attr>` summed over the groups of each global rank, `[gpus]` (with
    `spread`, over the groups spread over replicas only, or only the others).

    Global rank r is member r of the expert group and member r % gpus_per_node of its
    node's dense group: entry r of a dense group spread over the replicas (replica r //
    gpus_per_node), else entry r % gpus_per_node (every node's group plans like replica 0's)."""
    ranks = np.arange(planned.layout.gpus)
    total = np.zeros(planned.layout.gpus, dtype=np.int64)
    for g in planned.groups:
        if spread is not None and (g.replicas > 1) != spread:
            continue
        values = getattr(g, attr)
        total = total + values[ranks % len(values)]
    return total


class _OpCounter(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops += 1
        kwargs = kwargs or {}
        if func is torch.ops.aten._scaled_mm.out:
            return kwargs["out"]  # it has no meta kernel; on meta it would write nothing
        return func(*args, **kwargs)


@functools.cache
def ns_host_ops(
    shape: tuple[int, int],
    steps: int,
    method: str,
    block: int | None,
    fp8_steps: int = 0,
    batch: int = 1,
) -> int:
    """Torch operations (views included) one batched `newton_schulz` call of `batch` units
    of `shape` issues on the host as sharded Muon calls it (bf16 stack, result into
    `ns_result`), counted by running it on meta tensors (no data, no compute). Only FP8
    products issue ops per unit (`torch._scaled_mm` takes one matrix)."""
    g = torch.empty(batch, *shape, dtype=torch.bfloat16, device="meta")
    out = ns_result(batch, *shape, torch.bfloat16, g.device)
    schedule = coefficient_schedule(QUINTIC, steps)
    with _OpCounter() as counter:
        newton_schulz(g, schedule, method=method, block=block, out=out, fp8_steps=fp8_steps)
    return counter.ops


def ns_calls_per_rank(planned: Planned, job_numel: int) -> tuple[np.ndarray, np.ndarray]:
    """Batched NS calls per global rank (`[gpus]`) with jobs of `job_numel`, and the torch
    ops the host issues for them (every op of every call, views included)."""
    ranks = np.arange(planned.layout.gpus)
    calls_total = np.zeros(planned.layout.gpus, dtype=np.int64)
    ops_total = np.zeros(planned.layout.gpus, dtype=np.int64)
    for g in planned.groups:
        for (shape, method, schedule, fp8), (calls, units) in g.ns_calls(job_numel).items():
            mine, my_units = calls[ranks % len(calls)], units[ranks % len(units)]
            calls_total += mine
            # a call's ops are affine in its batch: those of one unit, plus each further
            # unit's (FP8 products only)
            one = ns_host_ops(shape, len(schedule), method, planned.ns_block, fp8)
            two = ns_host_ops(shape, len(schedule), method, planned.ns_block, fp8, batch=2)
            ops_total += mine * one + (my_units - mine) * (two - one)
    return calls_total, ops_total


def piece_copies_per_rank(
    planned: Planned, job_numel: int, merge_runs: bool = True, fold_copies: bool = True
) -> np.ndarray:
    """`copy_` calls of pieces per global rank (`[gpus]`) with jobs of `job_numel`
    (`GroupResult.piece_copies`), summed over groups as `per_rank` sums."""
    ranks = np.arange(planned.layout.gpus)
    total = np.zeros(planned.layout.gpus, dtype=np.int64)
    for g in planned.groups:
        copies = g.piece_copies(job_numel, merge_runs, fold_copies)
        total += copies[ranks % len(copies)]
    return total


def predict(
    planned: Planned,
    gpu: str = "h200",
    assumptions: Assumptions | None = None,
    rates: Rates | None = None,
) -> dict:
    """Predict one Muon step of `planned` on GPUs of kind `gpu` (module docstring).

    With `rates`, each unit's NS runs at the FLOP/s measured for its shape and method (the
    stated `ns_efficiency` for shapes not measured) and the elementwise term at the measured
    bandwidth. Returns a JSON-ready report: layout, hardware, assumptions and where each
    rate came from, one summary per group and the step-time breakdown of the slowest rank.
    """
    a = assumptions or Assumptions()
    if gpu not in HARDWARE:
        raise ValueError(f"unknown GPU {gpu!r}; known: {', '.join(HARDWARE)}")
    if not 0 < a.ns_efficiency <= 1 or not 0 < a.bandwidth_efficiency <= 1:
        raise ValueError(
            f"efficiencies must be in (0, 1], got ns {a.ns_efficiency}, "
            f"bandwidth {a.bandwidth_efficiency}"
        )
    if a.job_numel < 1:
        raise ValueError(f"--job-numel must be >= 1, got {a.job_numel}")
    if not 0 <= a.elementwise_overlap <= 1:
        raise ValueError(f"elementwise_overlap must be in [0, 1], got {a.elementwise_overlap}")
    if a.max_in_flight < 1:
        raise ValueError(f"max_in_flight must be >= 1, got {a.max_in_flight}")
    hw, layout, groups = HARDWARE[gpu], planned.layout, planned.groups
    flops = per_rank(planned, "flops")
    nvlink = per_rank(planned, "nvlink_numel") * a.ns_bytes
    gather = a.ns_bytes * np.maximum(
        per_rank(planned, "gather_sent_numel"), per_rank(planned, "gather_received_numel")
    )
    network = per_rank(planned, "network_numel") * a.ns_bytes + gather
    eb = a.element_bytes or element_bytes(4, a.ns_bytes, a.fused_elementwise)
    moved = per_rank(planned, "moved_numel")
    if not a.fold_copies:
        moved = moved + per_rank(planned, "folded_numel")
    ranks = np.arange(layout.gpus)
    local = per_rank(planned, "local_numel")
    # A spread group's elements (and of them, those of its replica's share), whose momentum
    # pass is split with `split_momentum`.
    spread_local = per_rank(planned, "local_numel", spread=True)
    spread_share = per_rank(planned, "share_numel", spread=True)
    passes = local * eb.local  # the two passes' bytes
    if a.split_momentum:
        passes += spread_share * eb.direction - spread_local * (eb.local - eb.advance - eb.update)
    elem_bytes = (
        passes
        + moved * eb.moved
        + per_rank(planned, "owned_numel") * eb.owned
        + per_rank(planned, "normalized_numel") * eb.normalized
    )
    jobs = [g.jobs(a.job_numel) for g in groups]
    comm_jobs = sum(c for _, c in jobs)
    collectives = 2 * comm_jobs + sum(g.replicas > 1 for g in groups)  # + all-gathers
    bw = a.bandwidth_efficiency
    stated = 1 / (a.ns_efficiency * hw.bf16_flops)
    stated_fp8 = 1 / (a.ns_efficiency * hw.fp8_flops)
    unmeasured: set[tuple[int, int, str, int]] = set()

    mirror_bytes: dict[tuple[tuple[int, int], str, int], int] = {}

    def mirror_seconds(u: Unit) -> float:
        """The symmetric products' copies below the diagonal (read and write), at HBM
        bandwidth; a measured rate has them in its time already."""
        if rates and rates.ns_rate(u.shape, u.method, planned.ns_block, u.fp8_steps) is not None:
            return 0.0
        key = (u.shape, u.method, len(u.schedule))
        if key not in mirror_bytes:
            numel = ns_mirror_numel(*u.shape, key[2], u.method, block=planned.ns_block)
            mirror_bytes[key] = 2 * a.ns_bytes * numel
        return mirror_bytes[key] / (bw * hw.hbm_bytes_s)

    fp8_parts: dict[tuple, tuple[int, int]] = {}

    def fp8_part(u: Unit) -> tuple[int, int]:
        """(FLOPs, casts' and adds' HBM bytes) of a unit's FP8 products."""
        key = (u.shape, u.method, len(u.schedule), u.fp8_steps)
        if key not in fp8_parts:
            fp8_parts[key] = (
                ns_fp8_flops(*u.shape, key[2], u.method, u.fp8_steps),
                ns_fp8_bytes(*u.shape, key[2], u.method, u.fp8_steps),
            )
        return fp8_parts[key]

    def fp8_bytes_seconds(u: Unit) -> float:
        """The FP8 products' casts and adds at HBM bandwidth (unless assumed fused away); a
        measured rate has them in its time already."""
        if not a.fp8_extra_bytes or (
            rates and rates.ns_rate(u.shape, u.method, planned.ns_block, u.fp8_steps) is not None
        ):
            return 0.0
        return fp8_part(u)[1] / (bw * hw.hbm_bytes_s)

    def unit_seconds(u: Unit) -> float:
        rate = rates.ns_rate(u.shape, u.method, planned.ns_block, u.fp8_steps) if rates else None
        if rate is None:
            unmeasured.add((min(u.shape), max(u.shape), u.method, u.fp8_steps))
            fp8_flops = fp8_part(u)[0]
            return (
                (u.flops - fp8_flops) * stated
                + fp8_flops * stated_fp8
                + fp8_bytes_seconds(u)
                + mirror_seconds(u)
            )
        return u.flops / rate

    t_ns = np.zeros(layout.gpus)
    t_mirror = np.zeros(layout.gpus)
    t_fp8_bytes = np.zeros(layout.gpus)
    for g in groups:
        seconds = g.ns_seconds(unit_seconds)
        t_ns += seconds[ranks % len(seconds)]
        seconds = g.ns_seconds(mirror_seconds)
        t_mirror += seconds[ranks % len(seconds)]
        seconds = g.ns_seconds(fp8_bytes_seconds)
        t_fp8_bytes += seconds[ranks % len(seconds)]
    t_comm = np.maximum(nvlink / (bw * hw.nvlink_bytes_s), network / (bw * hw.network_bytes_s))
    t_exposed = np.maximum(0.0, t_comm - t_ns) + t_comm / max(1, comm_jobs)
    elem_rate = rates.elementwise_bytes_s if rates else bw * hw.hbm_bytes_s
    t_elem = elem_bytes / elem_rate
    measured_overlap = rates.elementwise_overlap if rates else None
    overlap = a.elementwise_overlap if measured_overlap is None else measured_overlap
    overlap = overlap if a.overlap_elementwise else 0.0
    # Bytes before the first NS (momentum passes) and after the last (updates), and the
    # copies the runtime issues beside NS: what of the elementwise work can overlap.
    # A spread group: the directions of its replica's share when split, else a whole pass
    # (its replica's first job touches every parameter).
    momentum = eb.local - eb.update
    first = spread_share * eb.direction if a.split_momentum else spread_local * momentum
    copies_beside = np.zeros(layout.gpus, dtype=np.int64)
    for g in groups:
        if g.replicas > 1:
            continue
        # the forwards issued first and the first local job
        held = g.local_numel[ranks % len(g.local_numel)]
        first += np.minimum(held, (a.max_in_flight + 1) * a.job_numel) * momentum
        if a.copies_beside:
            # received pieces loaded and their results stored on side streams, but for
            # the loads of a rank's first job and the stores of its last
            ends = sum(g.received_at_ends(a.job_numel))
            beside = 2 * g.received_numel - ends
            copies_beside += beside[ranks % len(beside)] * eb.moved
    # The exchange's pack and unpack, the spread groups' updates and their buffers'
    # advance run beside the other groups' NS when there is such NS to run beside; else
    # the pack before it and the rest after the last NS.
    beside_other_ns = any(g.replicas == 1 for g in groups)
    if a.exchange_packed_aside and beside_other_ns:
        copies_beside += per_rank(planned, "gather_sent_numel") * eb.moved
    if a.exchange_aside and beside_other_ns:
        copies_beside += per_rank(planned, "gather_received_numel") * eb.moved
        last = np.minimum(local - spread_local, a.job_numel) * eb.update
    else:
        last = np.minimum(local, a.job_numel + spread_local) * eb.update
        last += spread_local * eb.advance if a.split_momentum else 0
    t_overlappable = np.maximum(0.0, passes + copies_beside - first - last) / elem_rate
    t_hidden = np.minimum(overlap * t_overlappable, t_ns)
    t_device = t_ns + t_exposed + t_elem - t_hidden
    t_launch = collectives * a.collective_overhead_s
    t_python = sum(c * len(g.family.ranks) for g, (_, c) in zip(groups, jobs))
    t_python *= a.host_per_member_s
    ns_calls, ns_ops = ns_calls_per_rank(planned, a.job_numel)
    t_ns_host = ns_ops * a.host_per_op_s
    copies = piece_copies_per_rank(planned, a.job_numel, a.merge_runs, a.fold_copies)
    t_copies = copies * a.piece_copy_ops * a.host_per_op_s
    t_host_per_rank = t_launch + t_python + t_ns_host + t_copies
    t_host = float(t_host_per_rank.max())
    busiest_host = int(np.argmax(t_host_per_rank))
    worst = int(np.argmax(t_device))
    terms = {
        "ns_s": float(t_ns[worst]),
        "exposed_comm_s": float(t_exposed[worst]),
        "elementwise_s": float(t_elem[worst]),
        "elementwise_hidden_s": float(t_hidden[worst]),
        "elementwise_overlappable_s": float(t_overlappable[worst]),
        "host_s": t_host,
    }
    step = max(t_host, float(t_device[worst]))
    # What bounds the step: the host, or the largest of NS, transfers (when they outlast
    # the NS they overlap) and elementwise work on the slowest rank.
    bounds = {
        "newton_schulz": float(t_ns[worst]),
        "communication": float(t_comm[worst]),
        "elementwise": float(t_elem[worst]),
    }
    dominant = "host" if t_host >= t_device[worst] else max(bounds, key=bounds.get)
    adamw = sum(math.prod(p.shape) for p in planned.cfg.parameter_shapes() if p.muon is None)
    return {
        "model": planned.model,
        "parameters": planned.cfg.num_parameters(),
        "gpus": layout.gpus,
        "gpu": gpu,
        "layout": asdict(layout),
        "ns_steps": planned.ns_steps,
        "method": planned.method,
        "ns_block": planned.ns_block,
        "ns_accuracy": _accuracy_summary(planned),
        "rebalanced_owners": planned.rebalance,
        "hardware": asdict(hw),
        "assumptions": asdict(a),
        "sources": {
            "ns": "stated" if rates is None else f"measured ({rates.source}, {rates.device})",
            "ns_unmeasured_shapes": sorted(list(s) for s in unmeasured) if rates else [],
            "elementwise": "stated" if rates is None else f"measured ({rates.source})",
            "elementwise_overlap": (
                "stated" if measured_overlap is None else f"measured ({rates.source})"
            ),
        },
        "element_bytes": asdict(eb),
        "groups": [_group_summary(g, a.ns_bytes, *j) for g, j in zip(groups, jobs)],
        "per_rank": {
            "ns_flops": _stats(flops),
            "imbalance": float(flops.max() / flops.mean()) if flops.sum() else 1.0,
            "nvlink_bytes": _stats(nvlink),
            "network_bytes": _stats(network),
            "replica_gather_bytes": _stats(gather),
            "elementwise_bytes": _stats(elem_bytes),
            "elementwise_numel": {
                name: _stats(moved if name == "moved" else per_rank(planned, f"{name}_numel"))
                for name in ("local", "moved", "owned", "normalized")
            },
            "collectives": collectives,
            "ns_calls": _stats(ns_calls),
            "ns_host_ops": _stats(ns_ops),
            "piece_copies": _stats(copies),
            "adamw_elements": adamw // layout.gpus_per_node,
        },
        "time": {
            "step_s": step,
            **terms,
            "dominant": dominant,
            "ns_mirror_s": float(t_mirror[worst]),
            "ns_fp8_bytes_s": float(t_fp8_bytes[worst]),
            "device_s": float(t_device[worst]),
            "slowest_rank": worst,
            "comm_s": float(t_comm[worst]),
            "host_launch_s": t_launch,
            "host_python_s": t_python,
            "host_ns_ops_s": float(t_ns_host[busiest_host]),
            "host_piece_copies_s": float(t_copies[busiest_host]),
            "serial_s": float(np.max(t_host_per_rank + t_ns + t_comm + t_elem)),
        },
        "planner_s": planned.planner_s,
        "planner_cpu_s": planned.planner_cpu_s,
    }


def _accuracy_summary(planned: Planned) -> dict | None:
    """Where the per-shape schedules came from, and the unit shapes the table has not
    measured (they run 5 quintic steps)."""
    table = planned.ns_accuracy
    if table is None:
        return None
    shapes = {(min(u.shape), max(u.shape)) for g in planned.groups for u in g.units}
    return {
        "source": table.source,
        "bar": table.bar,
        "not_measured": sorted(list(s) for s in shapes if s not in table.ratios),
    }


def _stats(x: np.ndarray) -> dict[str, float]:
    return {"min": float(x.min()), "mean": float(x.mean()), "max": float(x.max())}


def _group_summary(g: GroupResult, ns_bytes: int, jobs: int, comm_jobs: int) -> dict:
    """JSON summary of one group: units by shape, FLOPs, and bytes against two references."""
    w = len(g.family.ranks)
    numel = sum(math.prod(s.shape) for s in g.family.specs)
    by_shape: dict[tuple, dict] = {}
    min_traffic = on_holder = 0
    for u, owner in zip(g.units, g.owners):
        row = by_shape.setdefault(
            u.key,
            {
                "shape": list(u.shape),
                "method": u.method,
                "schedule": schedule_label(u.schedule),
                "ns_steps": len(u.schedule),
                "fp8_steps": u.fp8_steps,
                "flops_per_unit": u.flops,
                "units": 0,
            },
        )
        row["units"] += 1
        row["stay_local"] = row.get("stay_local", 0) + int(u.held[owner] == u.numel)
        min_traffic += 2 * (u.numel - int(u.held.max()))
        on_holder += int(u.held[owner] > 0)
    sent = (g.nvlink_numel + g.network_numel) * ns_bytes
    return {
        "family": g.family.name,
        "layout": g.family.description,
        "members": w,
        "copies": g.family.copies,
        "spread_over_replicas": g.replicas,
        "parameters": len(g.family.specs),
        "elements": numel,
        "units": len(g.units),
        "units_by_shape": list(by_shape.values()),
        "owners": len(np.unique(g.owners)),
        "owned_by_a_holder": on_holder / max(1, len(g.units)),
        "ns_flops": _stats(g.flops),
        "ns_flops_total": int(g.flops.sum()),
        "imbalance": g.imbalance,
        "bytes_sent": _stats(sent),
        "network_bytes": _stats(g.network_numel * ns_bytes),
        # Every unit split evenly over all W members: each sends (W-1)/W of its shard twice.
        "even_split_bytes": 2 * (w - 1) / w * numel / w * ns_bytes,
        # Each unit owned by its largest holder: the least any owner choice can move.
        "locality_bound_bytes": min_traffic * ns_bytes / w,
        "jobs": jobs,
        "comm_jobs": comm_jobs,
    }


def plan_and_choose_spread(
    model: str,
    gpus: int,
    gpu: str = "h200",
    assumptions: Assumptions | None = None,
    rates: Rates | None = None,
    **plan_options,
) -> dict:
    """Plan `model` with dense units spread over the replicas and repeated on each, predict
    both, and return the faster one's report with `spread_replicas` saying which was chosen
    and both step times (spreading trades dense NS for the replicas' exchange, which pays
    only while it hides under NS: the value to pass as Muon's `spread_replicas`)."""
    reports = {
        spread: predict(
            plan(model, gpus, spread_replicas=spread, **plan_options), gpu, assumptions, rates
        )
        for spread in (True, False)
    }
    chosen = min(reports, key=lambda spread: reports[spread]["time"]["step_s"])
    return {
        **reports[chosen],
        "spread_replicas": {
            "chosen": chosen,
            "step_s_spread": reports[True]["time"]["step_s"],
            "step_s_repeated": reports[False]["time"]["step_s"],
        },
    }


def main(args: argparse.Namespace) -> int:
    """`etude plan muon`: print the assignment summary and the predicted step time."""
    if args.ns_fp8 and not args.ns_accuracy:
        raise ValueError("--ns-fp8 chooses FP8 steps from a measured table: pass --ns-accuracy")
    rates = load_rates(args.rates) if args.rates else None
    assumptions = Assumptions(
        ns_efficiency=args.ns_efficiency,
        job_numel=args.job_numel,
        overlap_elementwise=not args.no_overlap,
    )
    options = {
        "gpus_per_node": args.gpus_per_node,
        "ep": args.ep,
        "ns_steps": args.ns_steps,
        "ns_block": args.ns_block,
        "ns_accuracy": (
            load_accuracy_table(args.ns_accuracy, fp8=args.ns_fp8) if args.ns_accuracy else None
        ),
    }
    if args.spread == "auto":
        report = plan_and_choose_spread(
            args.model, args.gpus, args.gpu, assumptions, rates, **options
        )
    else:
        spread = args.spread == "on"
        planned = plan(args.model, args.gpus, spread_replicas=spread, **options)
        report = predict(planned, args.gpu, assumptions, rates)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report, Console())
    return 0


def _si(x: float, unit: str) -> str:
    scales = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""))
    for scale, prefix in (*scales, (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def print_report(report: dict, console: Console) -> None:
    """Render `predict`'s report as rich tables."""
    hw, a, t, pr = report["hardware"], report["assumptions"], report["time"], report["per_rank"]
    src = report["sources"]
    console.print(
        f"[bold]{report['model']}[/] ({_si(report['parameters'], '')} parameters) on "
        f"{report['gpus']} x {hw['name']}; planner ran in {report['planner_s']:.2f} s "
        f"({report['planner_cpu_s']:.2f} s CPU)"
    )
    for g in report["groups"]:
        console.print(f"  {g['family']}: {g['layout']}")
    block = report["ns_block"]
    console.print(
        "  Newton–Schulz: full products (no --ns-block)"
        if block is None
        else f"  Newton–Schulz: symmetric products in blocks of {block} rows (--ns-block)"
    )
    if "spread_replicas" in report:
        choice = report["spread_replicas"]
        console.print(
            f"  dense units {'spread over' if choice['chosen'] else 'repeated on'} the "
            f"replicas (spread_replicas={choice['chosen']}): predicted "
            f"{_si(choice['step_s_spread'], 's')} spread, "
            f"{_si(choice['step_s_repeated'], 's')} repeated"
        )
    shapes = Table(title="Newton–Schulz units of one shard group per family")
    for col in ("family", "matrix", "method", "schedule", "units", "stay local", "FLOPs/unit"):
        shapes.add_column(
            col, justify="left" if col in ("family", "method", "schedule") else "right"
        )
    for g in report["groups"]:
        for row in g["units_by_shape"]:
            shapes.add_row(
                g["family"],
                "x".join(map(str, row["shape"])),
                row["method"],
                f"{row['schedule']} x {row['ns_steps']}"
                + (f", {row['fp8_steps']} FP8" if row["fp8_steps"] else ""),
                str(row["units"]),
                str(row["stay_local"]),
                _si(row["flops_per_unit"], "FLOP"),
            )
    console.print(shapes)
    groups = Table(title="Assignment, one shard group per family (per member)")
    groups.add_column("")
    for g in report["groups"]:
        groups.add_column(g["family"], justify="right")

    def spread(stats: dict, unit: str) -> str:
        return " / ".join(_si(stats[k], unit) for k in ("min", "mean", "max"))

    rows = {
        "members x copies": lambda g: f"{g['members']} x {g['copies']}",
        "owners": lambda g: str(g["owners"]),
        "units owned by a holder": lambda g: f"{g['owned_by_a_holder']:.1%}",
        "NS FLOPs min / mean / max": lambda g: spread(g["ns_flops"], "FLOP"),
        "imbalance (max / mean)": lambda g: f"{g['imbalance']:.4f}",
        "bytes sent min / mean / max": lambda g: spread(g["bytes_sent"], "B"),
        "  even-split reference": lambda g: _si(g["even_split_bytes"], "B"),
        "  locality bound (mean)": lambda g: _si(g["locality_bound_bytes"], "B"),
        "  over the network, max": lambda g: _si(g["network_bytes"]["max"], "B"),
        "jobs (communicating)": lambda g: f"{g['jobs']} ({g['comm_jobs']})",
    }
    for name, cell in rows.items():
        groups.add_row(name, *(cell(g) for g in report["groups"]))
    console.print(groups)
    times = Table(title=f"Predicted Muon step (slowest rank: {t['slowest_rank']})")
    times.add_column("term")
    times.add_column("time", justify="right")
    times.add_column("from")
    rows = [
        (
            "Newton–Schulz",
            t["ns_s"],
            f"{_si(pr['ns_flops']['max'], 'FLOP')} on the busiest rank; rate "
            + (
                f"stated: {a['ns_efficiency']:.0%} of {_si(hw['bf16_flops'], 'FLOP/s')}"
                if src["ns"] == "stated"
                else f"{src['ns']} per unit shape"
            )
            + f"; symmetric products' mirror copies {_si(t['ns_mirror_s'], 's')}"
            + (
                f"; FP8 casts and adds {_si(t['ns_fp8_bytes_s'], 's')}"
                if t["ns_fp8_bytes_s"]
                else ""
            ),
        ),
        (
            "exposed communication",
            t["exposed_comm_s"],
            f"{_si(t['comm_s'], 's')} of transfers (NVLink {_si(pr['nvlink_bytes']['max'], 'B')}, "
            f"network {_si(pr['network_bytes']['max'], 'B')} at "
            f"{a['bandwidth_efficiency']:.0%} of bandwidth), overlapped with NS",
        ),
        (
            "elementwise",
            t["elementwise_s"],
            f"{_si(pr['elementwise_bytes']['max'], 'B')} "
            + (
                "({local} B per local element, in a spread group {advance} + {update} and "
                "{direction} more in its replica's share; {moved} per copy"
                if a["split_momentum"]
                else "({local} B per local element, {moved} per copy"
            ).format(**report["element_bytes"])
            + ", {normalized} per standard-NS element) at ".format(**report["element_bytes"])
            + (
                f"stated {a['bandwidth_efficiency']:.0%} of {_si(hw['hbm_bytes_s'], 'B/s')}"
                if src["elementwise"] == "stated"
                else src["elementwise"]
            ),
        ),
        (
            "elementwise hidden under NS",
            -t["elementwise_hidden_s"] or 0.0,  # not "-0 s" when nothing hides
            f"{_si(t['elementwise_overlappable_s'], 's')} can overlap NS on side streams "
            "(the passes, received pieces' loads and stores, the replicas' exchange; "
            "--no-overlap: none); "
            + (
                f"stated: {a['elementwise_overlap']:.0%} of it hidden"
                if src["elementwise_overlap"] == "stated"
                else src["elementwise_overlap"]
            )
            if a["overlap_elementwise"]
            else "not overlapped (--no-overlap)",
        ),
        ("device (sum of the above)", t["device_s"], ""),
        (
            "host",
            t["host_s"],
            f"{pr['collectives']} all-to-alls x {_si(a['collective_overhead_s'], 's')} "
            f"= {_si(t['host_launch_s'], 's')}, per-peer Python {_si(t['host_python_s'], 's')}, "
            f"NS ops {_si(t['host_ns_ops_s'], 's')} ({pr['ns_calls']['max']:.0f} calls, "
            f"{_si(pr['ns_host_ops']['max'], '')} ops x {_si(a['host_per_op_s'], 's')}), "
            f"piece copies {_si(t['host_piece_copies_s'], 's')} "
            f"({pr['piece_copies']['max']:.0f} x {a['piece_copy_ops']} ops)",
        ),
    ]
    for name, seconds, source in rows:
        times.add_row(name, _si(seconds, "s"), source)
    times.add_row(
        "[bold]step = max(host, device)[/]",
        f"[bold]{_si(t['step_s'], 's')}[/]",
        f"bound by: {t['dominant']}",
    )
    times.add_row("no overlap at all", _si(t["serial_s"], "s"), "upper bound")
    console.print(times)
    console.print(
        f"NS FLOPs over all ranks: imbalance {pr['imbalance']:.4f}. AdamW elements per rank "
        f"(not modelled): {_si(pr['adamw_elements'], '')}"
    )
