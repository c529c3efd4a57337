"""Effort calibration: group-relative length shaping. Among a task's successful rollouts,
shorter ones get more reward; failing rollouts keep their reward whatever their length, so
failing fast earns nothing. Pure function."""

from __future__ import annotations

from torch import Tensor


def shape_lengths(
    rewards: Tensor, lengths: Tensor, groups: Tensor, success: Tensor, alpha: float = 0.2
) -> Tensor:
    """rewards, lengths (turns or tokens), groups, success: [N]. A success of length ℓ in a
    group whose successes span [ℓ_min, ℓ_max] loses α·(ℓ − ℓ_min)/(ℓ_max − ℓ_min); other
    rollouts are unchanged. [N]"""
    if not 0 <= alpha <= 1:
        raise ValueError(f"effort alpha must be in [0, 1], got {alpha}")
    out = rewards.clone().float()
    for g in groups.unique():
        idx = (groups == g) & success
        if idx.sum() < 2:
            continue
        ln = lengths[idx].float()
        span = ln.max() - ln.min()
        if span > 0:
            out[idx] -= alpha * (ln - ln.min()) / span
    return out
