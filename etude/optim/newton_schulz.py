"""Newton–Schulz orthogonalization: the math Muon applies to each matrix-shaped unit.

All functions take a batch of same-shape matrices `[B, m, n]` and return `[B, m, n]`
approximately equal to `U V^T` of each matrix's SVD `U S V^T`. Three formulations:

- `standard`: the quintic iteration of Keller Jordan's Muon and `torch.optim.Muon`
  (`X <- a X + (b A + c A^2) X` with `A = X X^T`), on the wide orientation of each matrix.
- `gram`: the same polynomial iteration carried out on the small `m x m` Gram matrix. With
  `X_k = Q_k X_0` and `R = X_0 X_0^T`, `Q_{k+1} = p(Q_k R Q_k) Q_k`, so the long dimension is
  touched only to form `R` and to apply `Q`. In bf16 this alone diverges (rounding errors
  in `R` are amplified by every step: singular values of 10-1000 after 5 steps on the K2
  shapes, `benchmarks/ns_accuracy.py`), so the iteration restarts from the current iterate
  (`X <- Q X`, `R <- X X^T`, `Q <- I`) at the steps `gram_restarts` names: once after the
  first 2 steps, then every 3 (for 5 steps: one restart, before step 2, as in Dao AI Lab's
  Gram Newton–Schulz). Once the first steps have lifted the small singular values, a phase
  of 3 steps stays within bf16 rounding of the standard iteration; a first phase of 3 does
  not. In fp32 the standard iteration and both restart patterns round alike: after the
  sharded demo's 40 steps its Muon parameters are within 1.2e-6 of one process under each
  (`benchmarks/muon_drift.py`). It saves FLOPs on matrices
  more than 1.5 times as long as wide; `choose_method` picks it per shape from the FLOP
  counts below, and Muon and the planner (`etude plan muon`) both ask it.
- `gram_triangular`: the Gram iteration with its products that are symmetric by
  construction computed as symmetric products (`symmetric_matmul`: only the blocks on and
  above the diagonal, one batched matmul per row panel of `block` rows, the ones below
  copied from them; with `B` blocks a side, `B(B+1)/2` of the `B^2` blocks plus the copy):
  `R = X X^T`, `S S` and `S = (Q R) Q^T`, which are symmetric whatever the rounding of `Q`.
  `Q R` and `P Q` stay full: they are symmetric only because `Q` and `P` are polynomials of
  `R` in exact arithmetic, and in bf16 mirroring them amplifies the commutator's rounding
  (on K2's 1536 x 7168 unit the smallest singular value fell from 0.67 to 0.19,
  `benchmarks/results/ns_accuracy.json`, variant `gram_triangular_commuting_bf16`). So a
  step after the first of a phase is 2 symmetric and 2 full `s x s` products instead of 4
  full ones. In fp32 it equals `gram` to rounding. It is opt-in: given a block (Muon's
  `ns_block`), `choose_method` takes it wherever the short side exceeds one block; without
  one (the default) the Gram iteration runs with full products. Its speed-up is not
  measured on a GPU, where its small panel GEMMs may run below a full product's rate and
  its many ops cost host time (`benchmarks/muon_calibrate.py` measures both).

FP8 steps (`fp8_steps=k`, bf16 only, "standard" or "gram"): the products of the first `k`
steps run as `fp8_matmul`s (e4m3 operands under per-row and per-column scales, fp32
accumulation, bf16 out), where the bf16 iteration's `baddbmm` adds become separate adds; the
Gram iteration keeps the products that apply `Q` to `X` in bf16, as they write the iterate.
`fp8_products` lists the FP8 products as run, for their FLOPs (`ns_fp8_flops`) and the bytes
of their casts and adds (`ns_fp8_bytes`). How accurate they are on the K2 shapes, and why
they do not pay there as run: docs/muon.md, "FP8 steps".

Coefficient schedules: the fixed quintic `(3.4445, -4.7750, 2.0315)` repeated each step,
the per-step Polar Express schedule (Amsel et al., 2025) with its 1.01 safety factor, or
"minimax_4", a schedule designed for exactly 4 steps (`MINIMAX_4`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import torch
from torch import Tensor

from etude.optim.fp8_matmul import fp8_gram, fp8_matmul, fp8_operand_bytes

QUINTIC = (3.4445, -4.7750, 2.0315)

# Polar Express degree-5 schedule (arXiv:2505.16932, Algorithm 1). All but the last are
# divided by the paper's safety factor 1.01 (a/s, b/s^3, c/s^5); the last repeats.
_POLAR_EXPRESS_RAW = (
    (8.28721201814563, -23.595886519098837, 17.300387312530933),
    (4.107059111542203, -2.9478499167379106, 0.5448431082926601),
    (3.9486908534822946, -2.908902115962949, 0.5518191394370137),
    (3.3184196573706015, -2.488488024314874, 0.51004894012372),
    (2.300652019954817, -1.6689039845747493, 0.4188073119525673),
    (1.891301407787398, -1.2679958271945868, 0.37680408948524835),
    (1.8750014808534479, -1.2500016453999487, 0.3750001645474248),
    (1.875, -1.25, 0.375),
)
POLAR_EXPRESS = tuple((a / 1.01, b / 1.01**3, c / 1.01**5) for a, b, c in _POLAR_EXPRESS_RAW[:-1])
POLAR_EXPRESS_LAST = _POLAR_EXPRESS_RAW[-1]

# A schedule for exactly 4 steps, designed on the scalar map (benchmarks/ns_schedule_design.py,
# etude.optim.ns_design; no matrix was looked at): the greedy minimax (Polar Express)
# composition on the widest interval [ell, 1] whose band has the 5-step quintic's ratio of
# ends: ell = 0.00237 into [0.724, 1.276] (the quintic's 5 steps: [0.00151, 1] into
# [0.682, 1.202]); all but the last step take x / 1.01. No 4-step degree-5 schedule brings
# the quintic's own interval [0.00151, 1] into a band that narrow: the optimum there is
# [0.585, 1.415]. How it orthogonalizes the K2 shapes: docs/muon.md, "A schedule designed
# for 4 steps".
MINIMAX_4 = (
    (8.32732210643498, -24.14071028802441, 17.546580713735906),
    (4.04731169539921, -2.953585443405039, 0.5454792259518986),
    (3.607726324186585, -2.649093089446354, 0.5119785378820904),
    (2.6812027696129395, -1.998839049626335, 0.4573221695896723),
)

Coefficients = tuple[float, float, float]
METHODS = ("standard", "gram", "gram_triangular", "auto")
# The block etude suggests when symmetric products are opted into (Muon's `ns_block`, the
# planner's `--ns-block`) and the one the GPU calibration measures by default: K2's
# 2048-row expert units are 8 x 8 blocks, 36 of 64 computed.
SYMMETRIC_BLOCK = 256
# Restarts of the Gram iteration (benchmarks/results/ns_accuracy.json): a first phase of 3
# steps diverges in bf16 with Polar Express's large first coefficients, one of 2 does not;
# after it, phases of 3 stay within bf16 rounding of the standard iteration.
GRAM_FIRST_PHASE = 2
GRAM_PHASE = 3


def gram_restarts(steps: int) -> tuple[int, ...]:
    """The steps (0-based) before which the Gram iteration restarts from its iterate."""
    return tuple(range(GRAM_FIRST_PHASE, steps, GRAM_PHASE))


def coefficient_schedule(ns_coefficients: Coefficients | str, ns_steps: int) -> list[Coefficients]:
    """The (a, b, c) used at each of `ns_steps` steps: a fixed triple, "polar_express", or
    "minimax_4" (designed for exactly 4 steps: any other `ns_steps` is an error)."""
    if ns_steps < 1 or ns_steps >= 100:
        raise ValueError(f"ns_steps must be in [1, 99], got {ns_steps}")
    if ns_coefficients == "minimax_4":
        if ns_steps != len(MINIMAX_4):
            raise ValueError(
                f"ns_coefficients 'minimax_4' is designed for exactly {len(MINIMAX_4)} steps, "
                f"got ns_steps={ns_steps}"
            )
        return list(MINIMAX_4)
    if ns_coefficients == "polar_express":
        return [
            POLAR_EXPRESS[i] if i < len(POLAR_EXPRESS) else POLAR_EXPRESS_LAST
            for i in range(ns_steps)
        ]
    if isinstance(ns_coefficients, str) or len(ns_coefficients) != 3:
        raise ValueError(
            f"ns_coefficients must be three floats (a, b, c), 'polar_express' or 'minimax_4', "
            f"got {ns_coefficients!r}"
        )
    return [tuple(float(c) for c in ns_coefficients)] * ns_steps


def newton_schulz(
    g: Tensor,
    schedule: Sequence[Coefficients],
    eps: float = 1e-7,
    dtype: torch.dtype = torch.bfloat16,
    method: str = "standard",
    block: int | None = None,
    out: Tensor | None = None,
    fp8_steps: int = 0,
) -> Tensor:
    """Orthogonalize each matrix of a batch `g` `[B, m, n]`; returns `[B, m, n]` in `dtype`.

    `schedule` is the per-step coefficient list from `coefficient_schedule`; `method` is
    "standard", "gram" or "gram_triangular" (see the module docstring; "auto" is resolved by
    `choose_method`); `block` is the block size of "gram_triangular" (None, the default:
    full products, and "auto" never chooses "gram_triangular"). With `out` (`[B, m, n]`
    in `dtype`, not overlapping `g`), the last product writes the result there and `out`
    is returned: a caller that located views in `out` once keeps them (sharded Muon); a
    tall batch's `out` is best stored transposed (`empty(B, n, m).mT`), as the product is.
    `fp8_steps` > 0 runs the products of the first `fp8_steps` steps as `fp8_matmul`s
    (module docstring; bf16 only, not with "gram_triangular").
    """
    if g.ndim != 3:
        raise ValueError(f"newton_schulz expects a batch [B, m, n], got shape {tuple(g.shape)}")
    if method == "auto":
        method = choose_method(g.shape[1], g.shape[2], len(schedule), block)
    _check_fp8(fp8_steps, len(schedule), method, dtype)
    tall = g.shape[1] > g.shape[2]
    x = g.to(dtype)
    if tall:
        x = x.mT
    target = None if out is None else out.mT if tall else out
    if method == "standard":
        # The Frobenius norm bounds the spectral norm: scaled, every singular value is <= 1.
        x = x / x.norm(dim=(-2, -1), keepdim=True).clamp(min=eps)
        for i, (a, b, c) in enumerate(schedule):
            last = target if i == len(schedule) - 1 else None
            if i < fp8_steps:
                gram = fp8_gram(x)
                poly = fp8_matmul(gram, gram, alpha=c).add_(gram, alpha=b)
                x = torch.add(fp8_matmul(poly, x), x, alpha=a, out=last)
                continue
            gram = x @ x.mT
            poly = torch.baddbmm(gram, gram, gram, beta=b, alpha=c)
            x = torch.baddbmm(x, poly, x, beta=a, out=last)
    elif method == "gram":
        restarts = gram_restarts(len(schedule))
        x = gram_iteration(x, schedule, restarts, eps=eps, out=target, fp8_steps=fp8_steps)
    elif method == "gram_triangular":
        block = _checked_block(block)
        x = gram_iteration(x, schedule, gram_restarts(len(schedule)), block, eps, out=target)
    else:
        raise ValueError(f"unknown Newton–Schulz method {method!r}; choose one of {METHODS}")
    return x.mT if tall else x


def gram_iteration(
    x: Tensor,
    schedule: Sequence[Coefficients],
    restarts: Sequence[int] = (),
    block: int | None = None,
    eps: float = 1e-7,
    normalize: bool = True,
    out: Tensor | None = None,
    fp8_steps: int = 0,
) -> Tensor:
    """The Gram formulation on a wide batch `x` `[B, s, l]` (s <= l), restarting from the
    current iterate before each step in `restarts` (0-based). With `block`, the products
    symmetric by construction are `symmetric_matmul`s of that block size (the
    "gram_triangular" method); without, full products. Returns `[B, s, l]`.

    `x` need not be normalized: its squared Frobenius norm is the trace of the first Gram
    matrix `R = X X^T`, so `R` is divided by it and the first phase's `Q` (`s x s`) by the
    norm (at least `eps`), which orthogonalizes `X / |X|_F` without a pass over `X` to
    take its norm and another to scale it. `normalize=False` takes `x` as it is, for a
    caller that has scaled it so that its singular values are at most 1 (AOL rescaling in
    the benchmarks). With `out` (`[B, s, l]`), the last product writes there. The products
    of the first `fp8_steps` steps are `fp8_matmul`s, except those that apply `Q` to `X`
    (full products only)."""
    if fp8_steps and block is not None:
        raise ValueError("FP8 steps run with full products only, not with a block")
    if block is None:
        eye = torch.eye(x.shape[-2], dtype=x.dtype, device=x.device)

        def gram_of(x: Tensor) -> Tensor:
            return x @ x.mT

        def congruence(q: Tensor, r: Tensor) -> Tensor:
            return q @ r @ q

        def polynomial(s: Tensor, a: float, b: float, c: float) -> Tensor:
            return torch.baddbmm(a * eye + b * s, s, s, alpha=c)
    else:

        def gram_of(x: Tensor) -> Tensor:
            return symmetric_matmul(x, x.mT, block)

        def congruence(q: Tensor, r: Tensor) -> Tensor:
            # Q R Q^T is symmetric whatever Q's rounding; Q R is not (module docstring).
            return symmetric_matmul(q @ r, q.mT, block)

        def polynomial(s: Tensor, a: float, b: float, c: float) -> Tensor:
            poly = symmetric_matmul(s, s, block, add=s, beta=b, alpha=c)
            poly.diagonal(dim1=-2, dim2=-1).add_(a)
            return poly

    def fp8_congruence(q: Tensor, r: Tensor) -> Tensor:
        return fp8_matmul(fp8_matmul(q, r), q)

    def fp8_polynomial(s: Tensor, a: float, b: float, c: float) -> Tensor:
        poly = fp8_matmul(s, s, alpha=c).add_(s, alpha=b)
        poly.diagonal(dim1=-2, dim2=-1).add_(a)
        return poly

    q = None  # None stands for the identity: the first step of a phase needs no Q products
    inverse_norm = None  # 1 / |X|_F, folded into the first phase's Q
    for i, (a, b, c) in enumerate(schedule):
        fp8 = i < fp8_steps
        if q is None or i in restarts:
            if q is not None:
                x = _scaled(q, inverse_norm) @ x
                inverse_norm = None
            r = fp8_gram(x) if fp8 else gram_of(x)
            if i == 0 and normalize:
                squared = r.diagonal(dim1=-2, dim2=-1).sum(-1, dtype=torch.float32)
                norm = squared.sqrt().clamp(min=eps)
                r = r / (norm * norm).to(r.dtype)[..., None, None]
                inverse_norm = norm.reciprocal().to(r.dtype)[..., None, None]
            q, s = None, r
        else:
            s = fp8_congruence(q, r) if fp8 else congruence(q, r)
        poly = fp8_polynomial(s, a, b, c) if fp8 else polynomial(s, a, b, c)
        q = poly if q is None else fp8_matmul(poly, q) if fp8 else poly @ q
    return torch.matmul(_scaled(q, inverse_norm), x, out=out)


def _scaled(q: Tensor, factor: Tensor | None) -> Tensor:
    return q if factor is None else q * factor


def symmetric_matmul(
    u: Tensor,
    v: Tensor,
    block: int,
    add: Tensor | None = None,
    beta: float = 1.0,
    alpha: float = 1.0,
) -> Tensor:
    """`alpha * u @ v + beta * add` (`alpha * u @ v` without `add`) for a product known to be
    symmetric: `u` `[B, s, k]`, `v` `[B, k, s]`, `add` `[B, s, s]` symmetric or None;
    returns `[B, s, s]`.

    Only the blocks on and above the diagonal are computed, one batched matmul per panel of
    `block` rows (its columns from the diagonal block on), written in place; each panel's
    part right of its diagonal block is then copied, transposed, below it (so the blocks off
    the diagonal are exactly symmetric). It equals the full product to rounding when the
    product is symmetric, and is wrong otherwise (nothing checks that it is)."""
    s = u.shape[-2]
    out = torch.empty(u.shape[0], s, s, dtype=torch.result_type(u, v), device=u.device)
    # narrow() is one view op per dimension: the host issues every op of every panel.
    for start in range(0, s, block):
        rows, cols = min(block, s - start), s - start
        panel = out.narrow(1, start, rows).narrow(2, start, cols)
        if add is None:
            torch.bmm(u.narrow(1, start, rows), v.narrow(2, start, cols), out=panel)
            if alpha != 1.0:
                panel.mul_(alpha)
        else:
            torch.baddbmm(
                add.narrow(1, start, rows).narrow(2, start, cols),
                u.narrow(1, start, rows),
                v.narrow(2, start, cols),
                beta=beta,
                alpha=alpha,
                out=panel,
            )
        if cols > rows:
            below = out.narrow(1, start + rows, cols - rows).narrow(2, start, rows)
            below.copy_(panel.narrow(2, rows, cols - rows).mT)
    return out


def _panels(s: int, block: int) -> list[tuple[int, int]]:
    """(rows, columns computed) of each row panel of a symmetric `s x s` product."""
    return [(min(block, s - start), s - start) for start in range(0, s, block)]


def symmetric_matmul_flops(s: int, k: int, block: int) -> int:
    """Matmul FLOPs of one `symmetric_matmul` of `[s, k] @ [k, s]` (2 per multiply-add):
    with `B = s / block` blocks a side, B(B+1)/2 of the full product's B^2 blocks."""
    return 2 * k * sum(rows * cols for rows, cols in _panels(s, block))


