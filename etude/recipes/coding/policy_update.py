"""One update of a Hugging Face policy on graded coding trajectories:
L = L_RL + Σ_h λ_category(h)·KL_h, then one optimizer (Muon) step.

`etude.rl.step.rl_step` does the same for `etude.models` transformers (its teacher pass
needs their KVCache); this is its counterpart for a Hugging Face causal LM such as
SmolLM2, built from the same pure pieces: `tokenize` (HFChat), `group_advantages`,
`shape_lengths`, `policy_gradient_loss`, `build_query` + `cached_teacher_logits_hf`,
`estimate` and `distillation_loss`. Trajectories run one at a time (a 49k-token vocabulary
makes a batch's logits large) and gradients accumulate; both loss terms are sums over
trajectories with the batch's normalizers, so the result equals the batched loss.
"""

from __future__ import annotations

import torch

from etude.rl.advantages import group_advantages
from etude.rl.distill import estimate
from etude.rl.effort import shape_lengths
from etude.rl.feedback.hints import Hint
from etude.rl.loss import HintKL, distillation_loss, policy_gradient_loss, token_logprobs
from etude.rl.step import StepSettings, hint_queries
from etude.rl.teacher import cached_teacher_logits_hf
from etude.rl.trajectory import HFChat, TemplateError, Trajectory, tokenize


def hf_rl_step(
    model,
    optimizer: torch.optim.Optimizer,
    chat: HFChat,
    trajectories: list[Trajectory],
    groups: list[int],
    hints: list[list[Hint]],
    settings: StepSettings,
    max_tokens: int = 4096,
) -> dict:
    """Update `model` once on `trajectories` (rewards set; `groups[i]` the task group of
    trajectory i, `hints[i]` its hints). Trajectories longer than `max_tokens` or that do not
    fit the template are dropped and named in `errors`. Returns metrics: rl_loss,
    distill_loss, kl/<category> (mean per token), hints_used, tokens, trajectories, errors."""
    errors: list[str] = []
    kept = []
    for i, traj in enumerate(trajectories):
        try:
            tt = tokenize(traj.messages, chat)
        except TemplateError as err:
            errors.append(f"trajectory {i} dropped: {err}")
            continue
        if len(tt.tokens) > max_tokens:
            errors.append(f"trajectory {i} dropped: {len(tt.tokens)} tokens > {max_tokens}")
            continue
        if not tt.trainable.any():
            errors.append(f"trajectory {i} dropped: no policy tokens")
            continue
        kept.append((i, tt))
    if not kept:
        return {"errors": errors, "skipped": True, "trajectories": 0}
    rewards = torch.tensor([float(trajectories[i].reward or 0.0) for i, _ in kept])
    group_ids = torch.tensor([groups[i] for i, _ in kept])
    if settings.effort_alpha:
        lengths = torch.tensor([int(tt.trainable.sum()) for _, tt in kept])
        rewards = shape_lengths(rewards, lengths, group_ids, rewards > 0, settings.effort_alpha)
    advantages = group_advantages(rewards, group_ids, settings.normalize_std)
    total_trainable = sum(int(tt.trainable.sum()) for _, tt in kept)

    model.train()
    optimizer.zero_grad(set_to_none=True)
    rl_total, d_total, kl_values, used = 0.0, 0.0, {}, 0
    for row, (i, tt) in enumerate(kept):
        queries = hint_queries(trajectories[i], tt, chat, hints[i], settings, errors, i)
        tokens, mask = tt.tokens[None], tt.trainable[None].float()
        out = model(input_ids=tokens, use_cache=bool(queries))
        logprobs = token_logprobs(out.logits, tokens)
        # token-level aggregation over the whole batch: this trajectory's share of the mean
        share = mask.sum() / total_trainable
        rl = policy_gradient_loss(
            logprobs,
            logprobs.detach(),
            advantages[row : row + 1],
            mask,
            settings.clip_low,
            settings.clip_high,
        )
        loss = rl * share
        rl_total += loss.item()
        terms = []
        if queries:
            cache = out.cache if hasattr(out, "cache") else out.past_key_values
            with torch.no_grad():
                teacher = cached_teacher_logits_hf(model, cache, 0, queries)
            for q, t_logits in zip(queries, teacher):
                sel = q.distill_mask.nonzero().squeeze(-1)
                if not len(sel):
                    continue
                student = out.logits[0, q.insert_at - 1 + sel]
                per_token = estimate(
                    settings.estimator,
                    student,
                    t_logits[sel],
                    q.continuation[sel],
                    teacher_temperature=settings.teacher_temperature,
                    beta=settings.jsd_beta,
                    k=settings.topk,
                )
                terms.append(HintKL(q.hint.category, per_token))
                kl_values.setdefault(q.hint.category, []).append(per_token.detach())
        if terms:
            d_loss = distillation_loss(terms, settings.weights, len(kept))
            loss = loss + d_loss
            d_total += d_loss.item()
            used += len(terms)
        loss.backward()
        del out, logprobs, loss
    optimizer.step()
    model.eval()
    metrics = {
        "rl_loss": rl_total,
        "distill_loss": d_total,
        "hints_used": used,
        "tokens": sum(len(tt.tokens) for _, tt in kept),
        "trajectories": len(kept),
        "errors": errors,
    }
    for category, values in sorted(kl_values.items()):
        metrics[f"kl/{category}"] = torch.cat(values).mean().item()
    return metrics
