"""Feedback modes (`etude.rl.feedback_modes`): each mode's gradient on hand-built tensors
against hand-computed values, the config keys that select them per hint category, and
`rl_update` honouring each mode on a real policy (its gradient equals a loss written out by
hand from the student's and the full teacher forward's logits)."""

from __future__ import annotations

import math

import pytest
import torch
from test_rl_ratios import GradientRecorder, _policy
from test_token_exactness import ToolChat

from etude.config import ConfigError
from etude.recipes.toolgrid.train import parse_config
from etude.rl.distill import estimate
from etude.rl.feedback import Hint
from etude.rl.feedback_modes import (
    DEFAULT_MODE,
    advantage_weights,
    endorsement_gate,
    gated_distillation,
    sampled_gap,
)
from etude.rl.loss import policy_gradient_loss, token_logprobs
from etude.rl.policy import NativePolicy
from etude.rl.teacher import build_query, full_teacher_logits
from etude.rl.trajectory import ByteChat, Trajectory, tokenize
from etude.rl.update import StepSettings, rl_update
from etude.serving.native import rollout

# two-token vocabulary: student uniform, teacher 3:1 for token 0
STUDENT = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
TEACHER = torch.tensor([[math.log(3.0), 0.0]], dtype=torch.float64)
KL = 0.5 * math.log(4 / 3)  # KL(s ‖ t) = ½ log(½ / ¾) + ½ log(½ / ¼)
# ∂KL/∂z_i = p_s,i (log p_s,i − log p_t,i − KL)
KL_GRAD = [0.5 * (math.log(2 / 3) - KL), 0.5 * (math.log(2.0) - KL)]


def _student():
    return STUDENT.clone().requires_grad_(True)


def test_kl_mode_gradient_is_the_hand_computed_reverse_kl_gradient():
    z = _student()
    value = estimate("reverse_kl", z, TEACHER, torch.tensor([0]))
    assert value.item() == pytest.approx(KL, abs=1e-6)  # estimators run in fp32
    value.sum().backward()
    torch.testing.assert_close(
        z.grad[0], torch.tensor(KL_GRAD, dtype=torch.float64), rtol=0, atol=1e-6
    )


@pytest.mark.parametrize(("token", "gate"), [(0, 0.6), (1, 1 / 3)])
def test_gated_mode_scales_the_kl_gradient_by_the_detached_gate(token, gate):
    # g(token 0) = log ¾ − log ½ = log 1.5: σ = 1.5 / 2.5; g(token 1) = log ½: σ = 1/3
    z = _student()
    value = gated_distillation("reverse_kl", z, TEACHER, torch.tensor([token]))
    assert value.item() == pytest.approx(gate * KL, abs=1e-6)
    value.sum().backward()  # the gate carries no gradient: exactly gate · ∇KL
    want = torch.tensor([gate * g for g in KL_GRAD], dtype=torch.float64)
    torch.testing.assert_close(z.grad[0], want, rtol=0, atol=1e-6)
    # a rejected token (g < 0) is damped toward 0, not pushed away from; τ sharpens it
    assert endorsement_gate(torch.tensor([-4.0]), 0.5).item() == pytest.approx(
        1 / (1 + math.exp(8))
    )


