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


def _update_against_hand_written(settings: StepSettings, hand_loss) -> None:
    """One `rl_update` under `settings` on a two-trajectory batch (rewards 1, 0: advantages
    ±0.5) has the gradient of `hand_loss(sums, lengths)`: sums[i] = Σ log π over trajectory
    i's trainable tokens (fresh sampler log-probs, so ratio 1), lengths[i] their count."""
    policy = _policy()
    tok, trajectories, _ = _hinted_batch(policy)
    recorder = GradientRecorder(policy.parameters())
    rl_update(NativePolicy(policy), recorder, tok, trajectories, [0, 0], [[], []], settings)

    policy.zero_grad()
    sums, lengths = [], []
    for traj in trajectories:
        tt = tokenize(traj.messages, tok)
        lp = token_logprobs(policy(tt.tokens[None]), tt.tokens[None])[0]
        sums.append(lp[tt.trainable].sum())
        lengths.append(int(tt.trainable.sum()))
    assert lengths[0] != lengths[1]  # else token and sequence aggregation would agree
    hand_loss(sums, lengths).backward()
    want = [p.grad for p in policy.parameters() if p.grad is not None]
    (got,) = recorder.steps
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("aggregation", ["token", "sequence"])
def test_the_policy_gradient_term_aggregates_as_configured(aggregation):
    def hand_loss(sums, lengths):
        terms = [0.5 * sums[0], -0.5 * sums[1]]
        if aggregation == "sequence":
            return -sum(t / n for t, n in zip(terms, lengths)) / 2
        return -sum(terms) / sum(lengths)

    _update_against_hand_written(StepSettings(aggregation=aggregation), hand_loss)


@pytest.mark.parametrize("negative_weight", [0.0, 0.25])
def test_negative_advantages_are_scaled_by_the_negative_weight(negative_weight):
    def hand_loss(sums, lengths):  # token aggregation
        return -(0.5 * sums[0] - 0.5 * negative_weight * sums[1]) / sum(lengths)

    _update_against_hand_written(StepSettings(negative_weight=negative_weight), hand_loss)


def test_a_negative_weight_below_zero_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"negative_weight must be >= 0, got -0.5"):
        StepSettings(negative_weight=-0.5)


def test_an_unknown_aggregation_is_an_error_naming_it():
    with pytest.raises(
        ValueError, match=r"aggregation must be one of \('token', 'sequence'\), got 'mean'"
    ):
        StepSettings(aggregation="mean")
