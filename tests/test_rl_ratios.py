"""Ratios against the sampler: with stale sampler log-probs that push ratios outside
[1−ε_low, 1+ε_high], the clipped surrogate's gradient equals a hand-computed one, and the
truncated-importance-sampling cap binds (truncate and mask); through `rl_update` the same
holds on a real policy, micro-batches give the batch's gradient, and minibatches/passes take
one optimizer step each."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
import torch
from test_token_exactness import ToolChat

from etude.recipes.toolgrid.policy import BytePolicy, freeze_all_but_last_layers
from etude.recipes.toolgrid.train import ModelSettings, RLSettings, rl_optimizer
from etude.rl.loss import policy_gradient_loss, token_logprobs
from etude.rl.policy import NativePolicy
from etude.rl.trajectory import ByteChat, Sample, Trajectory, sample_of, tokenize, with_sample
from etude.rl.update import StepSettings, rl_update
from etude.serving.native import rollout

EPS_LOW, EPS_HIGH, CAP = 0.2, 0.28, 2.0
# ratio ρ and advantage A per token, and −∂(Σ surrogate)/∂log π by hand:
#   A > 0: 0 when ρ > 1+ε_high (clipped), else ρ·A
#   A < 0: 0 when ρ < 1−ε_low (clipped), else min(ρ, C)·A ("truncate"; "mask": 0 when ρ > C)
CASES = [  # (ρ, A, no cap, truncate, mask)
    (0.5, 1.0, 0.5, 0.5, 0.5),
    (1.1, 1.0, 1.1, 1.1, 1.1),
    (1.5, 1.0, 0.0, 0.0, 0.0),  # clipped above
    (0.5, -1.0, 0.0, 0.0, 0.0),  # clipped below
    (0.9, -1.0, -0.9, -0.9, -0.9),
    (3.0, -1.0, -3.0, -2.0, 0.0),  # the cap binds
]


def _gradient(is_cap, is_mode="truncate"):
    ratio = torch.tensor([[c[0] for c in CASES]], dtype=torch.float64)
    adv = torch.tensor([c[1] for c in CASES], dtype=torch.float64)
    lp = torch.full_like(ratio, -1.0, requires_grad=True)
    old = lp.detach() - ratio.log()
    # one row per token, so each gets its own advantage
    loss = policy_gradient_loss(
        lp.T,
        old.T,
        adv,
        torch.ones_like(lp.T),
        EPS_LOW,
        EPS_HIGH,
        is_cap=is_cap,
        is_mode=is_mode,
    )
    loss.backward()
    return lp.grad[0] * len(CASES)  # undo the token mean


@pytest.mark.parametrize(
    ("is_cap", "mode", "column"), [(None, "truncate", 2), (CAP, "truncate", 3), (CAP, "mask", 4)]
)
def test_clipped_surrogate_gradient_equals_the_hand_computed_one(is_cap, mode, column):
    want = -torch.tensor([c[column] for c in CASES], dtype=torch.float64)
    torch.testing.assert_close(_gradient(is_cap, mode), want, rtol=0, atol=1e-12)


class GradientRecorder(torch.optim.Optimizer):
    """Records each step's gradients; changes nothing."""

    def __init__(self, params):
        super().__init__(params, {})
        self.steps: list[list[torch.Tensor]] = []

    def step(self, closure=None):
        self.steps.append(
            [p.grad.clone() for g in self.param_groups for p in g["params"] if p.grad is not None]
        )


def _batch(policy):
    """Two sampled ToolChat trajectories (rewards 1, 0: advantages ±0.5) whose sampler
    log-probs are made stale: shifted by ±0.6 nats, alternating, so ratios leave the clip
    range on both sides."""
    tok, gen = ByteChat(), torch.Generator().manual_seed(3)
    trajectories = []
    for seed, reward in ((0, 1.0), (1, 0.0)):
        env = ToolChat(seed)
        rollout(policy, tok, env, gen, max_turn_tokens=8)
        messages = []
        for m in env.messages:
            s = sample_of(m)
            if s is not None:
                stale = [lp + (0.6 if k % 2 else -0.6) for k, lp in enumerate(s.logprobs)]
                m = with_sample(m, Sample(s.ids, tuple(stale), s.finish))
            messages.append(m)
        trajectories.append(Trajectory(messages, reward=reward))
    return tok, trajectories


def _policy():
    torch.manual_seed(0)
    policy = BytePolicy(
        ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64, max_seq_len=512).config()
    )
    policy.bias[ord(ByteChat.END)] = 3.0
    return policy