def symmetric_mirror_numel(s: int, block: int) -> int:
    """Elements one `symmetric_matmul` of side `s` copies below its diagonal blocks."""
    return sum(rows * (cols - rows) for rows, cols in _panels(s, block))


def _phases(steps: int, restarts: Sequence[int] | None) -> list[int]:
    """Steps of each phase of the Gram iteration (between restarts)."""
    starts = [0, *(restarts if restarts is not None else gram_restarts(steps)), steps]
    return [b - a for a, b in pairwise(starts)]


def _checked_block(block: int | None) -> int:
    if block is None or isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise ValueError(f"gram_triangular needs a block size >= 1, got {block!r}")
    return block


def ns_flops(
    m: int,
    n: int,
    steps: int,
    method: str = "standard",
    restarts: Sequence[int] | None = None,
    block: int | None = None,
) -> int:
    """Matmul FLOPs of one `m x n` orthogonalization (2 FLOPs per multiply-add), exactly as
    run. `restarts` overrides `gram_restarts(steps)` for the Gram methods; `block` is
    "gram_triangular"'s block size (and what "auto" may choose)."""
    small, large = min(m, n), max(m, n)
    if method == "auto":
        method = choose_method(m, n, steps, block)
    if method == "standard":
        # X X^T: 2 s^2 l; A A: 2 s^3; P X: 2 s^2 l
        return steps * (4 * small * small * large + 2 * small**3)
    if method in ("gram", "gram_triangular"):
        if method == "gram":

            def symmetric(k: int) -> int:
                return 2 * small * small * k
        else:
            b = _checked_block(block)

            def symmetric(k: int) -> int:
                return symmetric_matmul_flops(small, k, b)

        # Per phase: R = X X^T (symmetric) and Q X (2 s^2 l); its first step S S
        # (symmetric), each further step Q R and P Q (2 s^3 each) and (Q R) Q^T and S S
        # (symmetric).
        return sum(
            symmetric(large)
            + 2 * small * small * large
            + (1 + 2 * (k - 1)) * symmetric(small)
            + 4 * (k - 1) * small**3
            for k in _phases(steps, restarts)
        )
    raise ValueError(f"unknown Newton–Schulz method {method!r}; choose one of {METHODS}")


