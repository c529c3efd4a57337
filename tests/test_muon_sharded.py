"""Sharded Muon equals single-process Muon on the full parameters, on gloo ranks.

Each world size runs every layout case in one spawn (spawning dominates the cost on CPU).
A case is a set of parameters sharing one layout; every rank builds the same full tensors
and gradients from a seed, shards them with DTensor placements, runs Muon, and returns the
full parameters after the steps plus its telemetry. The parent compares against
`etude.optim.Muon` on plain tensors in this process (fp32 Newton–Schulz).
"""

from __future__ import annotations

import zlib

import pytest
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor

from etude.optim import Muon
from etude.optim.ns_choice import AccuracyTable
from etude.spawn import run_on_ranks

pytestmark = pytest.mark.dist

STEPS = 3
HYPER = dict(lr=0.02, weight_decay=0.1, ns_dtype=torch.float32, adjust_lr_fn="match_rms_adamw")
# Symmetric products in blocks of 4 rows: units of these shapes span 1 to 6 blocks a side.
TRIANGULAR = dict(ns_method="gram_triangular", ns_block=4)


def _per_shape_table() -> AccuracyTable:
    """Measured-looking ratios for some of the cases' unit shapes (short, long): "minimax_4"
    within the bar in both formulations, in one only, or in none; shapes left out run 5
    quintic steps."""
    minimax = {
        (18, 40): {"standard": 1.0, "gram": 1.0},
        (4, 16): {"standard": 1.3, "gram": 1.05},
        (7, 10): {"standard": 1.0, "gram": 1.0},
        (6, 10): {"standard": 1.0, "gram": 1.2},
        (6, 9): {"standard": 1.0, "gram": 1.0},
        (3, 7): {"standard": 1.5, "gram": 1.5},
    }
    ratios = {
        shape: {("quintic", m): 1.0 for m in rows} | {("minimax_4", m): r for m, r in rows.items()}
        for shape, rows in minimax.items()
    }
    return AccuracyTable(ratios, None, "test table")


# Each unit shape runs its own schedule (4 or 5 steps) from the table, in one plan.
PER_SHAPE = dict(ns_accuracy=_per_shape_table())


