"""Batches of token sequences for a causal model."""

from __future__ import annotations

import torch
from torch import Tensor


def pad_batch(seqs: list[Tensor], masks: list[Tensor]) -> tuple[Tensor, Tensor]:
    """Right-pad token sequences [T_i] and masks [T_i] to [B, T_max] (pad token 0, mask False);
    right padding leaves a causal model's outputs at real positions unchanged."""
    t = max(len(s) for s in seqs)
    tokens = torch.zeros(len(seqs), t, dtype=torch.long)
    mask = torch.zeros(len(seqs), t, dtype=torch.bool)
    for i, (s, m) in enumerate(zip(seqs, masks)):
        tokens[i, : len(s)] = s
        mask[i, : len(m)] = m
    return tokens, mask
