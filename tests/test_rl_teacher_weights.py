"""Teacher weights (`etude.rl.teacher_weights`): a frozen teacher stays bit-identical across
updates until it is refreshed, the EMA is the hand-computed blend, refresh-on-no-drop
refreshes only when the reward did not drop, and a separate teacher with the policy's own
weights gives `rl_update` exactly the live teacher's gradient (native and Hugging Face
policies), and one with other weights another."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from test_rl_feedback_modes import _hinted_batch
from test_rl_ratios import GradientRecorder, _policy
from torch import nn

from etude.config import ConfigError
from etude.recipes.toolgrid.train import parse_config
from etude.rl.policy import NativePolicy
from etude.rl.teacher_weights import TeacherSettings, TeacherWeights, ema_update_
from etude.rl.update import StepSettings, rl_update

SETTINGS = StepSettings(weights={"tool_not_found": 0.5}, modes={"tool_not_found": "gated"})


def _state(module):
    return {k: v.clone() for k, v in module.state_dict().items()}


def _identical(a: dict, b: dict) -> bool:
    return all(torch.equal(a[k], b[k]) for k in a)


def test_frozen_teacher_is_bit_identical_until_refreshed_then_equals_the_policy():
    policy = _policy()
    tok, trajectories, hints = _hinted_batch(policy)
    weights = TeacherWeights(TeacherSettings(kind="frozen", every=3), policy)
    snapshot = _state(weights.module)
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-2)
    refreshed = []
    for _ in range(4):
        rl_update(
            NativePolicy(policy),
            opt,
            tok,
            trajectories,
            [0, 0],
            hints,
            SETTINGS,
            teacher=NativePolicy(weights.module),
        )
        refreshed.append(weights.after_update(policy))
        if len(refreshed) < 3:
            assert _identical(_state(weights.module), snapshot)
            assert not _identical(_state(policy), snapshot)  # the policy did move
        if len(refreshed) == 3:
            assert _identical(_state(weights.module), _state(policy))
            snapshot = _state(weights.module)
    assert refreshed == [False, False, True, False]
    assert _identical(_state(weights.module), snapshot)
    assert not any(p.requires_grad for p in weights.module.parameters())


def test_a_separate_teacher_with_the_policys_weights_gives_the_live_gradient():
    policy = _policy()
    tok, trajectories, hints = _hinted_batch(policy)
    frozen = TeacherWeights(TeacherSettings(kind="frozen"), policy).module
    live, separate = GradientRecorder(policy.parameters()), GradientRecorder(policy.parameters())
    args = (tok, trajectories, [0, 0], hints, SETTINGS)
    rl_update(NativePolicy(policy), live, *args)
    rl_update(NativePolicy(policy), separate, *args, teacher=NativePolicy(frozen))
    for a, b in zip(live.steps[0], separate.steps[0]):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)
    # and the update does use the teacher's own weights: other weights, another gradient
    with torch.no_grad():
        for p in frozen.parameters():
            p.mul_(1.5)
    other = GradientRecorder(policy.parameters())
    rl_update(NativePolicy(policy), other, *args, teacher=NativePolicy(frozen))
    assert any(not torch.allclose(a, b) for a, b in zip(live.steps[0], other.steps[0]))


def test_ema_is_the_hand_computed_blend():
    student, teacher = nn.Linear(2, 1), nn.Linear(2, 1)
    with torch.no_grad():
        teacher.weight.fill_(1.0), teacher.bias.fill_(-2.0)
        student.weight.fill_(3.0), student.bias.fill_(2.0)
    ema_update_(teacher, student, decay=0.9)  # 0.9·1 + 0.1·3 = 1.2; 0.9·−2 + 0.1·2 = −1.6
    torch.testing.assert_close(teacher.weight, torch.full((1, 2), 1.2))
    torch.testing.assert_close(teacher.bias, torch.tensor([-1.6]))
    weights = TeacherWeights(TeacherSettings(kind="ema", ema_decay=0.5), student)
    with torch.no_grad():
        student.weight.fill_(5.0)
    assert weights.after_update(student)
    torch.testing.assert_close(weights.module.weight, torch.full((1, 2), 4.0))  # ½·3 + ½·5


def test_refresh_on_no_reward_drop_refreshes_only_when_the_reward_did_not_drop():
    policy = nn.Linear(1, 1)
    settings = TeacherSettings(kind="frozen", refresh="no_reward_drop", every=2, tolerance=0.05)
    weights = TeacherWeights(settings, policy, reward=0.5)
    rewards = [0.9, 0.6, 0.1, 0.42, 0.0, 0.5, 0.3, 0.44]  # checks at updates 2, 4, 6, 8
    refreshed = []
    for k, r in enumerate(rewards):
        with torch.no_grad():
            policy.weight.fill_(float(k))
        refreshed.append(weights.after_update(policy, reward=r))
    # update 2: 0.6 ≥ 0.5 refresh; 4: 0.42 < 0.6 − 0.05 keep; 6: 0.5 ≥ 0.55? no; 8: 0.44 no
    assert refreshed == [False, True, False, False, False, False, False, False]
    assert weights.module.weight.item() == 1.0 and weights.reward_at_refresh == 0.6
    every_update = TeacherWeights(replace(settings, every=1), policy, reward=0.5)
    with pytest.raises(ValueError, match="needs the reward"):
        every_update.after_update(policy)


def test_teacher_settings_in_the_toolgrid_config():
    cfg = parse_config({"env": "toolgrid", "teacher": {"kind": "ema", "ema_decay": 0.95}})
    assert cfg.teacher.kind == "ema" and cfg.teacher.ema_decay == 0.95
    with pytest.raises(ConfigError, match=r"teacher\.kind"):
        parse_config({"env": "toolgrid", "teacher": {"kind": "snapshot"}})
    with pytest.raises(ConfigError, match="ema_decay"):
        parse_config({"env": "toolgrid", "teacher": {"kind": "ema", "ema_decay": 1.0}})


@pytest.mark.filterwarnings("ignore:.*re-tokenized:UserWarning")  # hand-written turns
@pytest.mark.parametrize("mode", ["advantage_weight", "gated"])
def test_a_separate_hf_teacher_with_the_policys_weights_gives_the_live_gradient(
    smollm2_tokenizer, mode
):
    from test_coding_judge import MESSAGES
    from test_coding_resume import tiny_model

    from etude.rl.feedback import Hint
    from etude.rl.policy import HFPolicy
    from etude.rl.trajectory import HFChat, Trajectory

    model = tiny_model(smollm2_tokenizer)
    frozen = TeacherWeights(TeacherSettings(kind="frozen"), model).module
    chat = HFChat(smollm2_tokenizer)
    trajectories = [
        Trajectory(MESSAGES, reward=0.0),
        Trajectory([*MESSAGES[:2], {"role": "assistant", "content": "Hi."}], reward=1.0),
    ]
    hint = Hint(2, "Note: open_file does not exist. Available tools: read_file.", "x", "test")
    settings = StepSettings(weights={"x": 0.5}, modes={"x": mode})
    live, separate = GradientRecorder(model.parameters()), GradientRecorder(model.parameters())
    args = (chat, trajectories, [0, 0], [[hint], []], settings)
    m = rl_update(HFPolicy(model), live, *args, retokenize=True)
    rl_update(HFPolicy(model), separate, *args, retokenize=True, teacher=HFPolicy(frozen))
    assert m["hints_used"] == 1, m["errors"]
    for a, b in zip(live.steps[0], separate.steps[0]):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)