@pytest.mark.parametrize(
    ("advantage", "weights"),
    # gaps log 2, 0, 5 and −5, bound 2: A > 0 → e^g clamped; A < 0 → e^−g clamped
    [(1.0, [2.0, 1.0, 2.0, 0.5]), (-1.0, [0.5, 1.0, 0.5, 2.0])],
)
def test_advantage_weights_in_the_clipped_surrogate_give_the_hand_computed_gradient(
    advantage, weights
):
    gap = torch.tensor([math.log(2.0), 0.0, 5.0, -5.0], dtype=torch.float64)
    w = advantage_weights(gap, advantage, bound=2.0)
    torch.testing.assert_close(w, torch.tensor(weights, dtype=torch.float64))
    # ratios 1 (inside the clip range) except the last token: 1.5 (above 1 + 0.28)
    lp = torch.full((1, 4), -1.0, dtype=torch.float64, requires_grad=True)
    old = lp.detach() - torch.tensor([[0.0, 0.0, 0.0, math.log(1.5)]], dtype=torch.float64)
    loss = policy_gradient_loss(
        lp, old, advantage * w[None], torch.ones(1, 4, dtype=torch.float64), 0.2, 0.28
    )
    loss.backward()
    # −∂/∂log π = w·A·ρ / N inside the range; A > 0 and ρ > 1.28: clipped, 0; A < 0, ρ = 1.5:
    # not clipped (min picks ρ·A)
    rho = [1.0, 1.0, 1.0, 1.5]
    want = [-wi * advantage * r / 4 for wi, r in zip(weights, rho)]
    if advantage > 0:
        want[3] = 0.0
    torch.testing.assert_close(lp.grad[0], torch.tensor(want, dtype=torch.float64))
    assert advantage_weights(gap, 0.0).eq(1).all()
    with pytest.raises(ValueError, match="bound must be >= 1"):
        advantage_weights(gap, 1.0, bound=0.5)


def test_the_gap_is_detached_and_signed_toward_the_teacher():
    z = _student()
    g = sampled_gap(z, TEACHER, torch.tensor([0]))
    assert not g.requires_grad
    assert g.item() == pytest.approx(math.log(1.5), abs=1e-6)


def _toolgrid(loss_modes: str) -> dict:
    import tomllib

    return tomllib.loads(
        'env = "toolgrid"\n[loss.weights]\ntool_not_found = 0.5\n[loss.modes]\n' + loss_modes
    )


def test_modes_are_chosen_per_hint_category_in_the_config():
    cfg = parse_config(
        _toolgrid('tool_not_found = "advantage_weight"\ninvalid_arguments = "gated"\n')
    )
    assert cfg.loss.mode("tool_not_found") == "advantage_weight"
    assert cfg.loss.mode("invalid_arguments") == "gated"
    assert cfg.loss.mode("repeated_call") == DEFAULT_MODE == "advantage_weight"  # the default
    assert cfg.loss.uses("tool_not_found") and not cfg.loss.uses("invalid_arguments")
    assert not cfg.loss.uses("repeated_call")  # neither λ nor mode: no teacher pass
    with pytest.raises(ConfigError, match=r"loss\.modes\.tool_not_found") as err:
        parse_config(_toolgrid('tool_not_found = "advantage"\n'))
    assert "advantage_weight" in str(err.value)  # the known names
    with pytest.raises(ValueError, match=r"modes\.style: unknown feedback mode 'x'"):
        StepSettings(modes={"style": "x"})


def test_the_coding_loop_config_takes_modes_and_refuses_unknown_ones():
    import tomllib
    from pathlib import Path

    from etude.recipes.coding.config import parse_config as parse_coding

    data = tomllib.loads(Path("configs/coding-smol.toml").read_text())
    assert parse_coding(data).loss.modes == {"monitor": "kl"}
    data["loss"]["modes"]["judge"] = "distill"
    with pytest.raises(ConfigError, match=r"loss\.modes\.judge"):
        parse_coding(data)


def _hinted_batch(policy):
    """Two sampled trajectories (rewards 1, 0: advantages ±0.5) with a hint at the first
    assistant turn of each, and the first trajectory's second turn unhinted."""
    tok, gen = ByteChat(), torch.Generator().manual_seed(5)
    trajectories = []
    for seed, reward in ((0, 1.0), (1, 0.0)):
        env = ToolChat(seed)
        rollout(policy, tok, env, gen, max_turn_tokens=8)
        trajectories.append(Trajectory(env.messages, reward=reward))
    hint = Hint(2, "Note: call add with a and b.", "tool_not_found", "test")
    return tok, trajectories, [[hint], [hint]]


