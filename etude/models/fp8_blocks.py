"""Block-quantized FP8 weights, as DeepSeek-V3 and Kimi-K2 checkpoints store them.

A quantized matrix `<name>.weight` [R, C] is float8_e4m3fn, and `<name>.weight_scale_inv`
[ceil(R / br), ceil(C / bc)] (float32) holds one scale per (br, bc) block (config.json's
`quantization_config.weight_block_size`, [128, 128] in the released checkpoints); the
blocks of the last row and column are partial when R or C is not a multiple. The real
weight is `float32(w) * scale_inv` of its block. Leading dimensions (stacked experts),
if any, index weight and scale alike.

Dequantizing a region reads only the scales of the blocks it overlaps, so a rank that
loads a slice of a weight reads the matching slice of its scales (`scale_region`).
"""

from __future__ import annotations

import torch
from torch import Tensor

SCALE_SUFFIX = "_scale_inv"  # `<name>.weight` -> `<name>.weight_scale_inv`


def scale_shape(shape: tuple[int, ...], block: tuple[int, int]) -> tuple[int, ...]:
    """The scale tensor's shape for a weight of `shape` (partial edge blocks count)."""
    *lead, rows, cols = shape
    return (*lead, -(-rows // block[0]), -(-cols // block[1]))


def scale_region(index: tuple[slice, ...], block: tuple[int, int]) -> tuple[slice, ...]:
    """The region of the scale tensor whose blocks cover weight region `index` (slices
    with explicit start and stop, one per weight dimension)."""
    *lead, rows, cols = index
    (br, bc) = block
    return (
        *lead,
        slice(rows.start // br, -(-rows.stop // br)),
        slice(cols.start // bc, -(-cols.stop // bc)),
    )


def dequantize(
    weight: Tensor, scale_inv: Tensor, block: tuple[int, int], start: tuple[int, int] = (0, 0)
) -> Tensor:
    """Region `weight` [..., r, c] (float8) of a quantized matrix, its first element at
    (row, col) `start` of the full matrix, and `scale_inv` [..., *] the scale region
    `scale_region` gives for it -> the real values [..., r, c] float32."""
    (r0, c0), (br, bc) = start, block
    rows = torch.arange(r0, r0 + weight.shape[-2]) // br - r0 // br
    cols = torch.arange(c0, c0 + weight.shape[-1]) // bc - c0 // bc
    return weight.to(torch.float32) * scale_inv.to(torch.float32)[..., rows[:, None], cols]
