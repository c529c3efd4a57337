"""Rotary position embeddings, in the two conventions open checkpoints use."""

from __future__ import annotations

import torch
from torch import Tensor


def rope(x: Tensor, positions: Tensor, theta: float, interleave: bool = False) -> Tensor:
    """Rotate `x` [B, T, H, D] by its positions, [T] shared or [B, T] per row (D even).

    Frequencies are theta^(-i/(D/2)) for i < D/2. The default rotates halves (pair i is
    (x[i], x[i + D/2]): Llama, Qwen3). `interleave=True` is the DeepSeek-V3 convention as
    transformers implements it: the last dimension is first reordered from interleaved
    pairs (x[2i], x[2i+1]) into halves, then rotated the same way (the output stays in the
    reordered layout; queries and keys get the same reorder, so scores are unchanged)."""
    half = x.shape[-1] // 2
    if interleave:
        x = x.unflatten(-1, (half, 2)).transpose(-1, -2).flatten(-2)
    freqs = theta ** (-torch.arange(half, dtype=torch.float32, device=x.device) / half)
    angles = positions.to(torch.float32)[..., None] * freqs  # [(B,) T, D/2]
    cos, sin = angles.cos().unsqueeze(-2).to(x.dtype), angles.sin().unsqueeze(-2).to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