@pytest.mark.parametrize("mode", ["kl", "advantage_weight", "gated"])
def test_rl_update_honours_each_mode(mode):
    policy = _policy()
    tok, trajectories, hints = _hinted_batch(policy)
    lam = 0.0 if mode == "advantage_weight" else 0.7
    settings = StepSettings(
        weights={"tool_not_found": lam}, modes={"tool_not_found": mode}, weight_bound=1.5
    )
    recorder = GradientRecorder(policy.parameters())
    metrics = rl_update(NativePolicy(policy), recorder, tok, trajectories, [0, 0], hints, settings)
    assert metrics["hints_used"] == 2
    assert ("credit/tool_not_found" in metrics) == (mode == "advantage_weight")

    # by hand: the fresh sampler log-probs give ratio 1, so −Σ A·w·log π / N plus λ·terms / 2
    policy.zero_grad()
    rl, distill, n = 0.0, 0.0, 0
    for traj, adv, (hint,) in zip(trajectories, (0.5, -0.5), hints):
        tt = tokenize(traj.messages, tok)
        logits = policy(tt.tokens[None])
        lp = token_logprobs(logits, tt.tokens[None])[0]
        q = build_query(traj.messages, tt, tok, hint)
        sel = q.distill_mask.nonzero().squeeze(-1)
        with torch.no_grad():
            teacher = full_teacher_logits(policy, tt.tokens, q)[sel]
        student = logits[0, q.insert_at - 1 + sel]
        x = q.continuation[sel]
        coef = torch.full_like(lp, adv)
        if mode == "advantage_weight":
            coef[q.insert_at + sel] *= advantage_weights(sampled_gap(student, teacher, x), adv, 1.5)
        elif mode == "gated":
            distill = distill + lam * gated_distillation("reverse_kl", student, teacher, x).mean()
        else:
            distill = distill + lam * estimate("reverse_kl", student, teacher, x).mean()
        rl = rl - (coef * lp)[tt.trainable].sum()
        n += int(tt.trainable.sum())
    (rl / n + distill / 2).backward()
    want = [p.grad for p in policy.parameters() if p.grad is not None]
    (got,) = recorder.steps
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-6)


def test_a_category_with_a_lambda_and_no_mode_is_advantage_weighted_by_default():
    policy = _policy()
    tok, trajectories, hints = _hinted_batch(policy)
    arms = {
        "default": StepSettings(weights={"tool_not_found": 0.7}, weight_bound=1.5),
        "explicit": StepSettings(modes={"tool_not_found": "advantage_weight"}, weight_bound=1.5),
        "kl": StepSettings(
            weights={"tool_not_found": 0.7}, modes={"tool_not_found": "kl"}, weight_bound=1.5
        ),
        "unused": StepSettings(weight_bound=1.5),  # neither λ nor mode
    }
    out = {}
    for name, settings in arms.items():
        recorder = GradientRecorder(policy.parameters())
        metrics = rl_update(
            NativePolicy(policy), recorder, tok, trajectories, [0, 0], hints, settings
        )
        out[name] = metrics, recorder.steps[0]
    (default, g_default), (explicit, g_explicit) = out["default"], out["explicit"]
    assert default["hints_used"] == 2 and "credit/tool_not_found" in default
    assert "kl/tool_not_found" not in default and default["distill_loss"] == 0.0
    assert all(torch.equal(a, b) for a, b in zip(g_default, g_explicit))  # the same update
    assert default["credit/tool_not_found"] == explicit["credit/tool_not_found"]
    assert out["kl"][0]["kl/tool_not_found"] > 0  # an explicit "kl" still distills
    assert not all(torch.equal(a, b) for a, b in zip(g_default, out["kl"][1]))
    assert out["unused"][0]["hints_used"] == 0  # no teacher pass for an unconfigured one
