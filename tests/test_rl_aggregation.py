"""How the policy-gradient term weighs its tokens and trajectories: its aggregation
(`StepSettings.aggregation`: "sequence" averages each trajectory's tokens before the
trajectories, "token" weighs every token the same) and the factor on negative advantages
(`StepSettings.negative_weight`); each against the loss written out by hand on a real
policy."""

from __future__ import annotations

import pytest
import torch
from test_rl_feedback_modes import _hinted_batch
from test_rl_ratios import GradientRecorder, _policy

from etude.rl.loss import token_logprobs
from etude.rl.policy import NativePolicy
from etude.rl.trajectory import tokenize
from etude.rl.update import StepSettings, rl_update


@pytest.mark.parametrize("aggregation", ["token", "sequence"])
def test_the_policy_gradient_term_aggregates_as_configured(aggregation):
    policy = _policy()
    tok, trajectories, _ = _hinted_batch(policy)  # rewards 1, 0: advantages ±0.5
    recorder = GradientRecorder(policy.parameters())
    settings = StepSettings(aggregation=aggregation)
    rl_update(NativePolicy(policy), recorder, tok, trajectories, [0, 0], [[], []], settings)

    policy.zero_grad()  # by hand: fresh sampler log-probs, ratio 1
    sums, lengths = [], []
    for traj, adv in zip(trajectories, (0.5, -0.5)):
        tt = tokenize(traj.messages, tok)
        lp = token_logprobs(policy(tt.tokens[None]), tt.tokens[None])[0]
        sums.append(adv * lp[tt.trainable].sum())
        lengths.append(int(tt.trainable.sum()))
    assert lengths[0] != lengths[1]  # else the two aggregations would agree
    if aggregation == "sequence":
        loss = -sum(s / n for s, n in zip(sums, lengths)) / 2
    else:
        loss = -sum(sums) / sum(lengths)
    loss.backward()
    want = [p.grad for p in policy.parameters() if p.grad is not None]
    (got,) = recorder.steps
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("negative_weight", [0.0, 0.25])
def test_negative_advantages_are_scaled_by_the_negative_weight(negative_weight):
    policy = _policy()
    tok, trajectories, _ = _hinted_batch(policy)  # rewards 1, 0: advantages ±0.5
    recorder = GradientRecorder(policy.parameters())
    settings = StepSettings(negative_weight=negative_weight)
    rl_update(NativePolicy(policy), recorder, tok, trajectories, [0, 0], [[], []], settings)

    policy.zero_grad()  # by hand: token aggregation, fresh sampler log-probs, ratio 1
    sums, n_tokens = [], 0
    for traj, adv in zip(trajectories, (0.5, -0.5 * negative_weight)):
        tt = tokenize(traj.messages, tok)
        lp = token_logprobs(policy(tt.tokens[None]), tt.tokens[None])[0]
        sums.append(adv * lp[tt.trainable].sum())
        n_tokens += int(tt.trainable.sum())
    (-sum(sums) / n_tokens).backward()
    want = [p.grad for p in policy.parameters() if p.grad is not None]
    (got,) = recorder.steps
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-6)


def test_a_negative_weight_below_zero_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"negative_weight must be >= 0, got -0.5"):
        StepSettings(negative_weight=-0.5)


def test_an_unknown_aggregation_is_an_error_naming_it():
    with pytest.raises(
        ValueError, match=r"aggregation must be one of \('token', 'sequence'\), got 'mean'"
    ):
        StepSettings(aggregation="mean")