def cases(world: int) -> dict[str, dict]:
    """name -> mesh shape, placements, and param groups as (name, shape, group options)."""
    out = {
        "fsdp": {
            "mesh": (world,),
            "placements": (Shard(0),),
            "groups": [
                ({}, [("w18x40", (18, 40)), ("w3x7", (3, 7)), ("no_grad", (5, 9))]),
                ({"heads": 6, "head_dim": 0}, [("q", (24, 16))]),
                ({"heads": 6, "head_dim": 1}, [("o", (16, 24))]),
            ],
        },
        "fsdp_dim1": {
            "mesh": (world,),
            "placements": (Shard(1),),
            "groups": [({"heads": 3, "head_dim": 1}, [("o", (10, 21))]), ({}, [("w", (7, 5))])],
        },
        "ep": {
            "mesh": (world,),
            "placements": (Shard(0),),
            "groups": [({"experts": True}, [("few_experts", (3, 6, 10)), ("w1", (world, 8, 4))])],
        },
    }
    if world >= 4 and world % 2 == 0:
        # Uneven shards (13, 18 and 15 rows over 2 or 4 ranks) and more units than
        # replicas, so every replica orthogonalizes a share and all-gathers the rest.
        out["hsdp"] = {
            "mesh": (2, world // 2),
            "placements": (Replicate(), Shard(0)),
            "groups": [
                ({}, [("w18x40", (18, 40)), ("w3x7", (3, 7)), ("w13x9", (13, 9))]),
                ({"heads": 5, "head_dim": 0}, [("k", (15, 8))]),
                ({"heads": 3, "head_dim": 1}, [("o", (10, 21))]),
            ],
        }
        out["ep_fsdp"] = {
            "mesh": (world // 2, 2),
            "placements": (Shard(0), Shard(1)),
            "groups": [({"experts": True}, [("w1", (world // 2, 9, 6)), ("w2", (3, 6, 9))])],
        }
    return out


def _full(seed: int, shape: tuple[int, ...]) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def _run_case(
    case: dict,
    sharded: bool,
    max_in_flight: int = 4,
    spread: bool = True,
    ns: dict | None = None,
    overlap: bool | None = None,
):
    mesh = init_device_mesh("cpu", case["mesh"]) if sharded else None
    groups, params = [], {}
    for options, named in case["groups"]:
        entries = []
        for i, (name, shape) in enumerate(named):
            full = _full(zlib.crc32(name.encode()) + i, shape)
            t = (
                distribute_tensor(full, mesh, case["placements"], src_data_rank=None)
                if sharded
                else full
            )
            params[name] = torch.nn.Parameter(t)
            entries.append((name, params[name]))
        groups.append({"params": entries, **options})
    opt = Muon(
        groups,
        **HYPER,
        **(ns or {}),
        max_in_flight=max_in_flight,
        spread_replicas=spread,
        overlap_elementwise=overlap,
    )
    flops = []
    for step in range(STEPS):
        for name, p in params.items():
            if name == "no_grad":
                continue
            g = _full(1000 + step * 31 + len(name), tuple(p.shape))
            p.grad = (
                distribute_tensor(g, mesh, case["placements"], src_data_rank=None) if sharded else g
            )
        opt.step()
        flops.append(opt.last_step_stats.ns_flops)
    full = {n: (p.full_tensor() if sharded else p).detach().clone() for n, p in params.items()}
    return full, flops, opt.last_step_stats, _merged(opt), _passed(opt), _split(opt)


def _merged(opt: Muon) -> int:
    """Pieces loaded into NS stacks less the copies loading them: > 0 where runs of pieces
    were copied as one strided view."""
    merged = 0
    for plan, path in opt._plans.values():
        for job, job_path in zip(plan.jobs, path.jobs):
            if job_path is not None:
                merged += sum(len(ps) for ps in job.recv) - len(job_path.load)
    return merged


def _passed(opt: Muon) -> int:
    """Parts of the momentum passes written straight into NS stacks or send buffers (a
    group not spread over replicas: no direction buffer, no copy of its own pieces)."""
    return sum(
        at is not None
        for _, path in opt._plans.values()
        for parts, direction in zip(path.inputs, path.directions)
        if direction is None
        for _, at in parts
    )


def _split(opt: Muon) -> int:
    """Parameters whose momentum pass was split (a spread group's: the directions of its
    replica's share, the buffer's advance over the whole shard)."""
    return sum(len(path.advanced) for _, path in opt._plans.values())


def _rank_all_cases(world: int) -> dict:
    out = {}
    for name, case in cases(world).items():
        out[name] = _run_case(case, sharded=True)
        out[name + "/no_overlap"] = _run_case(case, sharded=True, max_in_flight=1)
        out[name + "/triangular"] = _run_case(case, sharded=True, ns=TRIANGULAR)
        out[name + "/per_shape"] = _run_case(case, sharded=True, ns=PER_SHAPE)
        if name == "hsdp":
            out[name + "/repeated"] = _run_case(case, sharded=True, spread=False)
    return out


@pytest.mark.parametrize("world", [2, 4, 8])
def test_sharded_equals_single_process(world):
    results = run_on_ranks(_rank_all_cases, world, world, timeout_s=240)
    # Some pieces went through NS as runs, so the comparisons below cover merged copies.
    assert sum(r[3] for by_case in results for r in by_case.values()) > 0
    # Groups not spread over replicas had their passes write and read the NS buffers; the
    # spread HSDP case copied through direction buffers and split its momentum passes.
    for variant in results[0]:
        passed = sum(by_case[variant][4] for by_case in results)
        split = sum(by_case[variant][5] for by_case in results)
        spread = variant.startswith("hsdp") and variant != "hsdp/repeated"
        assert (passed == 0) if spread else (passed > 0), (variant, passed)
        assert (split > 0) if spread else (split == 0), (variant, split)
    for name, case in cases(world).items():
        references = {
            "": _run_case(case, sharded=False)[:2],
            "/triangular": _run_case(case, sharded=False, ns=TRIANGULAR)[:2],
            "/per_shape": _run_case(case, sharded=False, ns=PER_SHAPE)[:2],
        }
        # Block-triangular products ran, and some units ran 4 steps: fewer FLOPs.
        assert references["/triangular"][1][0] < references[""][1][0], name
        assert references["/per_shape"][1][0] < references[""][1][0], name
        variants = [name, name + "/no_overlap", name + "/triangular", name + "/per_shape"]
        variants += [name + "/repeated"] if name == "hsdp" else []
        for variant in variants:
            suffix = next((s for s in ("/triangular", "/per_shape") if s in variant), "")
            reference, ref_flops = references[suffix]
            for rank, by_case in enumerate(results):
                full = by_case[variant][0]
                for pname, ref in reference.items():
                    torch.testing.assert_close(
                        full[pname],
                        ref,
                        rtol=1e-5,
                        atol=1e-6,
                        msg=lambda m, v=variant, r=rank, p=pname: f"{v} rank {r} {p}: {m}",
                    )
            # Each unit is orthogonalized once (HSDP replicas share the work), or once per
            # copy when replicas repeat it: per-rank FLOPs add up to the reference.
            copies = 2 if variant == "hsdp/repeated" else 1
            for step in range(STEPS):
                total = sum(by_case[variant][1][step] for by_case in results)
                assert total == copies * ref_flops[step], (variant, step, total, ref_flops[step])


def _rank_overlapped(world: int) -> dict:
    out = {}
    for name, case in cases(world).items():
        for overlap in (True, False):
            out[name, overlap] = _run_case(case, sharded=True, overlap=overlap)[0]
        if name == "hsdp":
            out[name, "repeated"] = _run_case(case, sharded=True, spread=False, overlap=True)[0]
    return out


def test_overlapped_elementwise_equals_sequential_and_single_process():
    # Each parameter's momentum pass just before NS first touches it, its update as soon as
    # its last result is back (the replicas' exchange included): the same ops on the same
    # tensors as running all momentum passes, then NS, then all updates, so bit-identical;
    # uneven shards, heads, experts, HSDP spread and repeated.
    world = 4
    results = run_on_ranks(_rank_overlapped, world, world, timeout_s=240)
    for name, case in cases(world).items():
        reference = _run_case(case, sharded=False)[0]
        single = _run_case(case, sharded=False, overlap=True)[0]
        assert all(torch.equal(single[p], reference[p]) for p in reference), name
        for rank, by_case in enumerate(results):
            for pname, ref in reference.items():
                overlapped = by_case[name, True][pname]
                assert torch.equal(overlapped, by_case[name, False][pname]), (name, rank, pname)
                repeated = [by_case[name, "repeated"][pname]] if name == "hsdp" else []
                for got in (overlapped, *repeated):
                    torch.testing.assert_close(
                        got,
                        ref,
                        rtol=1e-5,
                        atol=1e-6,
                        msg=lambda m, c=name, p=pname: f"{c} {p}: {m}",
                    )


def test_ep_local_experts_need_no_communication():
    results = run_on_ranks(_rank_ep_local, 4, timeout_s=120)
    for stats in results:
        assert stats.collectives == 1  # only the check that ranks agree on which grads exist
        assert stats.bytes_sent == stats.bytes_received == 0
        assert stats.ns_units == 2  # 8 experts over 4 ranks


def _rank_ep_local():
    case = {
        "mesh": (4,),
        "placements": (Shard(0),),
        "groups": [({"experts": True}, [("experts", (8, 6, 10))])],
    }
    return _run_case(case, sharded=True)[2]


def test_bytes_match_the_lower_bound_for_even_shards():
    # 8 whole matrices of 16x16 over 4 ranks, row-sharded: each unit's owner already holds a
    # quarter, so each rank sends 3/4 of its shard out and gets 3/4 of its units' data back.
    results = run_on_ranks(_rank_even, 4, timeout_s=120)
    shard_bytes = 8 * 16 * 16 // 4 * 4  # fp32 elements per rank * 4 bytes
    for stats in results:
        assert stats.bytes_sent == 2 * shard_bytes * 3 // 4
        assert stats.bytes_received == 2 * shard_bytes * 3 // 4
        assert stats.imbalance == 1.0


def _rank_even():
    case = {
        "mesh": (4,),
        "placements": (Shard(0),),
        "groups": [({}, [(f"w{i}", (16, 16)) for i in range(8)])],
    }
    return _run_case(case, sharded=True)[2]


def _rank_grads_disagree():
    mesh = init_device_mesh("cpu", (2,))
    p = torch.nn.Parameter(
        distribute_tensor(torch.ones(4, 4), mesh, [Shard(0)], src_data_rank=None)
    )
    opt = Muon([p])
    if dist.get_rank() == 0:
        p.grad = distribute_tensor(torch.ones(4, 4), mesh, [Shard(0)], src_data_rank=None)
    opt.step()


def test_ranks_disagreeing_on_grads_fail_instead_of_hanging():
    from etude.spawn import RanksFailed

    with pytest.raises(RanksFailed, match="disagree on which sharded parameters"):
        run_on_ranks(_rank_grads_disagree, 2, timeout_s=60)


def _rank_partial_param():
    from torch.distributed.tensor import Partial

    mesh = init_device_mesh("cpu", (2,))
    partial = torch.distributed.tensor.DTensor.from_local(torch.ones(4, 4), mesh, [Partial()])
    Muon([("w_partial", torch.nn.Parameter(partial))])


def test_unsupported_placement_is_named():
    from etude.spawn import RanksFailed

    with pytest.raises(RanksFailed, match=r"'w_partial'.*placement Partial.* on mesh dim 0"):
        run_on_ranks(_rank_partial_param, 2, timeout_s=60)


def test_runs_of_pieces_copy_as_one_strided_view_exactly():
    # A 5-row shard of a 7 x 30 weight cut into 5 column heads of 6: pieces of units 0-2
    # form a run, unit 3 is not in the list, unit 4 starts a new run; a piece of another
    # shape (unit 5, 4 columns) cannot join it. Experts: slabs 1 x 3 x 4 of a 4-expert shard.
    from etude.optim.sharded import Piece, _flat_views, located_copies

    def piece(unit, local, shape, param=0):
        return Piece(param, unit, 0, local, (), shape, int(torch.Size(shape).numel()))

    shard = torch.randn(5, 34)
    heads = [piece(u, (slice(0, 5), slice(6 * u, 6 * u + 6)), (5, 6)) for u in (0, 1, 2, 4)]
    heads.append(piece(5, (slice(0, 5), slice(30, 34)), (5, 4)))
    experts = torch.randn(4, 3, 4)
    slabs = [piece(u, (slice(u, u + 1), slice(0, 3), slice(0, 4)), (1, 3, 4), 1) for u in range(4)]
    for source, pieces, runs in ((shard, heads, 3), (experts, slabs, 1)):
        flat = torch.zeros(sum(p.numel for p in pieces))
        views = _flat_views(flat, [pieces])[0]
        pairs = located_copies(pieces, views, [source[p.local] for p in pieces])
        assert len(pairs) == runs
        for dst, src in pairs:
            dst.copy_(src)
        want = torch.cat([source[p.local].reshape(-1) for p in pieces])
        assert torch.equal(flat, want)
        # and back: every element once, into a zeroed tensor
        back = torch.zeros_like(source)
        for dst, src in located_copies(pieces, [back[p.local] for p in pieces], views):
            dst.copy_(src)
        for p in pieces:
            assert torch.equal(back[p.local], source[p.local])