def test_update_gradient_with_stale_logprobs_equals_the_hand_computed_one():
    policy = _policy()
    tok, trajectories = _batch(policy)
    settings = StepSettings(clip_low=EPS_LOW, clip_high=EPS_HIGH, is_cap=1.5)
    recorder = GradientRecorder(policy.parameters())
    metrics = rl_update(
        NativePolicy(policy), recorder, tok, trajectories, [0, 0], [[], []], settings
    )
    assert metrics["ratio_max"] > 1 + EPS_HIGH and metrics["ratio_min"] < 1 - EPS_LOW
    assert 0 < metrics["clip_frac"] < 1 and 0 < metrics["is_capped_frac"] < 1
    assert metrics["logprob_gap_mean"] == pytest.approx(0.6, abs=1e-4)

    # by hand: −Σ_t coef_t · log π(t) / N, coef from the rules of CASES
    policy.zero_grad()
    total, n = 0.0, 0
    for traj, adv in zip(trajectories, (0.5, -0.5)):
        tt = tokenize(traj.messages, tok)
        lp = token_logprobs(policy(tt.tokens[None]), tt.tokens[None])[0]
        ratio = torch.exp(lp.detach() - tt.sampler_logprobs)
        if adv > 0:
            coef = torch.where(ratio > 1 + EPS_HIGH, 0.0, ratio * adv)
        else:
            coef = torch.where(ratio < 1 - EPS_LOW, 0.0, ratio.clamp(max=1.5) * adv)
        total = total - (coef * lp)[tt.trainable].sum()
        n += int(tt.trainable.sum())
    (total / n).backward()
    want = [p.grad for p in policy.parameters() if p.grad is not None]
    (got,) = recorder.steps
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-6)


def test_micro_batches_minibatches_and_passes():
    policy = _policy()
    tok, trajectories = _batch(policy)
    trajectories = trajectories + [copy.deepcopy(t) for t in trajectories]
    groups = [0, 0, 1, 1]
    settings = StepSettings(weights={}, is_cap=2.0)

    whole, micro = GradientRecorder(policy.parameters()), GradientRecorder(policy.parameters())
    rl_update(NativePolicy(policy), whole, tok, trajectories, groups, [[]] * 4, settings)
    rl_update(
        NativePolicy(policy),
        micro,
        tok,
        trajectories,
        groups,
        [[]] * 4,
        replace(settings, micro_batch=1),
    )
    for a, b in zip(whole.steps[0], micro.steps[0]):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)

    steps = GradientRecorder(policy.parameters())
    rl_update(
        NativePolicy(policy),
        steps,
        tok,
        trajectories,
        groups,
        [[]] * 4,
        replace(settings, minibatches=2, passes=3),
    )
    assert len(steps.steps) == 6
    with pytest.raises(ValueError, match="is_mode must be one of"):
        StepSettings(is_mode="clip")


def test_training_only_the_last_layer_gives_the_full_updates_gradient_on_it():
    """`[rl] train_layers`: the trained parameters get exactly the gradient a full-model
    update gives them, the frozen ones get none, and an optimizer step leaves them
    bit-identical."""
    policy = _policy()
    tok, trajectories = _batch(policy)
    settings = StepSettings(weights={}, is_cap=2.0)
    full = GradientRecorder(policy.parameters())
    rl_update(NativePolicy(policy), full, tok, trajectories, [0, 0], [[], []], settings)
    names = [n for n, _ in policy.named_parameters()]
    full_grads = dict(zip(names, full.steps[0], strict=True))

    policy.zero_grad()
    freeze_all_but_last_layers(policy, 1)
    trained = [n for n, p in policy.named_parameters() if p.requires_grad]
    assert trained and all(n.startswith(("model.layers.1.", "model.norm.")) for n in trained)
    part = GradientRecorder([p for p in policy.parameters() if p.requires_grad])
    rl_update(NativePolicy(policy), part, tok, trajectories, [0, 0], [[], []], settings)
    assert len(part.steps[0]) == len(trained)
    for name, grad in zip(trained, part.steps[0], strict=True):
        torch.testing.assert_close(grad, full_grads[name], rtol=1e-5, atol=1e-7)
    assert all(p.grad is None for p in policy.parameters() if not p.requires_grad)

    before = {n: p.detach().clone() for n, p in policy.named_parameters()}
    opt = rl_optimizer(policy, RLSettings(optimizer="adamw", lr=1e-2))
    rl_update(NativePolicy(policy), opt, tok, trajectories, [0, 0], [[], []], settings)
    for name, p in policy.named_parameters():
        assert torch.equal(p, before[name]) != (name in trained), name
    with pytest.raises(ValueError, match="train_layers is 3; the policy has 2 layers"):
        freeze_all_but_last_layers(policy, 3)
