"""The training loss: L = L_RL + Σ_h λ_category(h) · KL_h.

L_RL is a group-relative clipped policy-gradient loss (GRPO/DAPO: asymmetric clip range,
token-level aggregation: every trainable token of the batch weighs the same) with an
optional k3 KL to a reference policy. KL_h is a distillation estimator (`etude.rl.distill`)
averaged over the tokens of hint h's turn only. Pure functions on tensors.

Shapes: `logprobs`, `old_logprobs`, `ref_logprobs`, `mask` are [B, T] (per token of the
sampled sequence, mask = trainable), `advantages` is [B] (one per trajectory) or, for the
policy-gradient term, [B, T] (one per token: credit reweighted within a trajectory).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

IS_MODES = ("truncate", "mask")


def policy_gradient_loss(
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    mask: Tensor,
    clip_low: float = 0.2,
    clip_high: float = 0.28,
    *,
    is_cap: float | None = None,
    is_mode: str = "truncate",
    normalizer: float | Tensor | None = None,
) -> Tensor:
    """−Σ over trainable tokens of min(ρ·A, clip(ρ, 1−ε_low, 1+ε_high)·A) / normalizer
    (default: the number of trainable tokens), ρ = exp(logprobs − old_logprobs) the ratio
    to the sampling policy (scalar).

    Truncated importance sampling for rollouts from older weights, with cap C: "truncate"
    caps ρ's value at C (its gradient becomes C·∇log π: the unbounded ρ·A of a negative
    advantage cannot blow up); "mask" drops tokens whose ρ exceeds C (the normalizer is
    unchanged, so the kept tokens weigh what they would have)."""
    ratio = torch.exp(logprobs - old_logprobs)
    adv = (advantages[:, None] if advantages.dim() == 1 else advantages).to(ratio.dtype)
    weight = mask.to(ratio.dtype)
    if is_cap is not None:
        if is_mode not in IS_MODES:
            raise ValueError(f"is_mode must be one of {IS_MODES}, got {is_mode!r}")
        over = ratio.detach() > is_cap
        if is_mode == "truncate":
            ratio = torch.where(over, ratio * (is_cap / ratio.detach()), ratio)
        else:
            weight = weight * ~over
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_low, 1 + clip_high) * adv)
    if normalizer is None:
        normalizer = mask.sum().clamp(min=1)
    return -(surrogate * weight).sum() / normalizer


def ratio_statistics(
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    mask: Tensor,
    clip_low: float,
    clip_high: float,
    is_cap: float | None,
) -> dict[str, Tensor]:
    """Sums over the tokens of `mask` (detached, for logging; divide by `count`): ratio sum,
    min and max, tokens where clipping zeroes the gradient (ρ > 1+ε_high with A > 0, or
    ρ < 1−ε_low with A < 0), tokens over the importance-sampling cap, and the sum and max of
    |log π_trainer − log π_sampler|."""
    m = mask.bool()
    ratio = torch.exp(logprobs - old_logprobs).detach()[m]
    adv = advantages[:, None].expand_as(mask)[m]
    gap = (logprobs - old_logprobs).detach().abs()[m]
    clipped = ((adv > 0) & (ratio > 1 + clip_high)) | ((adv < 0) & (ratio < 1 - clip_low))
    empty = torch.tensor(float("nan"))
    return {
        "count": torch.tensor(float(m.sum())),
        "ratio_sum": ratio.sum(),
        "ratio_min": ratio.min() if len(ratio) else empty,
        "ratio_max": ratio.max() if len(ratio) else empty,
        "clipped": clipped.sum().float(),
        "capped": (ratio > is_cap).sum().float() if is_cap is not None else torch.tensor(0.0),
        "gap_sum": gap.sum(),
        "gap_max": gap.max() if len(gap) else empty,
    }


def reference_kl(
    logprobs: Tensor, ref_logprobs: Tensor, mask: Tensor, normalizer: float | Tensor | None = None
) -> Tensor:
    """k3 estimator of KL(π ‖ π_ref) on the sampled tokens, summed over `mask` and divided by
    `normalizer` (default: the number of tokens in `mask`) (scalar)."""
    d = ref_logprobs - logprobs
    if normalizer is None:
        normalizer = mask.sum().clamp(min=1)
    return ((torch.exp(d) - d - 1) * mask).sum() / normalizer


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


LOGPROB_CHUNK = 512
"""Positions per chunk in `token_logprobs`: a [512, V] fp32 block at a time."""


def token_logprobs(logits: Tensor, tokens: Tensor) -> Tensor:
    """log p(token[t+1] | ≤ t) for logits [B, T, V], tokens [B, T] -> [B, T] with position
    0 set to 0 (nothing predicts the first token); computed and returned in fp32 (fp64 for
    fp64 logits).

    Computed in blocks of `LOGPROB_CHUNK` positions, forward and backward, so besides the
    logits and their gradient no [B, T, V] tensor is made: a plain log_softmax keeps its
    fp32 output for the backward and the backward makes two more (for a 4k-token trajectory
    of a 49k vocabulary, 0.8 GB each). Equal to log_softmax + gather (tested)."""
    return _TokenLogprobs.apply(logits, tokens)


class _TokenLogprobs(torch.autograd.Function):
    """d log p(y) / d logits = onehot(y) − softmax(logits), one block of positions at a time."""

    @staticmethod
    def forward(ctx, logits: Tensor, tokens: Tensor) -> Tensor:
        ctx.save_for_backward(logits, tokens)
        dtype = torch.promote_types(logits.dtype, torch.float32)
        out = torch.zeros(tokens.shape, dtype=dtype, device=logits.device)
        for row, start, end in _blocks(logits):
            block = logits[row, start:end].to(dtype)  # predicts tokens[row, start + 1 : end + 1]
            picked = block.gather(-1, tokens[row, start + 1 : end + 1, None])[:, 0]
            out[row, start + 1 : end + 1] = picked - torch.logsumexp(block, dim=-1)
        return out

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:
        logits, tokens = ctx.saved_tensors
        out = torch.zeros_like(logits)  # the last position predicts nothing
        for row, start, end in _blocks(logits):
            g = grad[row, start + 1 : end + 1, None]
            block = torch.softmax(logits[row, start:end].to(g.dtype), dim=-1).mul_(-g)
            block.scatter_add_(-1, tokens[row, start + 1 : end + 1, None], g)
            out[row, start:end] = block
        return out, None


def _blocks(logits: Tensor):
    """(row, start, end) over the positions 0 .. T-2 that predict a next token."""
    for row in range(logits.shape[0]):
        for start in range(0, logits.shape[1] - 1, LOGPROB_CHUNK):
            yield row, start, min(start + LOGPROB_CHUNK, logits.shape[1] - 1)
