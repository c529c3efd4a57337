"""Dual-mesh training on gloo ranks equals single-process training of the same tiny model.

One spawn per world size runs every check (spawning dominates the cost on CPU). Each rank
builds the tiny MoE from the same seed, applies a layout (`etude.parallel.fsdp.parallelize`),
reads its slice of the same global batch, and returns full gradients (rank 0), losses and
the collective bytes it issued. The parent compares with one process on the whole batch.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.distributed as dist

from etude.models import MoETransformer, preset
from etude.parallel import checkpoint
from etude.parallel.analytic import step_collective_bytes
from etude.parallel.clip import clip_grad_norm_, grad_norm
from etude.parallel.comm import CollectiveBytes
from etude.parallel.data import global_batch, local_batch, stdlib_corpus
from etude.parallel.expert import AllToAllDispatch
from etude.parallel.fsdp import parallelize
from etude.parallel.layout import Layout
from etude.parallel.mesh import build_meshes
from etude.parallel.train import TrainConfig, build_optimizer, training_loss
from etude.spawn import run_on_ranks

pytestmark = [pytest.mark.dist, pytest.mark.slow]

CONFIG = preset("tiny")
BATCH, SEQ = 8, 16
HEADLINE = dict(dense_replicate=2, dense_shard=2, cp=2, ep=8)
LAYOUTS_8 = {
    "headline R_d=2 S_d=2 CP=2 | EP=8": HEADLINE,
    "R_d=4 S_d=2 | R_e=2 EP=4": dict(dense_replicate=4, dense_shard=2, expert_replicate=2, ep=4),
}
LAYOUTS_4 = {
    "HSDP 2x2 | S_e=2 EP=2": dict(dense_replicate=2, dense_shard=2, expert_shard=2, ep=2),
    "CP=4 | EP=4": dict(cp=4, ep=4),
}
TRAIN = TrainConfig(batch_size=BATCH, seq_len=SEQ, lr=0.02, adamw_lr=3e-3, grad_clip=1.0)
MUON_STEPS = 4


def _batch(step: int) -> torch.Tensor:
    return global_batch(stdlib_corpus(), step, BATCH, SEQ, seed=0)


def _model(layout: Layout | None, **kwargs) -> tuple[MoETransformer, object]:
    torch.manual_seed(0)
    model = MoETransformer(CONFIG)
    if layout is None:
        return model, None
    meshes = build_meshes(layout)
    return parallelize(model, meshes, **kwargs), meshes


def _local(layout: Layout, meshes, step: int):
    return local_batch(_batch(step), layout, meshes.data_rank(), meshes.cp_rank())


def _full_grads(model) -> dict[str, torch.Tensor]:
    grads = {n: p.grad.full_tensor() for n, p in model.named_parameters()}  # collective
    return grads if dist.get_rank() == 0 else {}


def _mean(x: torch.Tensor) -> float:
    x = x.detach().clone()
    dist.all_reduce(x)
    return x.item() / dist.get_world_size()


def _grads_and_bytes(layout_kwargs: dict, **kwargs) -> dict:
    layout = Layout(**layout_kwargs)
    model, meshes = _model(layout, **kwargs)
    with CollectiveBytes(meshes.labels) as comm:
        loss, _, _ = training_loss(model, *_local(layout, meshes, 0))
        loss.backward()
    return {
        "loss": _mean(loss),
        "grads": _full_grads(model),
        "bytes": dict(comm.bytes),
        "grad_norm": grad_norm(model.parameters()).item(),  # one all-reduce, both meshes
    }


def _muon_run(layout_kwargs: dict, steps: range, path: str, save_at: int | None = None) -> dict:
    layout = Layout(**layout_kwargs)
    model, meshes = _model(layout)
    opt = build_optimizer(model, TRAIN)
    if save_at is None:
        checkpoint.load(path, model, opt, CONFIG)
    losses = []
    for step in steps:
        loss, _, _ = training_loss(model, *_local(layout, meshes, step))
        loss.backward()
        clip_grad_norm_(model.parameters(), TRAIN.grad_clip)
        opt.step()
        opt.zero_grad()
        losses.append(_mean(loss))
        if save_at == step + 1:
            checkpoint.save(path, step + 1, model, opt, {"model": dataclasses.asdict(CONFIG)})
    params = {n: p.full_tensor().detach() for n, p in model.named_parameters()}
    return {"losses": losses, "params": params if dist.get_rank() == 0 else {}}


def _rank_world8(tmp: str) -> dict:
    out = {name: _grads_and_bytes(lay) for name, lay in LAYOUTS_8.items()}
    out["default FSDP averaging"] = _grads_and_bytes(HEADLINE, layout_factors=False)
    out["muon"] = _muon_run(HEADLINE, range(MUON_STEPS), tmp, save_at=2)
    # The checkpoint saved under EP=8, CP=2 continues under EP=4, CP=1 (R_d != R_e).
    out["resumed"] = _muon_run(
        LAYOUTS_8["R_d=4 S_d=2 | R_e=2 EP=4"], range(2, MUON_STEPS), f"{tmp}/step_2"
    )
    return out


def _rank_world4() -> dict:
    out = {name: _grads_and_bytes(lay) for name, lay in LAYOUTS_4.items()}
    out["bf16"] = _grads_and_bytes(LAYOUTS_4["HSDP 2x2 | S_e=2 EP=2"], bf16=True)
    out["zero-token experts"] = _dispatch_with_idle_experts()
    return out


def _dispatch_with_idle_experts() -> list[torch.Tensor]:
    # 8 experts over 4 ranks; every token goes to experts 1 and 6 only, so 6 experts and
    # two whole ranks receive nothing. Expert e multiplies by (e + 1): the round trip must
    # return each slot's row times its expert's factor, in slot order.
    group = dist.group.WORLD
    dispatch = AllToAllDispatch(group, 8)
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(dist.get_rank()))
    ids = torch.tensor([[1, 6], [6, 1], [1, 6], [6, 1], [1, 6]])
    rows, counts, state = dispatch.dispatch(x, ids)
    factors = (torch.arange(2) + 1 + 2 * dist.get_rank()).float().repeat_interleave(counts)
    y = dispatch.combine(rows * factors[:, None], state)
    expected = x.repeat_interleave(2, dim=0) * (ids.flatten() + 1).float()[:, None]
    return [y, expected, counts]


def _reference(steps: int = 0) -> dict:
    model, _ = _model(None)
    if steps == 0:
        batch = _batch(0)
        loss, _, _ = training_loss(model, batch[:, :-1], batch[:, 1:], torch.arange(SEQ))
        loss.backward()
        return {"loss": loss.item(), "grads": {n: p.grad for n, p in model.named_parameters()}}
    opt = build_optimizer(model, TRAIN)
    losses = []
    for step in range(steps):
        batch = _batch(step)
        loss, _, _ = training_loss(model, batch[:, :-1], batch[:, 1:], torch.arange(SEQ))
        loss.backward()
        clip_grad_norm_(model.parameters(), TRAIN.grad_clip)
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return {"losses": losses, "params": {n: p.detach() for n, p in model.named_parameters()}}


def _max_grad_error(got: dict, want: dict) -> tuple[float, str]:
    return max(((got[n] - want[n]).abs().max().item(), n) for n in want)


def _check_bytes(name: str, layout_kwargs: dict, per_rank: list[dict], world: int) -> None:
    predicted = step_collective_bytes(CONFIG, Layout(**layout_kwargs), BATCH, SEQ)
    assert {k for r in per_rank for k in r} == set(predicted), name
    for key, value in predicted.items():
        if key == ("expert/ep", "all_to_all"):  # depends on routing: compare the total
            assert sum(r[key] for r in per_rank) == world * value, (name, key)
        else:
            assert all(r[key] == value for r in per_rank), (name, key, value)


@pytest.fixture(scope="module")
def world8(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ckpt")
    return run_on_ranks(_rank_world8, 8, str(tmp), timeout_s=240)


@pytest.fixture(scope="module")
def world4():
    return run_on_ranks(_rank_world4, 4, timeout_s=180)


@pytest.mark.parametrize("name", [*LAYOUTS_8, *LAYOUTS_4])
def test_gradients_and_loss_equal_single_process(name, world8, world4):
    results = world8 if name in LAYOUTS_8 else world4
    ref = _reference()
    got = results[0][name]
    assert got["loss"] == pytest.approx(ref["loss"], abs=1e-6)
    err, param = _max_grad_error(got["grads"], ref["grads"])
    assert err <= 1e-6, f"{name}: max abs gradient error {err:.2e} in {param}"
    want_norm = torch.nn.utils.get_total_norm(list(ref["grads"].values())).item()
    assert got["grad_norm"] == pytest.approx(want_norm, rel=1e-5)


def test_fsdp_default_averaging_is_detected_as_wrong(world8):
    # Without the layout's divide factor, FSDP divides expert gradients by its own mesh
    # size (R_e*S_e = 1) instead of the world (8): experts come out EP=8 times too large.
    ref = _reference()
    got = world8[0]["default FSDP averaging"]["grads"]
    err, param = _max_grad_error(got, ref["grads"])
    assert err > 1e-4 and ".moe.experts." in param
    expert = "layers.1.moe.experts.w1"
    torch.testing.assert_close(got[expert], 8 * ref["grads"][expert], rtol=1e-4, atol=1e-7)
    dense = "layers.0.attention.wq.weight"
    torch.testing.assert_close(got[dense], ref["grads"][dense], rtol=0, atol=1e-6)


def test_muon_steps_under_the_headline_layout_equal_single_process(world8):
    ref = _reference(MUON_STEPS)
    got = world8[0]["muon"]
    assert got["losses"] == pytest.approx(ref["losses"], abs=1e-5)
    for name, want in ref["params"].items():
        torch.testing.assert_close(got["params"][name], want, rtol=0, atol=1e-5, msg=name)
    assert got["losses"][-1] < got["losses"][0]


def test_checkpoint_from_one_layout_resumes_under_another(world8):
    # Saved under EP=8, CP=2 after 2 steps; resumed under EP=4, CP=1, R_d=4, R_e=2.
    uninterrupted, resumed = world8[0]["muon"], world8[0]["resumed"]
    assert resumed["losses"] == pytest.approx(uninterrupted["losses"][2:], abs=1e-5)
    for name, want in uninterrupted["params"].items():
        torch.testing.assert_close(resumed["params"][name], want, rtol=0, atol=1e-5, msg=name)


@pytest.mark.parametrize("name", [*LAYOUTS_8, *LAYOUTS_4])
def test_collective_bytes_match_the_layout_prediction(name, world8, world4):
    results, layouts = (world8, LAYOUTS_8) if name in LAYOUTS_8 else (world4, LAYOUTS_4)
    _check_bytes(name, layouts[name], [r[name]["bytes"] for r in results], len(results))


def test_bf16_mixed_precision_stays_close_to_fp32(world4):
    fp32 = world4[0]["HSDP 2x2 | S_e=2 EP=2"]
    bf16 = world4[0]["bf16"]
    assert bf16["loss"] == pytest.approx(fp32["loss"], abs=0.05)
    for name, want in fp32["grads"].items():
        got = bf16["grads"][name]
        assert got.dtype == torch.float32  # fp32 master gradients
        cos = torch.nn.functional.cosine_similarity(got.flatten(), want.flatten(), dim=0)
        assert cos > 0.97, (name, cos.item())
    # bf16 communication: all-gathers and all-to-all move half the bytes, reductions not.
    b16, b32 = world4[0]["bf16"]["bytes"], fp32["bytes"]
    assert b16[("dense/shard", "all_gather")] * 2 == b32[("dense/shard", "all_gather")]
    assert b16[("dense/shard", "reduce_scatter")] == b32[("dense/shard", "reduce_scatter")]


def test_experts_without_tokens_and_ranks_without_tokens(world4):
    for rank, (y, expected, counts) in enumerate(r["zero-token experts"] for r in world4):
        torch.testing.assert_close(y, expected, rtol=0, atol=0)
        assert counts.sum().item() == (20 if rank in (0, 3) else 0)
