"""DeepSeek-V3's auxiliary-loss-free balancing: the bias update on hand-built loads, the
load a MoE layer counts (training forwards only), and `etude train` applying it after each
step (the optimizer never trains the bias)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hf_tiny import VOCAB, save_tiny, write_jsonl

from etude.models import load_pretrained
from etude.models.routing import bias_balancing_update, route
from etude.parallel.train import TrainConfig, train


def test_update_on_hand_built_loads():
    # mean 4: overloaded experts go down by the rate, underloaded up, the mean one stays
    load = torch.tensor([7, 1, 4, 4, 0, 8])
    torch.testing.assert_close(
        bias_balancing_update(load, 0.001),
        torch.tensor([-0.001, 0.001, 0.0, 0.0, 0.001, -0.001]),
        rtol=0,
        atol=0,
    )
    # a non-integer mean (7/3): nothing sits at it
    got = bias_balancing_update(torch.tensor([3, 2, 2]), 0.5)
    assert got.tolist() == [-0.5, 0.5, 0.5]
    assert bias_balancing_update(torch.tensor([5, 5, 5, 5]), 0.1).abs().sum() == 0


@pytest.fixture(scope="module")
def deepseek(tmp_path_factory):
    directory = tmp_path_factory.mktemp("deepseek")
    save_tiny("deepseek_v3", directory)
    return directory


def test_layer_counts_training_forwards_and_applies_the_update(deepseek):
    model, _ = load_pretrained(deepseek)
    moe = model.layers[-1].moe
    tokens = torch.randint(0, VOCAB, (3, 11), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        model.eval()(tokens)
    assert moe.expert_load is None  # evaluation does not count
    model.train()
    captured = []
    hook = moe.router.register_forward_hook(lambda m, i, o: captured.append(o.detach()))
    model(tokens)
    model(tokens[:1])
    hook.remove()
    bias = moe.router_bias.detach().clone()
    ids = torch.cat([route(c, model.config, bias)[1] for c in captured])
    want_load = torch.bincount(ids.flatten(), minlength=model.config.n_experts)
    assert torch.equal(moe.expert_load, want_load)
    model.update_router_biases(0.01)
    assert torch.equal(moe.router_bias, bias + bias_balancing_update(want_load, 0.01))
    assert moe.expert_load is None


def test_train_moves_the_bias_by_the_rate_each_step(deepseek, tmp_path):
    from etude.parallel.export import from_training_checkpoint

    data = str(write_jsonl(tmp_path / "docs.jsonl"))
    before, _ = load_pretrained(deepseek)
    start = {n: p.detach() for n, p in before.named_parameters() if "router_bias" in n}
    rate, out = 0.25, tmp_path / "run"
    cfg = TrainConfig(batch_size=2, seq_len=12, steps=3, checkpoint_every=3, out=str(out))
    train(dataclasses.replace(cfg, init=str(deepseek), data=[data], bias_update_rate=rate))
    trained, _ = from_training_checkpoint(out / "checkpoints" / "step_3")
    moved = {n: (p.detach() - start[n]) / rate for n, p in trained.named_parameters() if n in start}
    assert len(moved) == 2  # the MoE layers 1 and 2
    for name, steps in moved.items():
        # three updates of -1, 0 or +1 rate each (an optimizer update would not be a whole
        # number of rates), and some expert moved
        assert torch.allclose(steps, steps.round(), atol=1e-4), name
        assert steps.abs().max() <= 3 and steps.abs().sum() > 0, name