def ns_mirror_numel(
    m: int,
    n: int,
    steps: int,
    method: str,
    restarts: Sequence[int] | None = None,
    block: int | None = None,
) -> int:
    """Elements the symmetric products of one `m x n` orthogonalization copy below their
    diagonal blocks (each read once and written once); 0 for the other methods."""
    if method == "auto":
        method = choose_method(m, n, steps, block)
    if method != "gram_triangular":
        return 0
    small = min(m, n)
    products = sum(2 + 2 * (k - 1) for k in _phases(steps, restarts))
    return products * symmetric_mirror_numel(small, _checked_block(block))


def _check_fp8(fp8_steps: int, steps: int, method: str, dtype: torch.dtype) -> None:
    if isinstance(fp8_steps, bool) or not isinstance(fp8_steps, int):
        raise ValueError(f"fp8_steps must be an int, got {fp8_steps!r}")
    if not 0 <= fp8_steps <= steps:
        raise ValueError(f"fp8_steps must be in [0, {steps}] (the steps run), got {fp8_steps}")
    if fp8_steps and method not in ("standard", "gram"):
        raise ValueError(f"FP8 steps run with 'standard' or 'gram', not {method!r}")
    if fp8_steps and dtype != torch.bfloat16:
        raise ValueError(f"FP8 steps need the bf16 iteration, got dtype {dtype}")


