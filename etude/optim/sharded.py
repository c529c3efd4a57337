"""Sharded Newton–Schulz: who orthogonalizes which unit, and moving shards there and back.

Every rank builds the same plan from parameter metadata alone (shapes, meshes, placements,
granularity), so no metadata is exchanged:

1. Shard groups. A DTensor parameter is held, one copy per group, by the ranks that differ
   only on its `Shard` mesh dimensions; ranks on `Replicate` dimensions hold copies and each
   copy's group works independently. Plain tensors form a group of one rank.
2. Ownership. Within a group, every unit (matrix, head, expert) gets one owner rank, so the
   group runs each unit's Newton–Schulz exactly once. A unit wholly inside one rank's shard
   is owned there (no communication); the rest go longest-processing-time first, with a
   slack of a few units' cost that keeps most units on a rank already holding part of
   them (`assign_owners`), then units move off the most loaded rank while one fits
   elsewhere below its load, to a rank holding part of it where one can take it
   (`rebalance_owners`).
3. Jobs. A group's units are bucketed by matrix shape and cut into jobs of about
   `job_numel` elements per member (`job_chunks`). A job is one `all_to_all_single` that
   moves every piece of its units to their owners (variable splits, no padding), one
   batched NS per owner, and a second `all_to_all_single` that returns each piece to the
   rank holding it; a rank's pieces of the units it owns stay out of both. Jobs whose
   units are all local skip both collectives.

4. Replicas. A group whose parameters are replicated on exactly one mesh dimension (HSDP's
   `(Replicate(), Shard(0))`) has a copy in every replica; instead of each copy
   orthogonalizing every unit, each unit gets one owner among all replicas' members (the
   same `assign_owners`, over replica x member slots), each replica's group jobs only its
   share, and every rank all-gathers the finished pieces of its shard from its
   counterparts in the other replicas (one `all_to_all_single` per group that sends a
   rank's share to every other replica: an all-gather of unequal shares, unpadded).
   Groups that span the world are planned first and their FLOPs per rank seed the
   ownership of later groups, so a rank that owns a large dense unit gets fewer expert
   units.

5. Data path. Every buffer of a step (each job's send and receive buffers, used by both
   all-to-alls; NS stacks and results) is made once per plan, and every copy is located
   in them then (`data_path`): a step issues one `copy_` per copy, a run of a holder's
   pieces of consecutive units going to one owner one strided copy. The elementwise
   passes write and read those buffers themselves where they can (`DataPath`): a
   parameter of a group that is not spread over replicas has its momentum pass write its
   direction straight into the NS stacks (pieces of units this rank owns) and the send
   buffers (the rest), and its update read the results where NS and the backward
   all-to-all leave them. Only a group spread over replicas keeps a direction buffer per
   parameter, which its pieces are copied out of and its results, from this replica's
   jobs and from the replicas' exchange, into; its momentum pass writes only the
   directions of this replica's share, and the buffer's advance over the whole shard is a
   pass of its own (`DataPath.advanced`), which nothing in the step waits for.

The runtime keeps up to `max_in_flight` forward transfers per group outstanding while it
computes, so communication of later jobs overlaps NS of earlier ones. Jobs of replicated
groups run first; their all-gathers then travel while the other groups (experts) compute.
Given side streams (`orthogonalize`'s `aside`, `ahead`, `behind`: Muon's on CUDA), the
copies that need no NS of their own run beside the NS of others: a job's loads of
received pieces into its own stacks while earlier jobs' NS runs, its stores of their
results and its backward transfer while later jobs' NS does, and the replicas' exchange
(pack, transfer, unpack), the buffers' advance and the spread groups' updates while the
other groups' NS does.
Every group issues its collectives in a sequence fixed by its own job list, and ranks wait
on jobs in one global order (by first parameter and unit), so pipelining can neither
mismatch nor deadlock.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Replicate, Shard

from etude.optim.newton_schulz import QUINTIC, Coefficients, newton_schulz, ns_flops
from etude.optim.ns_choice import AccuracyTable, ns_choice
from etude.optim.units import (
    Granularity,
    intersect,
    overlap_numel,
    shard_boxes,
    slices_within,
    unit_boxes,
    unit_matrix_shape,
)


@dataclass(frozen=True)
class ParamSpec:
    """What the planner needs to know of one parameter Muon orthogonalizes."""

    name: str
    shape: tuple[int, ...]
    granularity: Granularity
    mesh: DeviceMesh | None = None  # None for a plain tensor, whole on this rank
    placements: tuple = ()


@dataclass
class ReplicaGroup:
    """My counterparts in every replica (the ranks holding my shard), by replica index."""

    ranks: list[int]  # global ranks; replica index = coordinate on the replicated mesh dim
    me: int  # my replica index
    process_group: dist.ProcessGroup
    member_ranks: list[list[int]]  # per replica index, its shard group's ranks (group order)

    @property
    def group_ranks(self) -> list[int]:
        """Rank in `process_group` of each replica's counterpart (all-gather chunk order)."""
        return [dist.get_group_rank(self.process_group, r) for r in self.ranks]


@dataclass
class ShardGroup:
    """The ranks that together hold one copy of some parameters, in process-group rank order."""

    ranks: list[int]
    me: int  # my index in `ranks`
    process_group: dist.ProcessGroup | None
    replicas: ReplicaGroup | None = None  # set when the units are spread over replicas


@dataclass(frozen=True)
class Piece:
    """The part of one unit that one rank holds.

    `param` and `local` locate it in the holder's local tensor; `slot` (the unit's position
    among the owner's units of the job) and `in_unit` locate it in its unit's slot of the
    owner's NS batch. `unit` is the unit's index in its group (parameter, then unit order):
    pieces of consecutive units can be copied as one (`located_copies`).
    """

    param: int
    unit: int
    slot: int
    local: tuple[slice, ...]
    in_unit: tuple[slice, ...]
    shape: tuple[int, ...]
    numel: int


@dataclass(frozen=True)
class Batch:
    """Slots of the units I own in a job that share one matrix shape, NS method, schedule
    and FP8 steps."""

    matrix_shape: tuple[int, int]
    method: str
    schedule: tuple[Coefficients, ...]
    fp8_steps: int
    flops_per_unit: int
    slots: list[int]


