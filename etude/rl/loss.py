"""The training loss: L = L_RL + Σ_h λ_category(h) · KL_h.

L_RL is a group-relative clipped policy-gradient loss (GRPO/DAPO: asymmetric clip range,
token-level aggregation: every trainable token of the batch weighs the same) with an
optional k3 KL to a reference policy. KL_h is a distillation estimator (`etude.rl.distill`)
averaged over the tokens of hint h's turn only. Pure functions on tensors.

Shapes: `logprobs`, `old_logprobs`, `ref_logprobs`, `mask` are [B, T] (per token of the
sampled sequence, mask = trainable), `advantages` is [B] (one per trajectory).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


def policy_gradient_loss(
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    mask: Tensor,
    clip_low: float = 0.2,
    clip_high: float = 0.28,
) -> Tensor:
    """−mean over trainable tokens of min(ρ·A, clip(ρ, 1−ε_low, 1+ε_high)·A), ρ the
    probability ratio to the sampling policy (scalar)."""
    ratio = torch.exp(logprobs - old_logprobs)
    adv = advantages[:, None].to(ratio.dtype)
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_low, 1 + clip_high) * adv)
    return -(surrogate * mask).sum() / mask.sum().clamp(min=1)


def reference_kl(logprobs: Tensor, ref_logprobs: Tensor, mask: Tensor) -> Tensor:
    """k3 estimator of KL(π ‖ π_ref) on the sampled tokens, token-mean (scalar)."""
    d = ref_logprobs - logprobs
    return ((torch.exp(d) - d - 1) * mask).sum() / mask.sum().clamp(min=1)


@dataclass
class HintKL:
    """One hint's distillation term: its category and the per-token estimator values [N] on
    its turn's tokens."""

    category: str
    per_token: Tensor


def distillation_loss(
    terms: list[HintKL], weights: dict[str, float], n_trajectories: int
) -> Tensor:
    """Σ_h λ_category(h) · mean(KL_h), divided by the number of trajectories in the batch so
    the scale does not grow with batch size (scalar). Categories without a weight count 0."""
    total = torch.zeros(())
    for t in terms:
        lam = weights.get(t.category, 0.0)
        if lam and t.per_token.numel():
            total = total + lam * t.per_token.mean()
    return total / max(n_trajectories, 1)


def token_logprobs(logits: Tensor, tokens: Tensor) -> Tensor:
    """log p(token[t+1] | ≤ t) for logits [B, T, V], tokens [B, T] -> [B, T] with position 0
    set to 0 (nothing predicts the first token)."""
    lp = torch.log_softmax(logits[:, :-1].float(), dim=-1).gather(-1, tokens[:, 1:, None])[..., 0]
    return torch.cat([torch.zeros_like(lp[:, :1]), lp], dim=1)
