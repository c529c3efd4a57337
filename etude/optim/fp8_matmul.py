"""FP8 products for Newton–Schulz: a batched matmul with its operands in float8 e4m3.

`fp8_matmul(u, v)` scales each row of `u` and each column of `v` so that its largest
magnitude is e4m3's largest finite value (448), casts both to `torch.float8_e4m3fn` and
multiplies them with `torch._scaled_mm` (fp32 accumulation, the scales applied to the
output, bf16 out), one call per matrix of the batch. The same op runs on CPU (where it is
what the accuracy benchmark measures) and on CUDA GPUs with FP8 tensor cores (H100, H200),
whose dense FP8 peak is twice the bf16 one. Its inputs must meet `torch._scaled_mm`'s CUDA
constraints everywhere, so that a shape accepted here on CPU also runs on a GPU: every
dimension divisible by 16.

Memory traffic beyond the product itself, counted by `fp8_operand_bytes` (the planner adds
it to the NS term at HBM bandwidth): each operand element of bf16 is read for its scale,
read and written by the scaling, read and written (1 B) by the cast; the right operand's
fp8 copy is transposed into column-major order (1 B read, 1 B written). `fp8_gram` casts
its one operand once. Those passes are why FP8 steps do not pay at Kimi K2's unit shapes in
the planner: a square `s x s` product does 2 s^3 FLOPs on 20 s^2 bytes of preparation, s / 10
FLOP per byte, below an H200's FP8 balance of about 1979 / 4.8 = 412 FLOP per byte for every
K2 unit (docs/muon-planner.md); quantization fused into the producing product's epilogue
would remove most of them.
"""

from __future__ import annotations

import torch
from torch import Tensor

E4M3_MAX = 448.0  # largest finite torch.float8_e4m3fn value
FP8_ALIGN = 16  # torch._scaled_mm on CUDA: every dimension a multiple of 16
# Bytes per element of a bf16 operand (module docstring): amax read 2, scale 2 + 2, cast
# 2 + 1; the right operand's column-major copy 1 + 1 more.
LEFT_OPERAND_BYTES = 9
RIGHT_OPERAND_BYTES = 11


def fp8_matmul(u: Tensor, v: Tensor, alpha: float = 1.0) -> Tensor:
    """`alpha * u @ v` for `u` `[B, m, k]` and `v` `[B, k, n]` with both operands rounded to
    float8 e4m3 under per-row (`u`) and per-column (`v`) scales; returns `[B, m, n]` bf16."""
    if u.ndim != 3 or v.ndim != 3 or u.shape[0] != v.shape[0] or u.shape[2] != v.shape[1]:
        raise ValueError(
            f"fp8_matmul expects [B, m, k] @ [B, k, n], got {tuple(u.shape)} @ {tuple(v.shape)}"
        )
    _check_aligned(u.shape[1], u.shape[2], v.shape[2])
    scale_u = _scale(u, dim=-1)  # [B, m, 1]
    scale_v = _scale(v, dim=-2)  # [B, 1, n]
    u8 = (u / scale_u.to(u.dtype)).to(torch.float8_e4m3fn)
    v8 = (v / scale_v.to(v.dtype)).to(torch.float8_e4m3fn).mT.contiguous().mT  # column-major
    return _scaled_products(u8, v8, scale_u, scale_v * alpha if alpha != 1.0 else scale_v)


def fp8_gram(x: Tensor) -> Tensor:
    """`x @ x^T` for `x` `[B, s, l]` as `fp8_matmul(x, x.mT)` computes it, with `x` cast
    once: its per-row scales are the per-column scales of `x^T`, and the transpose of a
    row-major e4m3 copy is the column-major right operand. Returns `[B, s, s]` bf16."""
    if x.ndim != 3:
        raise ValueError(f"fp8_gram expects [B, s, l], got {tuple(x.shape)}")
    _check_aligned(x.shape[1], x.shape[2], x.shape[1])
    scale = _scale(x, dim=-1)  # [B, s, 1]
    x8 = (x / scale.to(x.dtype)).to(torch.float8_e4m3fn)
    return _scaled_products(x8, x8.mT, scale, scale.mT)


def _check_aligned(m: int, k: int, n: int) -> None:
    if m % FP8_ALIGN or k % FP8_ALIGN or n % FP8_ALIGN:
        raise ValueError(
            f"FP8 products need every dimension divisible by {FP8_ALIGN} (torch._scaled_mm on "
            f"CUDA), got [{m}, {k}] @ [{k}, {n}]"
        )


def _scaled_products(a8: Tensor, b8: Tensor, scale_a: Tensor, scale_b: Tensor) -> Tensor:
    """`[B, m, k] @ [B, k, n]` e4m3 (the right one column-major) with scales `[B, m, 1]` and
    `[B, 1, n]` -> `[B, m, n]` bf16. torch._scaled_mm takes one matrix: one call per matrix,
    the views of all made in one op each."""
    out = torch.empty(a8.shape[0], a8.shape[1], b8.shape[2], dtype=torch.bfloat16, device=a8.device)
    for a, b, sa, sb, o in zip(
        a8.unbind(), b8.unbind(), scale_a.unbind(), scale_b.unbind(), out.unbind()
    ):
        torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, out=o)
    return out


def _scale(x: Tensor, dim: int) -> Tensor:
    """fp32 scales that map each slice's largest magnitude to E4M3_MAX (zero slices: 1)."""
    amax = x.abs().amax(dim=dim, keepdim=True).float()
    return torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))


def fp8_operand_bytes(m: int, k: int, n: int, gram: bool = False) -> int:
    """HBM bytes one `fp8_matmul` of `[m, k] @ [k, n]` moves to prepare its operands (an
    `fp8_gram`, `gram=True`: its one operand, cast once)."""
    if gram:
        return LEFT_OPERAND_BYTES * m * k
    return LEFT_OPERAND_BYTES * m * k + RIGHT_OPERAND_BYTES * k * n
