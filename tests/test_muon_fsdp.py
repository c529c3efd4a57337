"""Muon under real FSDP2 (`fully_shard`): parity with one process, and DCP checkpoints."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

from etude.optim import Muon
from etude.spawn import run_on_ranks

pytestmark = pytest.mark.dist

VOCAB, DIM, HIDDEN, HEADS = 29, 12, 20, 4


class _Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed_tokens = torch.nn.Embedding(VOCAB, DIM)
        self.wq = torch.nn.Linear(DIM, HIDDEN)  # HEADS heads of 5 rows
        self.w2 = torch.nn.Linear(HIDDEN, DIM, bias=False)
        self.lm_head = torch.nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        h = self.embed_tokens(tokens)
        h = h + self.w2(torch.tanh(self.wq(h)))
        return self.lm_head(h)


def _optimizer(model: _Model) -> Muon:
    heads = [("wq.weight", model.wq.weight)]
    rest = [(n, p) for n, p in model.named_parameters() if n != "wq.weight"]
    return Muon(
        [{"params": heads, "heads": HEADS}, {"params": rest}],
        lr=0.02,
        ns_dtype=torch.float32,
        adamw_lr=0.01,
    )


def _batch(rank: int, step: int) -> torch.Tensor:
    return torch.randint(
        0, VOCAB, (3, 7), generator=torch.Generator().manual_seed(rank * 97 + step)
    )


def _loss(model, tokens):
    logits = model(tokens[:, :-1])
    return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))


def _shard(model: _Model, mesh_shape: tuple[int, ...]) -> _Model:
    names = ("replicate", "shard")[-len(mesh_shape) :]
    mesh = init_device_mesh("cpu", mesh_shape, mesh_dim_names=names)
    for module in (model.wq, model.w2, model.lm_head):
        fully_shard(module, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def _train(model, opt, steps, world):
    for step in steps:
        opt.zero_grad()
        _loss(model, _batch(dist.get_rank() if world else 0, step)).backward()
        opt.step()


def _rank_parity(mesh_shape):
    model = _shard(_Model(), mesh_shape)
    opt = _optimizer(model)
    _train(model, opt, range(3), world=True)
    return {n: p.full_tensor().detach() for n, p in model.named_parameters()}


def _reference(world: int, steps: int) -> dict[str, torch.Tensor]:
    """One process, the loss averaged over every rank's batch (what FSDP's mean reduces)."""
    model = _Model()
    opt = _optimizer(model)
    for step in range(steps):
        opt.zero_grad()
        loss = sum(_loss(model, _batch(r, step)) for r in range(world)) / world
        loss.backward()
        opt.step()
    return {n: p.detach() for n, p in model.named_parameters()}


@pytest.mark.parametrize("mesh_shape", [(4,), (2, 2)], ids=["fsdp4", "hsdp2x2"])
def test_fully_shard_matches_single_process(mesh_shape):
    results = run_on_ranks(_rank_parity, 4, mesh_shape, timeout_s=180)
    reference = _reference(4, 3)
    for rank, params in enumerate(results):
        for name, ref in reference.items():
            torch.testing.assert_close(
                params[name],
                ref,
                rtol=1e-5,
                atol=1e-6,
                msg=lambda m, n=name, r=rank: f"rank {r} {n}: {m}",
            )


def _rank_checkpoint(path: str):
    model = _shard(_Model(), (2,))
    opt = _optimizer(model)
    _train(model, opt, range(2), world=True)
    model_sd, optim_sd = get_state_dict(model, opt)
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=path)
    _train(model, opt, range(2, 4), world=True)
    uninterrupted = {n: p.full_tensor().detach() for n, p in model.named_parameters()}

    fresh = _shard(_Model(), (2,))
    fresh_opt = _optimizer(fresh)
    model_sd, optim_sd = get_state_dict(fresh, fresh_opt)
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=path)
    set_state_dict(
        fresh, fresh_opt, model_state_dict=state["model"], optim_state_dict=state["optim"]
    )
    _train(fresh, fresh_opt, range(2, 4), world=True)
    resumed = {n: p.full_tensor().detach() for n, p in fresh.named_parameters()}
    return uninterrupted, resumed


def test_distributed_checkpoint_round_trip(tmp_path):
    for uninterrupted, resumed in run_on_ranks(_rank_checkpoint, 2, str(tmp_path), timeout_s=180):
        for name in uninterrupted:
            torch.testing.assert_close(resumed[name], uninterrupted[name], rtol=0, atol=0)
