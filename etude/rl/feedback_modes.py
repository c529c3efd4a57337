"""Feedback modes: how a hinted teacher's opinion of a turn enters the RL update. Pure
functions on the tokens of one hinted turn.

- "kl": distillation, λ · mean KL(student ‖ teacher) over the turn's tokens, added to the
  loss (the estimator from `etude.rl.distill`). The seed's method.
- "advantage_weight": credit assignment, no extra loss term. Each token of the turn gets a
  weight w = clamp(exp(sign(A) · g), 1/c, c) on its advantage inside the clipped surrogate,
  with g = log p_teacher(x) − log p_student(x) the detached gap on the sampled token x and A
  the trajectory's advantage. The reward keeps the direction; the teacher only sets how much
  each token moves: in a successful trajectory (A > 0) tokens the hint endorses (g > 0) get
  more credit, in a failed one (A < 0) tokens the hint argues against (g < 0) get more
  blame. The per-token form exp(sign(A)·g) is RLSD's (arXiv 2604.03128); bounding detached
  weights on GRPO advantages, rather than adding a distillation loss, is SGCD's finding
  (arXiv 2606.12634: token-level self-distillation destroyed tool use, bounded advantage
  weights did not). We bound by clamping to [1/c, c], symmetric in log space, so a weight
  never flips a sign and never exceeds c times the plain RL gradient.
- "gated": distillation only where the teacher endorses the sampled token, λ · mean over the
  turn of σ(g / τ) · KL per token, the gate detached (SDAR, arXiv 2605.15155): a token the
  teacher finds more likely than the student (g > 0) is distilled with weight above 1/2, one
  it rejects (g < 0) is damped toward 0 rather than pushed away from.

Shapes: `student_logits`, `teacher_logits` [N, V] for the N tokens of a hinted turn,
`tokens` [N] the sampled tokens they predict; every function returns [N] per-token values.
The teacher is a fixed target: pass it detached.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

from etude.rl.distill import estimate

FeedbackMode = Literal["kl", "advantage_weight", "gated"]
MODES: tuple[str, ...] = ("kl", "advantage_weight", "gated")
# the mode of a hint category that has a λ but no mode of its own. Not "kl": in the ToolGrid
# feedback-modes experiment (docs/textual-feedback.md) KL to the live hinted teacher drove
# every seed to 0 held-out success, advantage weighting did no harm
DEFAULT_MODE: FeedbackMode = "advantage_weight"


def sampled_gap(student_logits: Tensor, teacher_logits: Tensor, tokens: Tensor) -> Tensor:
    """g = log p_teacher(x) − log p_student(x) per sampled token x, detached: positive where
    the hint makes the token more likely (the teacher endorses it). [N]"""
    with torch.no_grad():
        ls = torch.log_softmax(student_logits.float(), -1).gather(-1, tokens[:, None])[:, 0]
        lt = torch.log_softmax(teacher_logits.float(), -1).gather(-1, tokens[:, None])[:, 0]
        return lt - ls


def advantage_weights(gap: Tensor, advantage: float, bound: float = 2.0) -> Tensor:
    """clamp(exp(sign(A) · gap), 1/bound, bound): the per-token factor on the advantage of a
    hinted turn's tokens (see module doc). `gap` [N] from `sampled_gap`; A = 0 gives weights
    1 (and the surrogate gives no gradient anyway). bound must be ≥ 1. [N], no grad."""
    if bound < 1:
        raise ValueError(f"advantage weight bound must be >= 1, got {bound}")
    sign = (advantage > 0) - (advantage < 0)
    return torch.exp(sign * gap.detach()).clamp(1 / bound, bound)


def endorsement_gate(gap: Tensor, temperature: float = 1.0) -> Tensor:
    """σ(gap / τ): near 1 where the teacher endorses the sampled token, 1/2 where it is
    indifferent, near 0 where it rejects it. [N], no grad."""
    if temperature <= 0:
        raise ValueError(f"gate temperature must be > 0, got {temperature}")
    return torch.sigmoid(gap.detach() / temperature)


def gated_distillation(
    estimator: str,
    student_logits: Tensor,
    teacher_logits: Tensor,
    tokens: Tensor,
    *,
    gate_temperature: float = 1.0,
    **estimator_kw,
) -> Tensor:
    """σ(g/τ) · estimator per token: the distillation term of the "gated" mode (average it
    over the turn and weigh it by λ as the "kl" mode's). `estimator_kw` go to
    `distill.estimate`. [N]"""
    gate = endorsement_gate(sampled_gap(student_logits, teacher_logits, tokens), gate_temperature)
    return gate * estimate(estimator, student_logits, teacher_logits, tokens, **estimator_kw)


def check_modes(modes: dict[str, str], where: str = "modes") -> None:
    """Raise ValueError naming the key of the first unknown mode name."""
    for category, mode in modes.items():
        if mode not in MODES:
            raise ValueError(
                f"{where}.{category}: unknown feedback mode {mode!r}; known: {', '.join(MODES)}"
            )