@dataclass(eq=False)
class Job:
    """Units of one shard group moved by one pair of all-to-alls (see module docstring)."""

    group: ShardGroup
    box_shapes: list[tuple[int, ...]]  # shapes of the units I own, by slot
    batches: list[Batch]  # my units grouped for batched NS
    send: list[list[Piece]]  # per peer: pieces I hold of the units that peer owns
    recv: list[list[Piece]]  # per peer: pieces that peer holds of the units I own
    needs_comm: bool
    replica: int | None = None  # the replica that runs this job (None: every copy does)

    @property
    def mine(self) -> bool:
        """Whether this rank runs the job (its replica's, or one every copy runs)."""
        return self.replica is None or self.replica == self.group.replicas.me

    def travelling(self, pieces: list[list[Piece]]) -> list[list[Piece]]:
        """Per peer, the pieces of `send` or `recv` that travel: all but my own (of units I
        own), which go straight to the NS input and back."""
        return [[] if peer == self.group.me else ps for peer, ps in enumerate(pieces)]

    def sizes(self, pieces: list[list[Piece]]) -> list[int]:
        """Elements per peer of `send` or `recv` that travel: an all-to-all's split sizes."""
        return [sum(p.numel for p in ps) for ps in self.travelling(pieces)]

    def batch_positions(self) -> dict[int, tuple[int, int]]:
        """slot -> (batch index, position in the batch) of each unit I own."""
        return {
            slot: (b, j)
            for b, batch in enumerate(self.batches)
            for j, slot in enumerate(batch.slots)
        }


@dataclass
class Gather:
    """A spread group's results, all-gathered across replicas: per replica index, my
    shard's pieces of the units that replica orthogonalized, in job order, one list per
    job and owner (`Job.send`)."""

    replicas: ReplicaGroup
    pieces: list[list[list[Piece]]]

    @property
    def sizes(self) -> list[int]:
        """Elements each replica contributes, by replica index."""
        return [sum(p.numel for ps in segments for p in ps) for segments in self.pieces]


@dataclass
class Plan:
    """Every job of this rank's groups, in global order, and the plan's balance."""

    jobs: list[Job]
    local_boxes: list[np.ndarray]  # my shard's box in each parameter
    group_flops: list[np.ndarray] = field(default_factory=list)  # NS FLOPs per rank, per group
    gathers: list[Gather] = field(default_factory=list)
    ns_block: int | None = None  # block of "gram_triangular" units' products

    @property
    def imbalance(self) -> float:
        """max / mean NS FLOPs over the ranks of the worst shard group (1.0 is perfect)."""
        worst = 1.0
        for flops in self.group_flops:
            if flops.sum() > 0:
                worst = max(worst, float(flops.max() / flops.mean()))
        return worst


@dataclass
class StepStats:
    """Telemetry of one optimizer step's orthogonalization on this rank."""

    ns_flops: int = 0
    ns_units: int = 0
    ns_calls: int = 0  # batched newton_schulz calls (one per job and unit shape I own)
    bytes_sent: int = 0
    bytes_received: int = 0
    collectives: int = 0
    comm_wait_s: float = 0.0
    ns_time_s: float = 0.0
    imbalance: float = 1.0


def shard_group(
    spec: ParamSpec, cache: dict[tuple, dist.ProcessGroup | None], spread: bool = True
) -> tuple[ShardGroup, list[tuple[int, ...]]]:
    """The shard group of `spec` on this rank and the mesh coordinates of its members.

    Groups spanning several mesh dimensions are created on first use, by every rank in the
    same order (plans are built in parameter order on all ranks); `cache` keeps them. With
    `spread`, a parameter replicated on exactly one mesh dimension of size > 1 gets the
    `ReplicaGroup` of that dimension.
    """
    rank = dist.get_rank() if dist.is_initialized() else 0
    if spec.mesh is None:
        return ShardGroup(ranks=[rank], me=0, process_group=None), [()]
    mesh = spec.mesh
    coord = mesh.get_coordinate()
    if coord is None:
        raise ValueError(f"parameter {spec.name!r}: this rank is not part of its device mesh")
    shard_dims = [i for i, p in enumerate(spec.placements) if isinstance(p, Shard)]
    other_dims = [i for i in range(mesh.ndim) if i not in shard_dims]
    shard_sizes = [mesh.shape[i] for i in shard_dims]
    # One row per copy of the parameter: the ranks holding it, row-major over the shard dims.
    rows = mesh.mesh.permute(*other_dims, *shard_dims).reshape(-1, int(np.prod(shard_sizes)))
    members = []
    for flat in range(rows.shape[1]):
        member = list(coord)
        for d, c in zip(shard_dims, np.unravel_index(flat, shard_sizes)):
            member[d] = int(c)
        members.append(tuple(member))
    ranks = [int(mesh.mesh[m]) for m in members]
    if not shard_dims:
        pg = None
    elif len(shard_dims) == 1:
        pg = mesh.get_group(shard_dims[0])
    else:
        key = (tuple(mesh.mesh.flatten().tolist()), tuple(mesh.shape), tuple(shard_dims))
        if key not in cache:
            cache[key], _ = dist.new_subgroups_by_enumeration(
                [sorted(row) for row in rows.tolist()]
            )
        pg = cache[key]
    if pg is not None:
        order = sorted(range(len(ranks)), key=lambda j: dist.get_group_rank(pg, ranks[j]))
        members = [members[j] for j in order]
        ranks = [ranks[j] for j in order]
    replicated = [i for i, p in enumerate(spec.placements) if isinstance(p, Replicate)]
    replicas = None
    if spread and len(replicated) == 1 and mesh.shape[replicated[0]] > 1:
        d = replicated[0]
        counterparts = [
            int(mesh.mesh[tuple(k if i == d else c for i, c in enumerate(coord))])
            for k in range(mesh.shape[d])
        ]
        member_ranks = [
            [int(mesh.mesh[tuple(k if i == d else c for i, c in enumerate(m))]) for m in members]
            for k in range(mesh.shape[d])
        ]
        replicas = ReplicaGroup(counterparts, coord[d], mesh.get_group(d), member_ranks)
    group = ShardGroup(ranks=ranks, me=ranks.index(rank), process_group=pg, replicas=replicas)
    return group, members


