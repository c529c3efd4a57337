"""Distillation estimators: how far the student's next-token distribution is from the
teacher's, per token. Pure functions.

Shapes: `student_logits`, `teacher_logits` are [N, V] (one row per distilled token), and
every estimator returns [N] per-token values to be averaged over a hinted turn's tokens.
The teacher is a fixed target: pass it detached. `teacher_temperature` divides the teacher's
logits before its softmax.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

ESTIMATORS = ("reverse_kl", "forward_kl", "jsd", "topk_reverse_kl", "sampled")


def _log_probs(student_logits: Tensor, teacher_logits: Tensor, teacher_temperature: float):
    if teacher_temperature <= 0:
        raise ValueError(f"teacher_temperature must be > 0, got {teacher_temperature}")
    return (
        F.log_softmax(student_logits.float(), dim=-1),
        F.log_softmax(teacher_logits.float() / teacher_temperature, dim=-1),
    )


def reverse_kl(
    student_logits: Tensor, teacher_logits: Tensor, teacher_temperature: float = 1.0
) -> Tensor:
    """KL(student ‖ teacher) = Σ_v p_s (log p_s − log p_t), over the full vocabulary. [N]"""
    ls, lt = _log_probs(student_logits, teacher_logits, teacher_temperature)
    return (ls.exp() * (ls - lt)).sum(-1)


def forward_kl(
    student_logits: Tensor, teacher_logits: Tensor, teacher_temperature: float = 1.0
) -> Tensor:
    """KL(teacher ‖ student) = Σ_v p_t (log p_t − log p_s). [N]"""
    ls, lt = _log_probs(student_logits, teacher_logits, teacher_temperature)
    return (lt.exp() * (lt - ls)).sum(-1)


def generalized_jsd(
    student_logits: Tensor,
    teacher_logits: Tensor,
    beta: float = 0.5,
    teacher_temperature: float = 1.0,
) -> Tensor:
    """Generalized Jensen–Shannon divergence (GKD): with m = β p_t + (1−β) p_s,
    β·KL(p_t ‖ m) + (1−β)·KL(p_s ‖ m), for 0 < β < 1. [N]"""
    if not 0 < beta < 1:
        raise ValueError(f"jsd beta must be in (0, 1), got {beta}; use forward_kl or reverse_kl")
    ls, lt = _log_probs(student_logits, teacher_logits, teacher_temperature)
    lm = torch.logsumexp(
        torch.stack([lt + torch.log(torch.tensor(beta)), ls + torch.log(torch.tensor(1 - beta))]),
        dim=0,
    )
    return beta * (lt.exp() * (lt - lm)).sum(-1) + (1 - beta) * (ls.exp() * (ls - lm)).sum(-1)


def topk_reverse_kl(
    student_logits: Tensor, teacher_logits: Tensor, k: int = 16, teacher_temperature: float = 1.0
) -> Tensor:
    """Reverse KL over the student's top-k tokens plus one tail bucket holding the rest of
    each distribution's mass: a (k+1)-category KL that costs O(k) per token after the top-k.
    [N]"""
    ls, lt = _log_probs(student_logits, teacher_logits, teacher_temperature)
    k = min(k, ls.shape[-1] - 1)
    idx = ls.topk(k, dim=-1).indices
    ls_k, lt_k = ls.gather(-1, idx), lt.gather(-1, idx)

    def with_tail(lk: Tensor) -> Tensor:
        # log(1 − Σ p) computed stably as log(-expm1(logsumexp))
        tail = torch.log(-torch.expm1(torch.logsumexp(lk, -1).clamp(max=-1e-7)))
        return torch.cat([lk, tail[:, None]], dim=-1)

    ls_b, lt_b = with_tail(ls_k), with_tail(lt_k)
    return (ls_b.exp() * (ls_b - lt_b)).sum(-1)


def sampled_token_kl(
    student_logits: Tensor, teacher_logits: Tensor, tokens: Tensor, teacher_temperature: float = 1.0
) -> Tensor:
    """The sampled-token estimator of reverse KL for tokens [N] drawn from the student:
    value log p_s(x) − log p_t(x) per token; its gradient is the score-function gradient
    (log p_s(x) − log p_t(x))·∇log p_s(x), whose expectation under the student is ∇KL(s‖t).
    [N]"""
    ls, lt = _log_probs(student_logits, teacher_logits, teacher_temperature)
    ls_x = ls.gather(-1, tokens[:, None]).squeeze(-1)
    lt_x = lt.gather(-1, tokens[:, None]).squeeze(-1)
    k1 = (ls_x - lt_x).detach()
    return k1 + k1 * (ls_x - ls_x.detach())


def estimate(
    name: str,
    student_logits: Tensor,
    teacher_logits: Tensor,
    tokens: Tensor,
    *,
    teacher_temperature: float = 1.0,
    beta: float = 0.5,
    k: int = 16,
) -> Tensor:
    """Dispatch to the estimator called `name` (one of ESTIMATORS). [N]"""
    t = teacher_temperature
    if name == "reverse_kl":
        return reverse_kl(student_logits, teacher_logits, t)
    if name == "forward_kl":
        return forward_kl(student_logits, teacher_logits, t)
    if name == "jsd":
        return generalized_jsd(student_logits, teacher_logits, beta, t)
    if name == "topk_reverse_kl":
        return topk_reverse_kl(student_logits, teacher_logits, k, t)
    if name == "sampled":
        return sampled_token_kl(student_logits, teacher_logits, tokens, t)
    raise ValueError(f"unknown KL estimator {name!r}; known: {', '.join(ESTIMATORS)}")


def teacher_advantage(student_logits: Tensor, teacher_logits: Tensor, tokens: Tensor) -> Tensor:
    """Mean over a turn's tokens [N] of log p_s(x) − log p_t(x) for the sampled tokens:
    positive when the teacher (with the hint) finds what the student did less likely, i.e.
    the hint argues against the sampled turn. Used to gate hints (scalar, no grad)."""
    with torch.no_grad():
        ls, lt = _log_probs(student_logits, teacher_logits, 1.0)
        ls_x = ls.gather(-1, tokens[:, None]).squeeze(-1)
        lt_x = lt.gather(-1, tokens[:, None]).squeeze(-1)
        return (ls_x - lt_x).mean()


def teacher_path_length(teacher_logits: Tensor, tokens: Tensor) -> int:
    """How many of a turn's sampled tokens [N] to distill when truncating: up to and including
    the first one that is not the teacher's arg-max (all N when there is none). Past that
    token the turn has left the path the teacher would take, and the teacher's next-token
    distributions are conditioned on a prefix it would not have written. teacher_logits
    [N, V]."""
    departed = (teacher_logits.argmax(-1) != tokens).nonzero()
    return int(departed[0, 0]) + 1 if len(departed) else len(tokens)
