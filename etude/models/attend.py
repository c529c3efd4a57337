"""Causal attention by position: a query sees exactly the keys at positions <= its own."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    positions: Tensor,
    key_positions: Tensor,
    scale: float | None = None,
) -> Tensor:
    """q [B, H, T, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv] -> [B, H, T, Dv] (H a multiple of
    Hkv: grouped-query heads share keys without copies); positions [T] or [B, T],
    key_positions [S]; `scale` multiplies the scores before the softmax (default D^-1/2).

    When the keys are the queries' own tokens (`key_positions is positions`) at increasing
    positions, the position mask is the lower triangle and SDPA's causal kernel computes it
    without materializing a mask; otherwise (a KV cache, gathered context-parallel keys) the
    mask is built from the positions."""
    gqa = k.shape[1] != q.shape[1]
    own_keys = key_positions is positions and positions.dim() == 1
    if own_keys and bool((positions[1:] > positions[:-1]).all()):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale, enable_gqa=gqa)
    mask = key_positions <= positions[..., None]  # [(B,) T, S]
    if mask.dim() == 3:
        mask = mask[:, None]  # per row: broadcast over heads
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, enable_gqa=gqa)
