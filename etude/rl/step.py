"""One RL update on a batch of trajectories: L = L_RL + Σ_h λ_category(h)·KL_h.

Thin orchestration over the pure pieces: tokenize (`trajectory`), advantages
(`advantages`, `effort`), the policy-gradient and reference terms (`loss`), the cached
teacher pass (`teacher`) and the estimators (`distill`). Bad input does not stop a batch: a
trajectory that does not fit the template, or a hint that cannot apply, is dropped and
reported in the returned metrics (`errors`), and the rest trains.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from etude.models import KVCache
from etude.rl.advantages import group_advantages
from etude.rl.batch import pad_batch
from etude.rl.distill import estimate, teacher_advantage, teacher_path_length
from etude.rl.effort import shape_lengths
from etude.rl.feedback.hints import Hint, HintError, validate_hint
from etude.rl.loss import (
    HintKL,
    distillation_loss,
    policy_gradient_loss,
    reference_kl,
    token_logprobs,
)
from etude.rl.teacher import TeacherQuery, build_query, cached_teacher_logits_moe
from etude.rl.trajectory import (
    ChatTokenizer,
    TemplateError,
    TokenizedTrajectory,
    Trajectory,
    tokenize,
)


@dataclass
class StepSettings:
    """Knobs of one update. `weights`: λ per hint category (missing = 0, no teacher pass);
    `scope`: "turn" (targeted) or "trajectory" (the hint before the first turn, KL on every
    trainable token); `gate`: drop a hint unless the teacher finds the sampled turn less
    likely than the student does by more than `gate_margin` nats/token; `truncate`: distill a
    hinted turn only up to its first token that is not the teacher's arg-max
    (`distill.teacher_path_length`); `lambda_schedule`: "constant", or "linear" (every λ
    falls linearly toward 0 over the run's RL steps; applied by the trainer through
    `scheduled`)."""

    weights: dict[str, float] = field(default_factory=dict)
    estimator: str = "reverse_kl"
    teacher_temperature: float = 1.0
    jsd_beta: float = 0.5
    topk: int = 16
    scope: str = "turn"
    hint_role: str = "user"
    gate: bool = False
    gate_margin: float = 0.0
    truncate: bool = False
    lambda_schedule: str = "constant"
    clip_low: float = 0.2
    clip_high: float = 0.28
    normalize_std: bool = False
    ref_kl: float = 0.0
    effort_alpha: float = 0.0


def scheduled(settings: StepSettings, step: int, steps: int) -> StepSettings:
    """The settings for RL step `step` of `steps` (0-based): under the "linear" schedule
    every λ is scaled by 1 − step/steps; "constant" leaves them as they are."""
    if settings.lambda_schedule == "constant":
        return settings
    if settings.lambda_schedule != "linear":
        raise ValueError(
            f"lambda_schedule must be 'constant' or 'linear', got {settings.lambda_schedule!r}"
        )
    factor = 1 - step / steps
    return replace(settings, weights={k: v * factor for k, v in settings.weights.items()})


def hint_queries(
    trajectory: Trajectory,
    tt: TokenizedTrajectory,
    tok: ChatTokenizer,
    hints: list[Hint],
    settings: StepSettings,
    errors: list[str],
    index: int,
) -> list[TeacherQuery]:
    """Teacher queries for the hints of one trajectory whose category has a weight.

    A hint that does not fit (not a policy turn, a template that will not render it) is
    dropped with a message in `errors`, so the rest of the batch still trains."""
    queries = []
    for h in hints:
        if not settings.weights.get(h.category):
            continue
        try:
            validate_hint(trajectory, h)
            queries.append(
                build_query(
                    trajectory.messages,
                    tt,
                    tok,
                    h,
                    scope=settings.scope,
                    hint_role=settings.hint_role,
                )
            )
        except (HintError, TemplateError, ValueError) as err:
            errors.append(f"trajectory {index}: hint dropped: {err}")
    return queries


def rl_step(
    policy,
    optimizer: torch.optim.Optimizer,
    tok: ChatTokenizer,
    trajectories: list[Trajectory],
    groups: list[int],
    hints: list[list[Hint]],
    settings: StepSettings,
    reference=None,
) -> dict:
    """Update `policy` once on `trajectories` (rewards set; `groups[i]` the task group of
    trajectory i, `hints[i]` its hints). `policy(tokens, cache=, start_pos=)` is an
    `etude.models`-style model. Returns metrics: rl_loss, ref_kl, distill_loss,
    kl/<category> (mean per token), frac_distilled, teacher_gap, hints_used, errors."""
    errors: list[str] = []
    kept = []
    for i, traj in enumerate(trajectories):
        try:
            kept.append((i, tokenize(traj.messages, tok)))
        except TemplateError as err:
            errors.append(f"trajectory {i} dropped: {err}")
    if not kept:
        return {"errors": errors, "skipped": True}
    idx = [i for i, _ in kept]
    tokenized = [t for _, t in kept]
    rewards = torch.tensor([float(trajectories[i].reward or 0.0) for i in idx])
    group_ids = torch.tensor([groups[i] for i in idx])
    if settings.effort_alpha:
        lengths = torch.tensor([int(t.trainable.sum()) for t in tokenized])
        rewards = shape_lengths(rewards, lengths, group_ids, rewards > 0, settings.effort_alpha)
    advantages = group_advantages(rewards, group_ids, settings.normalize_std)

    tokens, mask = pad_batch([t.tokens for t in tokenized], [t.trainable for t in tokenized])
    cache = KVCache.empty(policy.config, len(kept), tokens.shape[1])
    logits = policy(tokens, cache=cache, start_pos=0)
    logprobs = token_logprobs(logits, tokens)
    rl_loss = policy_gradient_loss(
        logprobs, logprobs.detach(), advantages, mask, settings.clip_low, settings.clip_high
    )
    loss = rl_loss
    metrics: dict = {"rl_loss": rl_loss.item()}
    if settings.ref_kl and reference is not None:
        with torch.no_grad():
            ref_lp = token_logprobs(reference(tokens), tokens)
        kl_ref = reference_kl(logprobs, ref_lp, mask)
        loss = loss + settings.ref_kl * kl_ref
        metrics["ref_kl"] = kl_ref.item()

    terms, gaps, distilled = [], [], 0
    for row, (i, tt) in enumerate(kept):
        queries = hint_queries(trajectories[i], tt, tok, hints[i], settings, errors, i)
        if not queries:
            continue
        with torch.no_grad():
            teacher = cached_teacher_logits_moe(policy, cache, row, queries)
        for q, t_logits in zip(queries, teacher):
            sel = q.distill_mask.nonzero().squeeze(-1)
            student = logits[row, q.insert_at - 1 + sel]
            targets = q.continuation[sel]
            t_sel = t_logits[sel]
            gap = teacher_advantage(student, t_sel, targets).item()
            gaps.append(gap)
            if settings.gate and gap <= settings.gate_margin:
                continue
            keep = teacher_path_length(t_sel, targets) if settings.truncate else len(sel)
            per_token = estimate(
                settings.estimator,
                student[:keep],
                t_sel[:keep],
                targets[:keep],
                teacher_temperature=settings.teacher_temperature,
                beta=settings.jsd_beta,
                k=settings.topk,
            )
            terms.append(HintKL(q.hint.category, per_token))
            distilled += keep
    if terms:
        d_loss = distillation_loss(terms, settings.weights, len(kept))
        loss = loss + d_loss
        metrics["distill_loss"] = d_loss.item()
        for cat in sorted({t.category for t in terms}):
            vals = torch.cat([t.per_token.detach() for t in terms if t.category == cat])
            metrics[f"kl/{cat}"] = vals.mean().item()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    metrics.update(
        frac_distilled=distilled / max(int(mask.sum()), 1),
        teacher_gap=sum(gaps) / len(gaps) if gaps else 0.0,
        hints_used=len(terms),
        errors=errors,
    )
    return metrics
