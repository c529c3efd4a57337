"""Group-relative advantages (GRPO / Dr. GRPO): each rollout's reward against the mean of the
rollouts of the same task. Pure functions; rewards [N], group ids [N], advantages [N]."""

from __future__ import annotations

import torch
from torch import Tensor


def group_advantages(rewards: Tensor, groups: Tensor, normalize_std: bool = False) -> Tensor:
    """A_i = r_i − mean_{g(j)=g(i)} r_j, divided by the group's std (+1e-6) when
    `normalize_std` (GRPO; Dr. GRPO leaves it out). A group of identical rewards gets 0. [N]"""
    out = torch.zeros_like(rewards, dtype=torch.float32)
    for g in groups.unique():
        idx = groups == g
        r = rewards[idx].float()
        a = r - r.mean()
        if normalize_std and len(r) > 1:
            a = a / (r.std() + 1e-6)
        out[idx] = a
    return out


def weigh_negatives(advantages: Tensor, weight: float) -> Tensor:
    """The advantages with every negative one multiplied by `weight` (positive and zero ones
    unchanged) [N]. 1 is plain GRPO; 0 learns only from the rollouts that beat their
    group's mean, each by how much (filtered behaviour cloning with the group mean as the
    baseline). Below 1 it keeps a step from being mostly a push down on the failures, whose
    tokens — the tool-call format, the prompt's names — the successes share."""
    return torch.where(advantages < 0, advantages * weight, advantages)