# Bytes per output element of the add an FP8 product needs after it (read the product and
# the addend, write the sum; bf16), where the bf16 path folds it into baddbmm.
FP8_EPILOGUE_BYTES = 6


def fp8_products(
    m: int, n: int, steps: int, method: str, fp8_steps: int, restarts: Sequence[int] | None = None
) -> list[tuple[int, int, int, str]]:
    """The `fp8_matmul`s of one `m x n` orthogonalization as `newton_schulz` runs them with
    `fp8_steps`: (rows, inner, columns, kind) of each, in order; kind is "gram" (an
    `fp8_gram`), "add" (followed by an add) or "plain"."""
    if fp8_steps == 0:
        return []
    _check_fp8(fp8_steps, steps, method, torch.bfloat16)
    s, long = min(m, n), max(m, n)
    if method == "standard":
        return [(s, long, s, "gram"), (s, s, s, "add"), (s, s, long, "add")] * fp8_steps
    starts = {0, *(restarts if restarts is not None else gram_restarts(steps))}
    products = []
    for i in range(fp8_steps):
        if i in starts:
            products.append((s, long, s, "gram"))  # R = X X^T
        else:
            products += [(s, s, s, "plain")] * 2  # (Q R) Q
        products.append((s, s, s, "add"))  # S S, + b S
        if i not in starts:
            products.append((s, s, s, "plain"))  # P Q
    return products