def build_plan(
    specs: list[ParamSpec],
    *,
    ns_steps: int,
    method: str = "auto",
    ns_block: int | None = None,
    job_numel: int = 1 << 24,
    group_cache: dict | None = None,
    spread_replicas: bool = True,
    ns_coefficients: Coefficients | str = QUINTIC,
    ns_accuracy: AccuracyTable | None = None,
    ns_strict: bool = False,
) -> Plan:
    """Assign every unit of `specs` a replica (when spread) and an owner, and cut the work
    into jobs (see module docstring). Each unit shape's NS formulation and schedule are
    `ns_choice`'s for these options."""
    group_cache = {} if group_cache is None else group_cache
    groups: dict[tuple, tuple[ShardGroup, list[int]]] = {}
    boxes_of: list[np.ndarray] = []  # per param: [G, D, 2] boxes of its group's members
    local_boxes: list[np.ndarray] = []
    for i, spec in enumerate(specs):
        group, members = shard_group(spec, group_cache, spread_replicas)
        if spec.mesh is None:
            boxes = np.array([[[0, n] for n in spec.shape]], dtype=np.int64)
        else:
            all_boxes = shard_boxes(spec.name, spec.shape, tuple(spec.mesh.shape), spec.placements)
            boxes = np.stack([all_boxes[m] for m in members])
        boxes_of.append(boxes)
        local_boxes.append(boxes[group.me])
        key = (tuple(group.ranks), tuple(group.replicas.ranks) if group.replicas else ())
        groups.setdefault(key, (group, []))[1].append(i)

    jobs_with_order: list[tuple[int, Job]] = []
    group_flops, gathers = [], []
    # NS FLOPs per global rank from groups every rank plans (those spanning the world), so
    # that groups planned later can even out the total: spread groups first, then the rest.
    world = dist.get_world_size() if dist.is_initialized() else 1
    world_load = np.zeros(world, dtype=np.int64)
    for group, param_ids in sorted(groups.values(), key=lambda g: (g[0].replicas is None, g[1])):
        units = group_units(
            specs,
            param_ids,
            boxes_of,
            ns_steps,
            method,
            ns_block,
            coefficients=ns_coefficients,
            accuracy=ns_accuracy,
            strict=ns_strict,
        )
        n = len(group.ranks)
        # One owner slot per (member, replica), slot = member * replicas + replica, so that
        # ties between equal loads go to another replica first; every replica holds the
        # same shards.
        members = np.array(group.replicas.member_ranks if group.replicas else [group.ranks])
        n_replicas = len(members)
        slot_ranks = members.T.reshape(-1)
        tiled = [replace(u, held=np.repeat(u.held, n_replicas)) for u in units]
        slots, flops = assign_owners(tiled, n * n_replicas, world_load[slot_ranks])
        if len(np.unique(slot_ranks)) == world:
            world_load[slot_ranks] += flops
        mine = group.replicas.me if group.replicas else 0
        group_flops.append(flops.reshape(n, n_replicas)[:, mine])
        owners = [slot // n_replicas for slot in slots]
        group_jobs = []
        for replica in range(n_replicas):
            share = [k for k in range(len(units)) if slots[k] % n_replicas == replica]
            for chunk in job_chunks([units[k] for k in share], n, job_numel):
                chunk = [share[k] for k in chunk]
                job = _make_job(group, chunk, units, owners, boxes_of)
                job.replica = replica if group.replicas else None
                group_jobs.append(job)
                order = param_ids[0] * (1 << 32) + chunk[0]
                jobs_with_order.append((order, job))
        if group.replicas:
            pieces = [
                [ps for j in group_jobs if j.replica == r for ps in j.send if ps]
                for r in range(n_replicas)
            ]
            gathers.append(Gather(group.replicas, pieces))
    jobs_with_order.sort(key=lambda t: t[0])
    return Plan(
        jobs=[j for _, j in jobs_with_order],
        local_boxes=local_boxes,
        group_flops=group_flops,
        gathers=gathers,
        ns_block=ns_block,
    )


@dataclass(frozen=True, eq=False)
class Unit:
    """One Newton–Schulz unit of a shard group, and how much of it each member holds."""

    param: int
    box: np.ndarray  # [D, 2] in the parameter's coordinates
    shape: tuple[int, int]  # the matrix it is orthogonalized as
    method: str
    schedule: tuple[Coefficients, ...]  # NS coefficients, one triple per step
    fp8_steps: int  # the first steps whose products are FP8
    flops: int  # NS FLOPs as run (FP8 products included)
    held: np.ndarray  # [G] elements of this unit on each group member

    @property
    def numel(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def key(self) -> tuple[tuple[int, int], str, tuple[Coefficients, ...], int]:
        """(matrix shape, NS method, schedule, FP8 steps): the units one batched NS call can
        take together."""
        return self.shape, self.method, self.schedule, self.fp8_steps


def group_units(
    specs: list[ParamSpec],
    param_ids: list[int],
    boxes_of: dict[int, np.ndarray] | list[np.ndarray],
    ns_steps: int,
    method: str,
    ns_block: int | None = None,
    *,
    coefficients: Coefficients | str = QUINTIC,
    accuracy: AccuracyTable | None = None,
    strict: bool = False,
) -> list[Unit]:
    """All units of the parameters `param_ids`, whose shards on the group's members are
    `boxes_of[i]` (`[G, D, 2]`), in parameter then unit order; each shape's formulation
    and schedule are `ns_choice`'s for Muon's options (an `accuracy` table may give a
    shape fewer steps)."""
    units = []
    for i in param_ids:
        spec = specs[i]
        shape = unit_matrix_shape(spec.shape, spec.granularity)
        ns = ns_choice(shape, method, coefficients, ns_steps, ns_block, accuracy, strict)
        cost = ns_flops(*shape, ns.steps, ns.method, block=ns_block)
        boxes = unit_boxes(spec.shape, spec.granularity)
        held = overlap_numel(boxes, boxes_of[i])
        units += [
            Unit(i, boxes[u], shape, ns.method, ns.schedule, ns.fp8_steps, cost, held[u])
            for u in range(len(boxes))
        ]
    return units


# Slack of the owner choice, in units of the unit's cost. One unit kept K2's experts on
# their holders when every rank started even; seeded with the dense load (which differs by
# about an expert unit from rank to rank) it sent 17 % of them across nodes, 4 sends 0.1 %.
OWNER_SLACK_UNITS = 4


def assign_owners(
    units: list[Unit],
    n_ranks: int,
    initial_load: np.ndarray | None = None,
    rebalance: bool = True,
) -> tuple[list[int], np.ndarray]:
    """Owner of each unit and the resulting NS FLOPs per rank (of these units only).

    A unit that a rank holds whole stays there (with several such ranks, replicas, the
    least loaded). The others go longest-processing-time first (most FLOPs first), each to
    a rank whose load is within `OWNER_SLACK_UNITS` of the unit's cost of the least loaded:
    among those, the one holding most of the unit, then the least loaded. Balance stays
    within that many units of plain LPT while most data stays where it already is, even
    when `initial_load` (`[n_ranks]`, work the ranks already have from other groups)
    differs from rank to rank by about a unit. With `rebalance` (what Muon runs) the
    slack is then taken back from the top (`rebalance_owners`). A pure function of its
    arguments: every rank computes the same owners.
    """
    start = np.zeros(n_ranks, dtype=np.int64) if initial_load is None else initial_load
    load = start.astype(np.int64, copy=True)
    owners = [0] * len(units)
    for k in sorted(range(len(units)), key=lambda k: (-units[k].flops, k)):
        unit = units[k]
        whole = np.flatnonzero(unit.held == unit.numel)
        if len(whole):
            owner = int(whole[np.argmin(load[whole])])
        else:
            near = np.flatnonzero(load <= load.min() + OWNER_SLACK_UNITS * unit.flops)
            owner = int(near[np.lexsort((near, load[near], -unit.held[near]))[0]])
        owners[k] = owner
        load[owner] += unit.flops
    if rebalance:
        rebalance_owners(units, owners, load)
    return owners, load - start


def rebalance_owners(units: list[Unit], owners: list[int], load: np.ndarray) -> int:
    """Move units off the most loaded rank, in place, while one fits elsewhere below its
    load; returns the number of moves. `load` (`[n_ranks]`, initial load included) is
    `owners`' load. A unit its owner holds whole stays. Each move takes a unit of the
    most loaded rank (the lowest such rank) to a rank whose load with it stays below that
    rank's: a rank holding part of the unit first (its pieces then travel no more than
    before), then the least loaded, the lowest rank, the lowest unit. Every move lowers
    the sum of squared loads, so it ends; the slack of `assign_owners` leaves the busiest
    rank a few units above the mean, which this takes down to about one.
    """
    cost = np.array([u.flops for u in units], dtype=np.int64)
    owned: list[list[int]] = [[] for _ in load]
    for k in range(len(units)):
        if units[k].held[owners[k]] != units[k].numel:
            owned[owners[k]].append(k)
    moves = 0
    while True:
        r = int(np.argmax(load))
        ks = np.array(owned[r], dtype=np.int64)
        if not len(ks):
            return moves
        kk, tt = np.nonzero(load[None, :] + cost[ks, None] < load[r])
        if not len(kk):
            return moves
        holds = np.stack([units[k].held for k in ks])[kk, tt] > 0
        best = np.lexsort((ks[kk], tt, load[tt], ~holds))[0]
        k, t = int(ks[kk[best]]), int(tt[best])
        owned[r].remove(k)
        owned[t].append(k)
        owners[k] = t
        load[r] -= cost[k]
        load[t] += cost[k]
        moves += 1


def job_chunks(units: list[Unit], group_size: int, job_numel: int) -> list[list[int]]:
    """Unit indices of each job: units sorted by `Unit.key`, bucket after bucket, cut
    so a job holds about `job_numel` elements per group member (at least one unit). Small
    shapes therefore share a job instead of paying a pair of collectives each."""
    buckets: dict[tuple, list[int]] = {}
    for k, unit in enumerate(units):
        buckets.setdefault(unit.key, []).append(k)
    budget = group_size * job_numel
    chunks: list[list[int]] = [[]]
    size = 0
    for k in (k for members in buckets.values() for k in members):
        if chunks[-1] and size + units[k].numel > budget:
            chunks.append([])
            size = 0
        chunks[-1].append(k)
        size += units[k].numel
    return chunks if chunks[-1] else []


def _make_job(
    group: ShardGroup,
    chunk: list[int],
    units: list[Unit],
    owners: list[int],
    boxes_of: list[np.ndarray],
) -> Job:
    n = len(group.ranks)
    me = group.me
    mine = [k for k in chunk if owners[k] == me]
    slot_of = {k: s for s, k in enumerate(mine)}
    send: list[list[Piece]] = [[] for _ in range(n)]
    recv: list[list[Piece]] = [[] for _ in range(n)]
    needs_comm = False
    for k in chunk:
        param, box, held = units[k].param, units[k].box, units[k].held
        owner = owners[k]
        needs_comm |= bool(held[owner] != held.sum())
        my_part = intersect(box, boxes_of[param][me])
        if my_part is not None:
            send[owner].append(_piece(param, k, -1, my_part, boxes_of[param][me], box))
        if owner == me:
            for peer in range(n):
                part = intersect(box, boxes_of[param][peer])
                if part is not None:
                    piece = _piece(param, k, slot_of[k], part, boxes_of[param][peer], box)
                    recv[peer].append(piece)
    box_shapes = [tuple(int(s) for s in units[k].box[:, 1] - units[k].box[:, 0]) for k in mine]
    batches: dict[tuple, Batch] = {}
    for slot, k in enumerate(mine):
        unit = units[k]
        batch = Batch(unit.shape, unit.method, unit.schedule, unit.fp8_steps, unit.flops, [])
        batches.setdefault(unit.key, batch).slots.append(slot)
    return Job(
        group=group,
        box_shapes=box_shapes,
        batches=list(batches.values()),
        send=send,
        recv=recv,
        needs_comm=needs_comm,
    )


def _piece(
    param: int, k: int, slot: int, part: np.ndarray, holder: np.ndarray, unit: np.ndarray
) -> Piece:
    return Piece(
        param=param,
        unit=k,
        slot=slot,
        local=slices_within(part, holder),
        in_unit=slices_within(part, unit),
        shape=tuple(int(s) for s in part[:, 1] - part[:, 0]),
        numel=math.prod(int(s) for s in part[:, 1] - part[:, 0]),
    )


# (destination, source) views of one step's copies, one `copy_` each.
Pairs = list[tuple[Tensor, Tensor]]


def located_copies(pieces: list[Piece], dsts: list[Tensor], srcs: list[Tensor]) -> Pairs:
    """The copies of `pieces` (one list whose flat-buffer views are consecutive: one
    peer's, or one owner's in one job) from `srcs` to `dsts`, a run of pieces merged into
    one strided view pair: pieces of consecutive units of one parameter, of one shape,
    whose views in both tensors lie at one constant positive offset from the next (a row
    shard's pieces of adjacent head columns, a shard's slabs of adjacent experts). Exact:
    the run's view is the pieces' views stacked, every element once."""
    out: Pairs = []
    run: list[tuple[Piece, Tensor, Tensor]] = []

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0][1:])
        elif run:
            _, d0, s0 = run[0]
            _, d1, s1 = run[1]
            out.append(tuple(_stacked(v0, v1, len(run)) for v0, v1 in ((d0, d1), (s0, s1))))

    for p, d, s in zip(pieces, dsts, srcs):
        if run and _continues(run, p, d, s):
            run.append((p, d, s))
            continue
        flush()
        run = [(p, d, s)]
    flush()
    return out


