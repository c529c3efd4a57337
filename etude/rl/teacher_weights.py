"""Whose weights the hinted teacher runs with, over a run.

- "live": the policy itself, as it is at each update (its cached prefix is reused; no copy).
- "frozen": a snapshot of the policy, refreshed every `every` updates (refresh "every"), or,
  at those checks, only when the reward has not dropped since the last refresh (refresh
  "no_reward_drop"). A teacher that moves with the student each step stops teaching
  (its KL goes to zero); CGTR (arXiv 2606.03532) found EMA teachers slowly contaminated by
  the student and a frozen teacher refreshed only when reward checks pass free of
  collapses; these are the two refresh rules.
- "ema": an exponential moving average of the policy, θ_T ← d·θ_T + (1 − d)·θ after every
  update.

`TeacherWeights.module` is the teacher's module (None for "live"); wrap it in the policy
protocol (`NativePolicy`, `HFPolicy`) and pass it to `rl_update(..., teacher=)`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn


@dataclass
class TeacherSettings:
    """`kind`: "live", "frozen" or "ema"; `refresh` (frozen): "every" or "no_reward_drop";
    `every`: updates between refreshes or reward checks; `ema_decay`: d of the EMA;
    `tolerance`: a reward this much below the last refresh's still counts as not dropped."""

    kind: Literal["live", "frozen", "ema"] = "live"
    refresh: Literal["every", "no_reward_drop"] = "every"
    every: int = 10
    ema_decay: float = 0.99
    tolerance: float = 0.0

    def __post_init__(self):
        if self.every < 1:
            raise ValueError(f"teacher.every must be at least 1, got {self.every}")
        if not 0 <= self.ema_decay < 1:
            raise ValueError(f"teacher.ema_decay must be in [0, 1), got {self.ema_decay}")


def ema_update_(teacher: nn.Module, student: nn.Module, decay: float) -> None:
    """θ_T ← decay·θ_T + (1 − decay)·θ_S for every parameter, in place; buffers are copied.
    The modules must have the same structure."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters(), strict=True):
            t.mul_(decay).add_(s.detach(), alpha=1 - decay)
        for t, s in zip(teacher.buffers(), student.buffers(), strict=True):
            t.copy_(s)


def copy_weights_(teacher: nn.Module, student: nn.Module) -> None:
    """The teacher's parameters and buffers set to the student's, in place."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters(), strict=True):
            t.copy_(s.detach())
        for t, s in zip(teacher.buffers(), student.buffers(), strict=True):
            t.copy_(s)


def reward_held(reference: float, current: float, tolerance: float = 0.0) -> bool:
    """The reward has not dropped: `current` ≥ `reference` − `tolerance`."""
    return current >= reference - tolerance


class TeacherWeights:
    """The teacher's weights over a run (see module doc). `reward`: the reward the initial
    snapshot is compared against (None: the first check only records it)."""

    def __init__(self, settings: TeacherSettings, policy: nn.Module, reward: float | None = None):
        self.settings = settings
        self.module: nn.Module | None = None
        if settings.kind != "live":
            self.module = copy.deepcopy(policy).requires_grad_(False)
        self.reward_at_refresh = reward
        self.updates = 0
        self.refreshes = 0

    def after_update(self, policy: nn.Module, reward: float | None = None) -> bool:
        """Advance by one policy update; returns whether the teacher changed. `reward`: the
        reward measured since the last check (needed at the checks of "no_reward_drop")."""
        self.updates += 1
        s = self.settings
        if s.kind == "live":
            return False
        if s.kind == "ema":
            ema_update_(self.module, policy, s.ema_decay)
            return True
        if self.updates % s.every:
            return False
        if s.refresh == "no_reward_drop":
            if reward is None:
                raise ValueError("refresh 'no_reward_drop' needs the reward at every check")
            if self.reward_at_refresh is None:
                self.reward_at_refresh = reward
                return False
            if not reward_held(self.reward_at_refresh, reward, s.tolerance):
                return False
            self.reward_at_refresh = reward
        copy_weights_(self.module, policy)
        self.refreshes += 1
        return True
