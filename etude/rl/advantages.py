"""Group-relative advantages (GRPO / Dr. GRPO): each rollout's reward against the mean of the
rollouts of the same task. Pure functions; rewards [N], group ids [N]."""

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