def _continues(run: list[tuple[Piece, Tensor, Tensor]], p: Piece, d: Tensor, s: Tensor) -> bool:
    last, d_last, s_last = run[-1]
    if p.param != last.param or p.unit != last.unit + 1:
        return False
    for view, prev, k in ((d, d_last, 1), (s, s_last, 2)):
        if view.shape != prev.shape or view.stride() != prev.stride():
            return False
        if view.untyped_storage().data_ptr() != prev.untyped_storage().data_ptr():
            return False
        step = view.storage_offset() - prev.storage_offset()
        first = run[1][k].storage_offset() - run[0][k].storage_offset() if len(run) > 1 else step
        if step <= 0 or step != first:
            return False
    return True


def _stacked(first: Tensor, second: Tensor, count: int) -> Tensor:
    """`count` views like `first`, each at `second`'s offset from the one before, as one."""
    step = second.storage_offset() - first.storage_offset()
    return first.as_strided((count, *first.shape), (step, *first.stride()), first.storage_offset())


def _flat_views(buffer: Tensor, lists: list[list[Piece]], offset: int = 0) -> list[list[Tensor]]:
    """Each piece's view in a flat `buffer` holding `lists` one after another from `offset`."""
    views = []
    for ps in lists:
        views.append([])
        for p in ps:
            views[-1].append(buffer[offset : offset + p.numel].view(p.shape))
            offset += p.numel
    return views


