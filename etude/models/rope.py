"""Rotary position embeddings, in the two conventions open checkpoints use, with optional
YaRN context extension (DeepSeek-V3, Kimi-K2).

YaRN (Peng et al. 2023) keeps the high-frequency pairs as trained and divides the
low-frequency ones by `factor` (position interpolation), with a linear ramp between the
pair indices whose wavelengths fit `beta_fast` and `beta_slow` rotations in the original
context; rotated queries and keys are multiplied by an attention factor, and DeepSeek-V3
also multiplies the softmax scale by mscale(factor, mscale_all_dim)^2. The formulas
follow transformers' `_compute_yarn_parameters` and `DeepseekV3Attention` exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class YaRN:
    """YaRN parameters as config.json's `rope_scaling` names them. `factor`: context
    extension over `original_max_position_embeddings`; `beta_fast` / `beta_slow`: the
    rotation counts bounding the interpolation ramp; `mscale` / `mscale_all_dim`: the
    attention-factor exponents (0: unset); `attention_factor`: an explicit factor
    overriding them; `truncate`: round the ramp bounds to whole pair indices."""

    factor: float
    original_max_position_embeddings: int
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    mscale: float = 0.0
    mscale_all_dim: float = 0.0
    attention_factor: float | None = None
    truncate: bool = True


def yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    """0.1 * mscale * ln(scale) + 1 for a context extension `scale` > 1, else 1."""
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def yarn_attention_factor(yarn: YaRN) -> float:
    """The factor rotated queries and keys are multiplied by (cos and sin are scaled)."""
    if yarn.attention_factor is not None:
        return yarn.attention_factor
    if yarn.mscale and yarn.mscale_all_dim:
        return yarn_mscale(yarn.factor, yarn.mscale) / yarn_mscale(yarn.factor, yarn.mscale_all_dim)
    return yarn_mscale(yarn.factor)


def yarn_softmax_scale(yarn: YaRN | None) -> float:
    """DeepSeek-V3's multiplier of the attention softmax scale: mscale(factor,
    mscale_all_dim)^2 when `mscale_all_dim` is set, else 1."""
    if yarn is None or not yarn.mscale_all_dim:
        return 1.0
    return yarn_mscale(yarn.factor, yarn.mscale_all_dim) ** 2


def rope_frequencies(dim: int, theta: float, yarn: YaRN | None = None) -> Tensor:
    """Inverse frequencies [dim/2] float32 of the rotated pairs: theta^(-2i/dim), or their
    YaRN blend of extrapolated (as trained) and interpolated (divided by factor) ones."""
    exponents = torch.arange(0, dim, 2, dtype=torch.float32) / dim
    if yarn is None:
        return theta ** (-exponents)
    wavelengths = theta**exponents
    extrapolated, interpolated = 1.0 / wavelengths, 1.0 / (yarn.factor * wavelengths)

    def pair_index(rotations: float) -> float:
        # the pair whose wavelength fits `rotations` turns in the original context
        context = yarn.original_max_position_embeddings
        return dim * math.log(context / (rotations * 2 * math.pi)) / (2 * math.log(theta))

    low, high = pair_index(yarn.beta_fast), pair_index(yarn.beta_slow)
    if yarn.truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # a ramp of zero width would divide by zero
    ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
    keep = 1 - ramp  # 1: extrapolate (high frequencies), 0: interpolate
    return interpolated * (1 - keep) + extrapolated * keep


def rope(
    x: Tensor,
    positions: Tensor,
    theta: float,
    interleave: bool = False,
    yarn: YaRN | None = None,
) -> Tensor:
    """Rotate `x` [B, T, H, D] by its positions, [T] shared or [B, T] per row (D even).

    Frequencies are `rope_frequencies(D, theta, yarn)`; with YaRN the result is also
    multiplied by `yarn_attention_factor`. The default rotates halves (pair i is
    (x[i], x[i + D/2]): Llama, Qwen3). `interleave=True` is the DeepSeek-V3 convention as
    transformers implements it: the last dimension is first reordered from interleaved
    pairs (x[2i], x[2i+1]) into halves, then rotated the same way (the output stays in the
    reordered layout; queries and keys get the same reorder, so scores are unchanged)."""
    half = x.shape[-1] // 2
    if interleave:
        x = x.unflatten(-1, (half, 2)).transpose(-1, -2).flatten(-2)
    freqs = rope_frequencies(x.shape[-1], theta, yarn).to(x.device)
    angles = positions.to(torch.float32)[..., None] * freqs  # [(B,) T, D/2]
    cos, sin = angles.cos(), angles.sin()
    if yarn is not None:
        factor = yarn_attention_factor(yarn)
        cos, sin = cos * factor, sin * factor
    cos, sin = cos.unsqueeze(-2).to(x.dtype), sin.unsqueeze(-2).to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
