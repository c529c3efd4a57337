"""The RL loss pieces against direct computation, and one full update on a batch with bad
input: the bad trajectory and the bad hint are dropped with a message, the rest trains."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from etude.recipes.toolgrid.policy import BytePolicy, muon_optimizer
from etude.recipes.toolgrid.train import ModelSettings
from etude.rl.advantages import group_advantages, weigh_negatives
from etude.rl.effort import shape_lengths
from etude.rl.feedback import DETECTORS, Hint, detect_all
from etude.rl.loss import (
    HintKL,
    distillation_loss,
    policy_gradient_loss,
    reference_kl,
    token_logprobs,
)
from etude.rl.policy import NativePolicy
from etude.rl.trajectory import ByteChat, Trajectory
from etude.rl.update import StepSettings, rl_update, scheduled

DATA = Path(__file__).parent / "data" / "rl"

# the hand-written trajectories of tests/data/rl carry no token ids: updates on them
# re-tokenize (retokenize=True), which warns
pytestmark = pytest.mark.filterwarnings("ignore:.*re-tokenized:UserWarning")


def test_group_advantages():
    r = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    g = torch.tensor([0, 0, 0, 1, 1, 1])
    torch.testing.assert_close(
        group_advantages(r, g), torch.tensor([2 / 3, -1 / 3, -1 / 3, 0, 0, 0])
    )
    std = group_advantages(r, g, normalize_std=True)
    torch.testing.assert_close(
        std[:3], torch.tensor([2 / 3, -1 / 3, -1 / 3]) / (r[:3].std() + 1e-6)
    )


def test_weigh_negatives_scales_only_the_negative_advantages():
    a = torch.tensor([2 / 3, -1 / 3, -1 / 3, 0.0])
    torch.testing.assert_close(weigh_negatives(a, 0.25), torch.tensor([2 / 3, -1 / 12, -1 / 12, 0]))
    torch.testing.assert_close(weigh_negatives(a, 0.0), torch.tensor([2 / 3, 0, 0, 0]))
    torch.testing.assert_close(weigh_negatives(a, 1.0), a)


def test_effort_shaping_prefers_short_successes_and_never_rewards_failing_fast():
    r = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0])
    lengths = torch.tensor([4, 8, 6, 1, 20])
    g = torch.zeros(5, dtype=torch.long)
    out = shape_lengths(r, lengths, g, r > 0, alpha=0.2)
    torch.testing.assert_close(out, torch.tensor([1.0, 0.8, 0.9, 0.0, 0.0]))


def test_policy_gradient_is_token_level_and_clipped():
    lp = torch.tensor([[0.0, -1.0, -2.0, 0.0], [0.0, -0.5, 0.0, 0.0]])
    old = torch.tensor([[0.0, -1.0, -2.5, 0.0], [0.0, -0.1, 0.0, 0.0]])
    mask = torch.tensor([[False, True, True, True], [False, True, False, False]])
    adv = torch.tensor([1.0, -1.0])
    ratio = torch.exp(lp - old)
    # row 0 (A > 0): ratio e^0.5 clips at 1.28; row 1 (A < 0): e^-0.4 clips at 0.8
    terms = [
        min(ratio[0, 1], 1.28),
        min(ratio[0, 2], 1.28),
        min(ratio[0, 3], 1.28),
        -max(ratio[1, 1], 0.8),
    ]
    want = -sum(float(t) for t in terms) / 4
    got = policy_gradient_loss(lp, old, adv, mask, 0.2, 0.28)
    torch.testing.assert_close(got, torch.tensor(want))


def test_reference_kl_and_distillation_weights():
    lp = torch.tensor([[0.0, -1.0]])
    ref = torch.tensor([[0.0, -2.0]])
    mask = torch.tensor([[False, True]])
    d = -1.0
    torch.testing.assert_close(
        reference_kl(lp, ref, mask), torch.tensor(float(torch.exp(torch.tensor(d)) - d - 1))
    )
    terms = [
        HintKL("tool_not_found", torch.tensor([1.0, 3.0])),
        HintKL("style", torch.tensor([4.0])),
    ]
    got = distillation_loss(terms, {"tool_not_found": 0.5, "style": 0.25}, n_trajectories=2)
    torch.testing.assert_close(got, torch.tensor((0.5 * 2.0 + 0.25 * 4.0) / 2))


def test_token_logprobs():
    logits = torch.randn(2, 5, 7)
    tokens = torch.randint(0, 7, (2, 5))
    got = token_logprobs(logits, tokens)
    assert got[:, 0].eq(0).all()
    want = torch.log_softmax(logits, -1)[0, 2, tokens[0, 3]]
    torch.testing.assert_close(got[0, 3], want)


def test_update_with_bad_input_drops_it_and_trains_the_rest():
    clean = Trajectory.from_dict(json.loads((DATA / "tool_not_found.json").read_text()))
    failed = Trajectory(clean.messages, clean.tools, reward=0.0)
    unfit = Trajectory([{"role": "user", "content": "caf\u00e9 is not ASCII"}], reward=1.0)
    hints = [
        detect_all(clean, [d() for d in DETECTORS.values()]),
        [Hint(1, "Note: a hint at a user turn", "tool_not_found", "test")],
        [],
    ]
    torch.manual_seed(0)
    policy = BytePolicy(
        ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64, max_seq_len=512).config()
    )
    before = [p.detach().clone() for p in policy.parameters()]
    metrics = rl_update(
        NativePolicy(policy),
        muon_optimizer(policy, 0.01),
        ByteChat(),
        [clean, failed, unfit],
        [0, 0, 1],
        hints,
        StepSettings(weights={"tool_not_found": 1.0}, modes={"tool_not_found": "kl"}),
        retokenize=True,
    )
    assert any("trajectory 2 dropped" in e and "ascii" in e for e in metrics["errors"])
    assert any(
        "trajectory 1: hint dropped" in e and "'user' message" in e for e in metrics["errors"]
    )
    assert metrics["hints_used"] == 1 and metrics["kl/tool_not_found"] > 0
    assert 0 < metrics["frac_distilled"] < 1
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters()))


def _one_hint_step():
    """`step(**settings)`: one update (lr 0, so repeatable) of a fixed tiny policy on the
    tool-not-found trajectory and its one hint, with λ = 1 for that hint."""
    traj = Trajectory.from_dict(json.loads((DATA / "tool_not_found.json").read_text()))
    hints = [detect_all(traj, [d() for d in DETECTORS.values()])]
    torch.manual_seed(0)
    policy = BytePolicy(
        ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64, max_seq_len=512).config()
    )
    opt = muon_optimizer(policy, 0.0)

    def step(**settings) -> dict:
        weights = {"tool_not_found": 1.0}
        return rl_update(
            NativePolicy(policy),
            opt,
            ByteChat(),
            [traj],
            [0],
            hints,
            StepSettings(weights=weights, modes={"tool_not_found": "kl"}, **settings),
            retokenize=True,
        )

    return step


def test_gating_drops_hints_whose_teacher_does_not_disagree_with_the_turn():
    step = _one_hint_step()
    ungated = step()
    gated = step(gate=True, gate_margin=ungated["teacher_gap"] + 1e-3)
    assert ungated["hints_used"] == 1 and gated["hints_used"] == 0
    assert gated["frac_distilled"] == 0 and gated["teacher_gap"] == pytest.approx(
        ungated["teacher_gap"]
    )


def test_truncation_distills_the_turn_only_up_to_where_it_leaves_the_teachers_path():
    step = _one_hint_step()
    whole, cut = step(), step(truncate=True)
    assert whole["hints_used"] == cut["hints_used"] == 1
    assert 0 < cut["frac_distilled"] < whole["frac_distilled"]


def test_linear_lambda_schedule_falls_toward_zero_over_the_steps():
    settings = StepSettings(weights={"tool_not_found": 0.5, "invalid_arguments": 2.0})
    assert scheduled(settings, 3, 10) is settings  # constant
    linear = replace(settings, lambda_schedule="linear")
    assert scheduled(linear, 0, 4).weights == {"tool_not_found": 0.5, "invalid_arguments": 2.0}
    assert scheduled(linear, 3, 4).weights == {"tool_not_found": 0.125, "invalid_arguments": 0.5}
    with pytest.raises(ValueError, match="lambda_schedule must be 'constant' or 'linear'"):
        scheduled(replace(settings, lambda_schedule="cosine"), 0, 4)