@dataclass
class JobPath:
    """One job's buffers and copies, kept from step to step (`data_path`). A job of a group
    not spread over replicas copies only the pieces its peers send (and those of
    parameters that keep a direction buffer): the elementwise passes write and read this
    rank's own pieces in `stacks`, `results` and `send` (`DataPath`)."""

    send_sizes: list[int]
    recv_sizes: list[int]
    send: Tensor  # my pieces for their owners; their results come back into it
    recv: Tensor  # my peers' pieces of my units; their results go back from it
    stacks: list[Tensor]  # per batch, the NS input `[B, m, n]`
    results: list[Tensor]  # per batch, the NS output
    pack: Pairs  # directions -> send
    load: Pairs  # directions (my own pieces) and recv -> stacks
    store: Pairs  # results -> recv and directions (my own pieces)
    unpack: Pairs  # send -> directions
    own: tuple[int, ...]  # parameters of my own pieces (read by NS, their results written)
    packed: tuple[int, ...]  # parameters of pieces that travel (sent, results returned)
    # Whether the stacks and results are this job's alone (a group not spread over
    # replicas): then its loads may run ahead of earlier jobs' NS and its stores behind it.
    own_stacks: bool


@dataclass
class GatherPath:
    """A replicas' exchange's buffers and copies (`data_path`)."""

    send_sizes: list[int]
    recv_sizes: list[int]
    send: Tensor
    recv: Tensor
    pack: Pairs  # directions -> my share in send
    repeat: Pairs  # my share -> its copy for each further replica
    unpack: Pairs  # recv -> directions
    unpacked: tuple[int, ...]  # parameters that unpack writes


@dataclass(frozen=True)
class Located:
    """A view of a parameter's local shard, located on the shard's own layout (contiguous):
    `of(t)` is that view of `t`, the gradient, momentum buffer or parameter."""

    size: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int  # elements from the start of the shard

    @staticmethod
    def of_view(view: Tensor) -> Located:
        """The location of `view`, a view of a contiguous tensor of the shard's shape."""
        return Located(tuple(view.shape), tuple(view.stride()), view.storage_offset())

    def of(self, t: Tensor) -> Tensor:
        """This view of `t` (contiguous, the shard's shape)."""
        if not t.is_contiguous():  # its strides would locate other elements
            raise ValueError(f"a located view needs a contiguous tensor, got strides {t.stride()}")
        return t.as_strided(self.size, self.stride, t.storage_offset() + self.offset)


# The parts of one parameter's elementwise pass: per part, the tensor the momentum pass
# writes its direction into (or the update reads its result from) and the view of the
# local shard it holds (None: the whole shard, as it is laid out).
Parts = list[tuple[Tensor, Located | None]]