def ns_fp8_flops(m: int, n: int, steps: int, method: str, fp8_steps: int) -> int:
    """The part of `ns_flops` that `fp8_steps` runs as FP8 products."""
    return sum(2 * r * k * c for r, k, c, _ in fp8_products(m, n, steps, method, fp8_steps))


def ns_fp8_bytes(m: int, n: int, steps: int, method: str, fp8_steps: int) -> int:
    """HBM bytes the FP8 products of one orthogonalization move besides the products
    themselves: their operands' scaling and casts, and the adds after them."""
    return sum(
        fp8_operand_bytes(r, k, c, gram=kind == "gram")
        + (FP8_EPILOGUE_BYTES * r * c if kind == "add" else 0)
        for r, k, c, kind in fp8_products(m, n, steps, method, fp8_steps)
    )


def choose_method(m: int, n: int, steps: int, block: int | None = None) -> str:
    """The formulation with the fewest FLOPs for an `m x n` matrix: "standard" or "gram",
    and "gram_triangular" only when a `block` is given (symmetric products are opt-in;
    the earlier of these on a tie: "gram" when the short side fits in one block)."""
    methods = ["standard", "gram"] + (["gram_triangular"] if block is not None else [])
    return min(methods, key=lambda method: ns_flops(m, n, steps, method, block=block))
