"""`rl_update` with hints on 4 gloo ranks under dual-mesh layouts equals one process: an
`etude.models` MoE transformer with routed experts (`NativePolicy`) laid out by
`etude.parallel.fsdp.parallelize`, both layouts in one spawn: dense weights FSDP-sharded
over 4 ranks with experts split over EP=2 and FSDP-sharded over S_e=2, and dense HSDP 2x2
with one expert per rank (EP=4). Checks the losses, the gradients of the last
optimizer step and the parameters after the update (fp32 ≤ 1e-5) on the awkward batch of
`test_rl_update_fsdp`: 6 trajectories of different lengths in 2 minibatches of 3 (one rank
gets no trajectory in each), micro-batches of one, stale sampler log-probs (clipping and
the IS cap bind), teacher passes for the hints. CP stays 1: `rl_update` gives every
data-parallel rank whole trajectories and has no context-parallel split."""

from __future__ import annotations

import pytest
import torch
from test_rl_update_fsdp import _update

from etude.models import MoEConfig, MoETransformer
from etude.parallel.fsdp import parallelize
from etude.parallel.layout import Layout
from etude.parallel.mesh import build_meshes
from etude.spawn import run_on_ranks

pytestmark = pytest.mark.dist

LAYOUTS = {
    "S_d=4 | S_e=2 EP=2": Layout(dense_shard=4, expert_shard=2, ep=2),
    "R_d=2 S_d=2 | EP=4": Layout(dense_replicate=2, dense_shard=2, ep=4),
}
CONFIG = MoEConfig(
    vocab_size=256,  # ByteChat's bytes
    dim=32,
    n_layers=2,
    n_heads=4,
    n_kv_heads=2,
    head_dim=8,
    n_experts=4,
    top_k=2,
    expert_ffn_dim=16,
    n_shared_experts=1,
    n_dense_layers=1,
    dense_ffn_dim=64,
    max_seq_len=512,
)


def _policy() -> MoETransformer:
    torch.manual_seed(0)
    return MoETransformer(CONFIG)


def _rank() -> dict:
    out = {}
    for name, layout in LAYOUTS.items():
        meshes = build_meshes(layout)
        policy = parallelize(_policy(), meshes)
        out[name] = _update(policy, meshes.data_rank(), layout.data_parallel)
    return out


def test_rl_update_under_dual_mesh_layouts_equals_one_process():
    want = _update(_policy(), 0, 1)
    assert want["metrics"]["hints_used"] > 0 and want["metrics"]["clip_frac"] > 0
    assert any(".experts." in name for name in want["grads"])
    for results in run_on_ranks(_rank, 4, timeout_s=240):
        for layout, got in results.items():
            _check(layout, got, want)


def _check(layout: str, got: dict, want: dict) -> None:
    for key in ("rl_loss", "distill_loss", "hints_used"):
        assert got["metrics"][key] == pytest.approx(want["metrics"][key], abs=1e-5), (layout, key)
    for kind in ("grads", "params"):
        assert got[kind].keys() == want[kind].keys(), layout
        for name, value in want[kind].items():
            torch.testing.assert_close(
                got[kind][name], value, rtol=0, atol=1e-5, msg=f"{layout}: {kind} {name}"
            )