@dataclass
class DataPath:
    """Every buffer and copy of a plan's step on one rank, made once per plan.

    `inputs[i]` are the parts parameter i's momentum pass writes its direction into (NS
    dtype), `outputs[i]` the parts its update reads the orthogonalized direction from.

    - A parameter of a group spread over replicas has a direction buffer `directions[i]`
      (local shard shape): its pieces are copied from it to NS, and their results, from
      this replica's jobs and the replicas' exchange, back into it; its one output is the
      whole buffer. Its inputs are the runs of its pieces of units this replica
      orthogonalizes, in that buffer: the rest of the buffer is overwritten by the
      exchange, so there the momentum pass only advances the momentum buffer, over the
      whole shard, later (`advanced`: its first pass split into
      `momentum_direction_only` over the inputs and `momentum_advance`).
    - Any other parameter has no buffer (`directions[i]` None): its inputs are its pieces'
      views in the NS stacks (units this rank owns) and in the send buffers (the rest),
      its outputs their views in the NS results and the send buffers (the backward
      all-to-all returns results into them); runs of pieces are one part each
      (`located_copies`). Every element of its shard is in one input and one output, so
      the momentum pass writes exactly what the copies out of a direction buffer would
      have moved, and the update reads what the copies back would have.

    The jobs of groups not spread each have NS stacks of their own, since a parameter's
    momentum pass fills all its pieces at once; those of spread groups share theirs by
    batch shape, using them one after another. `writes[i]` counts the sites that write
    parameter i's outputs (a job's NS or unpack, a gather's unpack): after the last of
    them its update can run."""

    directions: list[Tensor | None]
    inputs: list[Parts]
    outputs: list[Parts]
    jobs: list[JobPath | None]  # by plan.jobs; None for the jobs of other replicas
    gathers: list[GatherPath]
    writes: list[int]
    advanced: tuple[int, ...]  # parameters whose momentum buffer advances on its own


def ns_result(b: int, m: int, n: int, dtype: torch.dtype, device: torch.device) -> Tensor:
    """A `[b, m, n]` buffer for `newton_schulz(..., out=)`: its last product writes a tall
    batch transposed, so a tall result is stored transposed (no copy)."""
    if m > n:
        return torch.empty(b, n, m, dtype=dtype, device=device).mT
    return torch.empty(b, m, n, dtype=dtype, device=device)


def _per_param(
    pieces: list[Piece], dsts: list[Tensor], srcs: list[Tensor]
) -> list[tuple[int, tuple[Tensor, Tensor]]]:
    """`located_copies` of `pieces`, each pair with the parameter its pieces belong to (a
    run never spans two parameters)."""
    out = []
    for param, ks in itertools.groupby(range(len(pieces)), key=lambda k: pieces[k].param):
        ks = list(ks)
        pairs = located_copies(*([xs[k] for k in ks] for xs in (pieces, dsts, srcs)))
        out += [(param, pair) for pair in pairs]
    return out


def data_path(
    plan: Plan, dtype: torch.dtype, device: torch.device, buffered: set[int] | None = None
) -> DataPath:
    """The buffers of `plan` in `dtype` on `device`, every copy of a step and every part of
    the elementwise passes located in them, merged into runs where exact
    (`located_copies`; see `DataPath`). The parameters in `buffered` keep a direction
    buffer even outside a spread group (Muon's whose local shard is not contiguous, where
    views located on a contiguous shard would address other elements)."""
    shapes = [tuple(int(s) for s in box[:, 1] - box[:, 0]) for box in plan.local_boxes]
    spread = {p.param for j in plan.jobs if j.replica is not None for ps in j.send for p in ps}
    keep = spread | (buffered or set())
    # A strided shard keeps its whole momentum pass: its parts could not be located.
    split = spread - (buffered or set())
    directions = [
        torch.empty(shape, dtype=dtype, device=device) if i in keep else None
        for i, shape in enumerate(shapes)
    ]
    inputs: list[Parts] = [
        [] if d is None or i in split else [(d, None)] for i, d in enumerate(directions)
    ]
    outputs: list[Parts] = [[] if d is None else [(d, None)] for d in directions]
    # Where pieces lie in their parameter's shard: in its direction buffer, or in a meta
    # tensor of the shard's layout (no memory), a view of which `Located` records.
    shards = [torch.empty(s, device="meta") if d is None else d for s, d in zip(shapes, directions)]
    pool: dict[tuple[int, int, int], tuple[Tensor, Tensor]] = {}

    def batch_tensors(batch: Batch, shared: bool) -> tuple[Tensor, Tensor]:
        (m, n), b = batch.matrix_shape, len(batch.slots)
        if not shared or (b, m, n) not in pool:
            tensors = (
                torch.empty(b, m, n, dtype=dtype, device=device),
                ns_result(b, m, n, dtype, device),
            )
            if not shared:
                return tensors
            pool[b, m, n] = tensors
        return pool[b, m, n]

    def empty(numel: int) -> Tensor:
        return torch.empty(numel, dtype=dtype, device=device)

    def local(ps: list[Piece]) -> list[Tensor]:
        return [shards[p.param][p.local] for p in ps]

    def params(lists: list[list[Piece]]) -> tuple[int, ...]:
        return tuple(sorted({p.param for ps in lists for p in ps}))

    def into(parts: list[Parts], located: list[tuple[int, tuple[Tensor, Tensor]]]) -> None:
        """Record (buffer view, shard view) pairs as parts of their parameters' passes."""
        for param, (buffer, shard) in located:
            parts[param].append((buffer, Located.of_view(shard)))

    def copied(pieces: list[Piece], *views: list[Tensor]) -> list[tuple[list, ...]]:
        """`pieces` and their `views` in two: those of parameters with a direction buffer
        (copied through it), then the others (moved by the passes)."""
        halves = []
        for buffer in (True, False):
            keep = [k for k, p in enumerate(pieces) if (directions[p.param] is not None) == buffer]
            halves.append(([pieces[k] for k in keep], *([v[k] for k in keep] for v in views)))
        return halves

    writes = [0] * len(shapes)

    jobs: list[JobPath | None] = []
    for job in plan.jobs:
        if not job.mine:
            jobs.append(None)
            continue
        shared = job.replica is not None  # a spread group's: its stacks shared
        where = job.batch_positions()
        tensors = [batch_tensors(b, shared) for b in job.batches]
        stacks, results = zip(*tensors) if tensors else ((), ())

        def in_unit(tensors, ps: list[Piece], job=job, where=where) -> list[Tensor]:
            return [
                tensors[where[p.slot][0]][where[p.slot][1]].view(job.box_shapes[p.slot])[p.in_unit]
                for p in ps
            ]

        sends, recvs = job.travelling(job.send), job.travelling(job.recv)
        send_sizes, recv_sizes = job.sizes(job.send), job.sizes(job.recv)
        send, recv = empty(sum(send_sizes)), empty(sum(recv_sizes))
        own = job.recv[job.group.me]
        pack, load, store, unpack = [], [], [], []
        (mine, stacked, done), (passed, stacked_p, done_p) = copied(
            own, in_unit(stacks, own), in_unit(results, own)
        )
        load += located_copies(mine, stacked, local(mine))
        store += located_copies(mine, local(mine), done)
        into(inputs, _per_param(passed, stacked_p, local(passed)))
        into(outputs, [(i, (r, at)) for i, (at, r) in _per_param(passed, local(passed), done_p)])
        for ps, flat in zip(sends, _flat_views(send, sends)):
            (mine, views), (passed, views_p) = copied(ps, flat)
            pack += located_copies(mine, views, local(mine))
            unpack += located_copies(mine, local(mine), views)
            # the momentum pass writes these here, the update reads their results here
            into(inputs, _per_param(passed, views_p, local(passed)))
            into(outputs, _per_param(passed, views_p, local(passed)))
        # A peer's pieces lie in the receive buffer one after another and their units' other
        # pieces elsewhere, so NS (which reads and writes whole `[B, m, n]` batches) takes
        # them through copies into its stacks and back out of its results.
        for ps, flat in zip(recvs, _flat_views(recv, recvs)):
            load += located_copies(ps, in_unit(stacks, ps), flat)
            store += located_copies(ps, flat, in_unit(results, ps))
        own_params, packed = params([own]), params(sends)
        for i in own_params + packed:  # their results written by NS and by the backward
            writes[i] += 1
        jobs.append(
            JobPath(
                send_sizes, recv_sizes, send, recv, list(stacks), list(results),
                pack, load, store, unpack, own_params, packed, not shared,
            )
        )  # fmt: skip
    gathers = []
    for gather in plan.gathers:
        sizes, me = gather.sizes, gather.replicas.me
        chunks = gather.replicas.group_ranks  # position of each replica in the process group
        send_sizes, recv_sizes = [0] * len(sizes), [0] * len(sizes)
        for replica, chunk in enumerate(chunks):
            if replica != me:
                send_sizes[chunk], recv_sizes[chunk] = sizes[me], sizes[replica]
        send, recv = empty(sum(send_sizes)), empty(sum(recv_sizes))
        share = sizes[me]
        # The split momentum passes write only this share's directions.
        for ps in gather.pieces[me]:
            ps = [p for p in ps if p.param in split]
            views = local(ps)
            into(inputs, _per_param(ps, views, views))
        pack = [
            pair
            for ps, flat in zip(gather.pieces[me], _flat_views(send, gather.pieces[me]))
            for pair in located_copies(ps, flat, local(ps))
        ]
        # The same share for every other replica.
        repeat = [
            (send[k * share : (k + 1) * share], send[:share]) for k in range(1, len(sizes) - 1)
        ]
        by_chunk = np.argsort(chunks)  # replica index at each process-group position
        starts = np.cumsum([0, *(0 if r == me else sizes[r] for r in by_chunk)])
        unpack = []
        for replica, chunk in enumerate(chunks):
            if replica == me:
                continue
            segments = gather.pieces[replica]
            for ps, flat in zip(segments, _flat_views(recv, segments, int(starts[chunk]))):
                unpack += located_copies(ps, local(ps), flat)
        unpacked = params(
            [ps for r, segments in enumerate(gather.pieces) if r != me for ps in segments]
        )
        for i in unpacked:
            writes[i] += 1
        gathers.append(
            GatherPath(send_sizes, recv_sizes, send, recv, pack, repeat, unpack, unpacked)
        )
    return DataPath(directions, inputs, outputs, jobs, gathers, writes, tuple(sorted(split)))


