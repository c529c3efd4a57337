"""On 2 gloo ranks (dense S_d=2 | experts EP=2): a block-FP8 DeepSeek-V3 checkpoint loads
onto each rank as exactly its part of the single-process load, reading about half of the
quantized weights; and the auxiliary-loss-free bias update sums the expert loads over the
ranks, so every rank applies the single-process update (one spawn for both)."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from hf_tiny import VOCAB, save_tiny_fp8

from etude.models import load_pretrained
from etude.models.hf_checkpoint import SafetensorsSource
from etude.models.routing import bias_balancing_update
from etude.parallel.data import local_batch
from etude.parallel.layout import Layout
from etude.parallel.mesh import build_meshes
from etude.parallel.pretrained import load_sharded, local_box
from etude.parallel.train import training_loss
from etude.spawn import run_on_ranks

pytestmark = [pytest.mark.dist, pytest.mark.slow]

LAYOUT = dict(dense_shard=2, ep=2)
BLOCK = (16, 24)
RATE = 0.01


def _batch() -> torch.Tensor:
    return torch.randint(0, VOCAB, (4, 17), generator=torch.Generator().manual_seed(5))


def _rank(directory: str) -> dict:
    read = {"fp8": 0}
    raw_read = SafetensorsSource._read_raw

    def counting(self, key, index):
        t = raw_read(self, key, index)
        if t.dtype == torch.float8_e4m3fn:
            read["fp8"] += t.numel()
        return t

    SafetensorsSource._read_raw = counting
    layout = Layout(**LAYOUT)
    meshes = build_meshes(layout)
    model, _, _ = load_sharded(directory, meshes)
    SafetensorsSource._read_raw = raw_read
    shards = {}
    for name, p in model.named_parameters():
        local = p.to_local() if hasattr(p, "to_local") else p
        shards[name] = (local_box(p), local.detach().clone())
    inputs, targets, positions = local_batch(_batch(), layout, meshes.data_rank(), 0)
    training_loss(model, inputs, targets, positions)
    moes = [b.moe for b in model.layers if hasattr(b, "moe")]
    local_loads = [m.expert_load.clone() for m in moes]
    model.update_router_biases(RATE)
    biases = [m.router_bias.full_tensor() for m in moes]
    dist.barrier()
    return {"shards": shards, "fp8_read": read["fp8"], "loads": local_loads, "biases": biases}


def test_fp8_sharded_load_and_bias_update_equal_one_process(tmp_path):
    _, written = save_tiny_fp8("deepseek_v3", tmp_path, BLOCK)
    results = run_on_ranks(_rank, 2, str(tmp_path), timeout_s=240)
    reference, _ = load_pretrained(tmp_path)
    full = dict(reference.named_parameters())
    for r in results:
        for name, (box, local) in r["shards"].items():
            want = full[name][tuple(slice(lo, hi) for lo, hi in box)]
            assert torch.equal(local, want), name
    fp8_total = sum(t.numel() for t in written.values() if t.dtype == torch.float8_e4m3fn)
    for r in results:  # each rank reads its half of the sharded rows and of the experts
        assert r["fp8_read"] <= 0.6 * fp8_total, (r["fp8_read"], fp8_total)

    reference.train()
    batch = _batch()
    training_loss(reference, batch[:, :-1], batch[:, 1:], torch.arange(16))
    moes = [b.moe for b in reference.layers if hasattr(b, "moe")]
    loads = [m.expert_load.clone() for m in moes]
    reference.update_router_biases(RATE)
    local_differs = False
    for i, m in enumerate(moes):
        assert torch.equal(results[0]["loads"][i] + results[1]["loads"][i], loads[i])
        for r in results:
            assert torch.equal(r["biases"][i], m.router_bias.detach()), i
        local_differs |= any(
            not torch.equal(
                bias_balancing_update(r["loads"][i], RATE), bias_balancing_update(loads[i], RATE)
            )
            for r in results
        )
    # a rank's own tokens alone would have given another update: the sum is what counts
    assert local_differs
