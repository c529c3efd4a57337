"""Layouts, their gradient-reduction proofs and predictions, without spawning ranks."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from etude.cli import main
from etude.models import MoETransformer, preset
from etude.parallel.analytic import shared_mesh_min_gpus, state_bytes, step_collective_bytes
from etude.parallel.clip import clip_grad_norm_
from etude.parallel.context import chunk_positions
from etude.parallel.data import local_batch
from etude.parallel.layout import (
    FamilyReduction,
    Layout,
    LayoutError,
    check_counted_once,
    gradient_reductions,
    parse_layout,
)
from etude.parallel.plan import plan

HEADLINE = Layout(dense_replicate=2, dense_shard=2, cp=2, ep=8)


def test_headline_layout_fits_8_ranks_where_a_shared_mesh_needs_16():
    assert HEADLINE.world_size == 8
    assert shared_mesh_min_gpus(HEADLINE) == 16
    assert shared_mesh_min_gpus(Layout(dense_shard=8, ep=8)) == 8


def test_reductions_count_every_rank_once_and_divide_by_the_world():
    dense, expert = gradient_reductions(HEADLINE)
    assert dense.reduce_groups[0] == tuple(range(8)) and dense.reach[0] == (0, 1)
    assert expert.reduce_groups[3] == (3,) and expert.reach[3] == tuple(range(8))
    assert dense.divide_factor == expert.divide_factor == 8
    # FSDP alone would divide expert gradients by its mesh size: EP times too little.
    assert expert.fsdp_default_factor == 1
    hsdp = gradient_reductions(Layout(2, 2, 1, 1, 2, 2))[1]
    assert hsdp.reduce_groups[0] == (0, 2) and hsdp.fsdp_default_factor == 2


def test_with_ranks_per_node_dense_groups_stay_in_a_node_and_ep_spans_nodes():
    layout = Layout(dense_replicate=4, dense_shard=2, cp=2, ep=16, ranks_per_node=4)
    dense, expert = gradient_reductions(layout)
    nodes = lambda ranks: {r // 4 for r in ranks}  # noqa: E731
    shard_cp_groups = layout.dense_ranks().reshape(4, 4)
    assert all(len(nodes(g)) == 1 for g in shard_cp_groups)
    assert all(len(nodes(reach)) == 1 for reach in dense.reach)  # CP groups
    assert all(len(nodes(reach)) == 4 for reach in expert.reach)  # EP groups


def test_a_reduction_that_misses_or_double_counts_is_rejected():
    ranks = ((0, 1), (0, 1), (2, 3), (2, 3))
    single = ((0,), (1,), (2,), (3,))
    # Dense weights reduced only within pairs: ranks 2 and 3 never reach ranks 0 and 1.
    with pytest.raises(LayoutError, match=r"dense gradients reduced on rank 0 count rank 2's"):
        check_counted_once(FamilyReduction("dense", ranks, single, 4, 2), 4)
    # Experts whose reduce group overlaps a contributor's EP group twice.
    with pytest.raises(LayoutError, match=r"contribution 2 of 1 times"):
        check_counted_once(FamilyReduction("expert", ranks, ranks, 4, 2), 4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(dense_shard=2, cp=2, ep=8), r"1x2x2=4 ranks .* 1x1x8=8"),
        (dict(dense_shard=0), r"dense_shard must be a positive integer"),
        (dict(dense_shard=8, ep=8, ranks_per_node=4), r"8x1=8 ranks does not divide a node"),
    ],
)
def test_invalid_layouts_say_what_does_not_multiply(kwargs, message):
    with pytest.raises(LayoutError, match=message):
        Layout(**kwargs)


def test_layout_must_fit_world_experts_sequence_and_batch():
    with pytest.raises(LayoutError, match=r"needs 8 ranks .* but the job has 4"):
        HEADLINE.check_fits(world_size=4)
    tiny = preset("tiny")
    with pytest.raises(LayoutError, match="6 experts do not divide evenly over EP=8"):
        HEADLINE.check_fits(model=dataclasses.replace(tiny, n_experts=6))
    with pytest.raises(LayoutError, match=r"expert_shard=3 does not divide .* row count 32"):
        Layout(dense_shard=3, expert_shard=3).check_fits(model=tiny)
    with pytest.raises(LayoutError, match="a model without experts cannot use EP=8"):
        HEADLINE.check_fits(model=dataclasses.replace(tiny, n_experts=0))
    with pytest.raises(LayoutError, match=r"sequence length 10 is not divisible by 2\*CP=4"):
        HEADLINE.check_fits(seq_len=10)
    with pytest.raises(LayoutError, match="batch of 6 sequences does not divide over 4"):
        HEADLINE.check_fits(batch_size=6)
    HEADLINE.check_fits(8, tiny, 64, 8)


def test_parse_layout_overrides():
    assert parse_layout("cp=2, ep=8") == {"cp": 2, "ep": 8}
    with pytest.raises(LayoutError, match="'tp=2' is not key=value"):
        parse_layout("tp=2")
    with pytest.raises(LayoutError, match="'x' is not an integer"):
        parse_layout("ep=x")


def test_cp_chunks_are_load_balanced_and_cover_the_sequence():
    chunks = [chunk_positions(16, 4, r) for r in range(4)]
    assert chunks[0].tolist() == [0, 1, 14, 15]
    assert sorted(torch.cat(chunks).tolist()) == list(range(16))
    # causal work per rank (sum of positions + 1) is equal
    assert len({int((c + 1).sum()) for c in chunks}) == 1


def test_local_batches_partition_the_global_batch():
    batch = torch.arange(8 * 17).view(8, 17)
    seen = []
    for data_rank in range(HEADLINE.data_parallel):
        for cp_rank in range(HEADLINE.cp):
            inputs, targets, _ = local_batch(batch, HEADLINE, data_rank, cp_rank)
            assert inputs.shape == (2, 8)
            torch.testing.assert_close(targets, inputs + 1)
            seen += inputs.flatten().tolist()
    assert sorted(seen) == sorted(batch[:, :-1].flatten().tolist())


def test_state_bytes_follow_the_sharding_fractions():
    config = preset("tiny")
    one = state_bytes(config, Layout())
    sharded = state_bytes(config, HEADLINE)
    assert sharded["expert"]["params"] == one["expert"]["params"] / 8
    assert sharded["dense"]["params"] == one["dense"]["params"] / 4
    # Muon: one momentum per matrix; AdamW two moments for the rest
    model = MoETransformer(config)
    assert one["dense"]["params"] + one["expert"]["params"] == 4 * sum(
        p.numel() for p in model.parameters()
    )


def test_collective_prediction_is_empty_on_one_rank_and_scales_with_bf16():
    config = preset("tiny")
    assert step_collective_bytes(config, Layout(), 8, 64) == {}
    fp32 = step_collective_bytes(config, HEADLINE, 8, 64)
    bf16 = step_collective_bytes(config, HEADLINE, 8, 64, compute_bytes=2)
    key = ("dense/shard", "all_gather")
    assert bf16[key] * 2 == fp32[key]


def test_clip_on_plain_tensors_matches_torch():
    a = torch.nn.Parameter(torch.ones(3))
    b = torch.nn.Parameter(torch.ones(2, 2))
    a.grad, b.grad = torch.full((3,), 3.0), torch.full((2, 2), 4.0)
    norm = clip_grad_norm_([a, b], 1.0)
    assert norm.item() == pytest.approx((27 + 64) ** 0.5)
    total = torch.cat([a.grad.flatten(), b.grad.flatten()]).norm()
    assert total.item() == pytest.approx(1.0, abs=1e-5)


def test_plan_layout_for_the_1t_preset(capsys):
    report = plan("kimi-k2", 512, 8, 8192, None)
    rows = {(r["cp"], r["ep"]): r for r in report["layouts"]}
    assert rows[(2, 128)]["expert_fraction"] == 1 / 128
    assert rows[(2, 128)]["min_gpus_dual_mesh"] == 512
    assert rows[(2, 128)]["min_gpus_shared_mesh"] == 64 * 128
    assert main(["plan", "layout", "--model", "kimi-k2", "--gpus", "64"]) == 0
    out = capsys.readouterr().out
    assert "shared" in out and "kimi-k2 on 64 GPUs" in out
    assert main(["plan", "layout", "--model", "kimi-k2", "--gpus", "60"]) == 2
    assert "60 GPUs is not a whole number of 8-GPU nodes" in capsys.readouterr().err