def orthogonalize(
    plan: Plan,
    path: DataPath,
    *,
    eps: float,
    max_in_flight: int = 4,
    prepare: Callable[[tuple[int, ...]], None] | None = None,
    finished: Callable[[int], None] | None = None,
    advance: Callable[[tuple[int, ...]], None] | None = None,
    aside: Callable[[], AbstractContextManager] | None = None,
    ahead: Callable[[], AbstractContextManager] | None = None,
    behind: Callable[[], AbstractContextManager] | None = None,
) -> StepStats:
    """Run `plan` on this rank: orthogonalize the directions `path.inputs` hold into
    `path.outputs` (see `DataPath`), and return this step's telemetry. Pieces travel in
    the NS dtype: NS casts its input to it first, so casting before the transfer gives the
    same result with fewer bytes. `max_in_flight=1` turns overlap off: each transfer is
    waited for as soon as it is started.

    The caller fills the inputs and uses the outputs (Muon's momentum passes and updates),
    before and after the call or as the step goes (Muon's `overlap_elementwise`):
    `prepare(params)` is called before NS or a transfer reads the inputs of `params`
    (indices into `plan.local_boxes`), or a copy writes their direction buffers;
    `advance(path.advanced)` once, after their `prepare`, for the momentum buffers that
    advance on their own (a spread group's: nothing of this step reads them); and
    `finished(i)` once per parameter, as soon as the last write into its outputs has been
    issued on the current stream (at the start for a parameter with no local elements).
    The rest give work to side streams (Muon's on CUDA; each None runs it in line):

    - `aside()`: work that may wait for a transfer without holding up the current stream
      (the update stream on CUDA). The replicas' exchange (its pack, its transfer, the
      wait, the unpack and its parameters' `finished`) and the buffers' advance run
      under it before the other groups' jobs are issued, so that on a GPU they run beside
      those groups' NS; without it the exchange is waited for after those jobs (a wait
      before them would hold them up).
    - `ahead()`: a job's wait for its forward transfer and its copies into the NS stacks,
      which the current stream waits for afterwards but which need not wait for its
      earlier work: they run while earlier jobs' NS does;
    - `behind()`: a job's copies out of the NS results into the buffer sent back, its
      backward transfer and its parameters' `finished`, after the current stream's work
      so far, which nothing on it waits for: they run while later jobs' NS does.

    `ahead` and `behind` apply to the jobs whose stacks are their own (groups not spread
    over replicas); a spread group's jobs share theirs, so their copies stay in line.

    The copies (`elementwise.element_bytes` counts them) are those the passes cannot do:
    on the owner, a piece received from a peer goes from the receive buffer into its slot
    of the NS stacks and its result from the NS results into the buffer sent back; in a
    group spread over replicas, every piece I hold of a unit my replica runs goes from its
    direction buffer to the send buffer or the stacks and its result back, and the
    replicas' exchange packs my share and unpacks the others' into the direction buffers.
    Each copy is one `copy_` of views located once per plan (`data_path`), a run of pieces
    one strided copy (`located_copies`).
    """
    stats = StepStats(imbalance=plan.imbalance)
    by_job = {id(job): p for job, p in zip(plan.jobs, path.jobs)}
    remaining = list(path.writes)

    def access(params: tuple[int, ...]) -> None:
        if prepare is not None and params:
            prepare(params)

    def written(params: tuple[int, ...]) -> None:
        for i in params:
            remaining[i] -= 1
            if remaining[i] == 0 and finished is not None:
                finished(i)

    def side(context: Callable[[], AbstractContextManager] | None) -> AbstractContextManager:
        return contextlib.nullcontext() if context is None else context()

    for i, count in enumerate(remaining):
        if count == 0:  # nothing of it on this rank: ready before anything runs
            access((i,))
            if finished is not None:
                finished(i)

    def copy(pairs: Pairs) -> None:
        for dst, src in pairs:
            dst.copy_(src)

    def start(send: Tensor, recv: Tensor, send_sizes, recv_sizes, group):
        work = dist.all_to_all_single(
            recv, send, recv_sizes, send_sizes, group=group, async_op=True
        )
        stats.bytes_sent += sum(send_sizes) * send.element_size()
        stats.bytes_received += sum(recv_sizes) * send.element_size()
        stats.collectives += 1
        if max_in_flight == 1:
            wait(work)
        return work

    def wait(work) -> None:
        t0 = time.perf_counter()
        work.wait()
        stats.comm_wait_s += time.perf_counter() - t0

    def forward(job: Job):
        """The pieces I hold of units my peers own (packed from the direction buffers in a
        spread group), sent to them."""
        p = by_job[id(job)]
        access(p.packed)
        copy(p.pack)
        return start(p.send, p.recv, p.send_sizes, p.recv_sizes, job.group.process_group)

    def compute(job: Job, sent: dist.Work | None = None) -> dist.Work | None:
        """Batched NS of the units I own (`[B, m, n]` per batch) once the forward transfer
        `sent` has arrived: received pieces into the stacks, their results into the buffer
        sent back (and, in a spread group, my own pieces from and to their direction
        buffers). Returns the backward transfer (None for a job that needs none)."""
        p = by_job[id(job)]
        access(p.own)
        with side(ahead if p.own_stacks else None):
            if sent is not None:
                wait(sent)
            copy(p.load)
        t0 = time.perf_counter()
        for batch, stack, result in zip(job.batches, p.stacks, p.results):
            newton_schulz(
                stack,
                batch.schedule,
                eps=eps,
                dtype=stack.dtype,
                method=batch.method,
                block=plan.ns_block,
                out=result,
                fp8_steps=batch.fp8_steps,
            )
            stats.ns_flops += batch.flops_per_unit * len(batch.slots)
            stats.ns_units += len(batch.slots)
            stats.ns_calls += 1
        stats.ns_time_s += time.perf_counter() - t0
        with side(behind if p.own_stacks else None):
            copy(p.store)
            work = None
            if sent is not None:
                work = start(p.recv, p.send, p.recv_sizes, p.send_sizes, job.group.process_group)
            written(p.own)
        return work

    def run(jobs: list[Job]) -> None:
        """Run `jobs` (all mine) to the end: local ones while the first transfers travel."""
        comm_jobs = [j for j in jobs if j.needs_comm]
        # Each group's collectives are issued in one fixed sequence on all its ranks:
        # forwards of its first `max_in_flight` jobs, then per job: its backward, the next
        # forward.
        by_group: dict[tuple[int, ...], list[Job]] = {}
        position: dict[int, int] = {}
        for job in comm_jobs:
            group_jobs = by_group.setdefault(tuple(job.group.ranks), [])
            position[id(job)] = len(group_jobs)
            group_jobs.append(job)
        forwards = {}
        for group_jobs in by_group.values():
            for job in group_jobs[:max_in_flight]:
                forwards[id(job)] = forward(job)
        for job in jobs:
            if not job.needs_comm:  # every unit whole on its owner: no collective
                compute(job)
        backward = []
        for job in comm_jobs:
            backward.append((job, compute(job, forwards.pop(id(job)))))
            group_jobs = by_group[tuple(job.group.ranks)]
            k = position[id(job)] + max_in_flight
            if k < len(group_jobs):
                forwards[id(group_jobs[k])] = forward(group_jobs[k])
        for job, work in backward:
            wait(work)
            p = by_job[id(job)]
            copy(p.unpack)
            written(p.packed)

    mine = [j for j in plan.jobs if j.mine]
    run([j for j in mine if j.replica is not None])
    # Replicas exchange results while the other groups (experts) orthogonalize: my
    # replica's finished pieces to my counterparts in every other replica, theirs back.
    # With `aside` (on CUDA: a side stream, which packs and waits for the exchange while
    # the current stream goes on to the other groups' NS) packed, unpacked and updated
    # before those groups' jobs are issued; the exchange depends on no collective of
    # theirs, so waiting for it first cannot deadlock. Without, unpacked after them: a
    # wait here would hold them up.
    gathering = []
    for gather, g in zip(plan.gathers, path.gathers):
        with side(aside):
            copy(g.pack)
            copy(g.repeat)
            group = gather.replicas.process_group
            gathering.append((g, start(g.send, g.recv, g.send_sizes, g.recv_sizes, group)))
    if advance is not None and path.advanced:
        # The rest of the spread groups' momentum passes: no NS input depends on them.
        access(path.advanced)
        with side(aside):
            advance(path.advanced)
    if aside is not None:
        for g, work in gathering:
            access(g.unpacked)
            with aside():
                wait(work)
                copy(g.unpack)
                written(g.unpacked)
    run([j for j in mine if j.replica is None])
    if aside is None:
        for g, work in gathering:
            wait(work)
            access(g.unpacked)
            copy(g.unpack)
            written(g.unpacked)
    return stats
