"""Designing Newton–Schulz coefficient schedules on the scalar map, not on matrices.

A degree-5 step `X <- a X + b (X X^T) X + c (X X^T)^2 X` maps each singular value `x` of
`X` through the odd polynomial `p(x) = a x + b x^3 + c x^5`, so a schedule of steps maps the
normalized singular values in `[ell, 1]` through the composition of its polynomials. This
module works on that scalar map only:

- `image`: the exact image of an interval under one step (a continuous map sends an
  interval to the interval between its smallest and largest value, taken at the endpoints
  or at the critical points inside), and `schedule_band`, the exact image under a schedule;
- `quintic_band` and `covered_interval`: the band a fixed triple settles in (its two
  critical values, between which it bounces) and the smallest `ell` whose whole interval
  `[ell, 1]` it brings into that band in a given number of steps;
- `minimax_step` (Remez exchange: the odd quintic closest to 1 in the maximum norm on
  `[l, u]`) and `minimax_schedule`, the greedy composition of such steps of Polar Express
  (Amsel et al., 2025, arXiv:2505.16932, Algorithm 1: each step is the minimax
  polynomial on the previous step's image, which the paper proves optimal for the whole
  composition), with its safety factor (all but the last step take `x / safety`, so that
  singular values up to `safety` above the design interval, from rounding, stay bounded);
- `band_matched_ell`: the `ell` at which the greedy schedule's band has a given ratio of
  its ends (the widest interval it covers with that band).

Everything is float64 on Python floats: a few hundred operations, no matrices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Coefficients = tuple[float, float, float]


def step_value(coefficients: Coefficients, x: float) -> float:
    """`p(x) = a x + b x^3 + c x^5`."""
    a, b, c = coefficients
    x2 = x * x
    return x * (a + x2 * (b + c * x2))


def critical_points(coefficients: Coefficients) -> list[float]:
    """The positive `x` where `p'(x) = a + 3 b x^2 + 5 c x^4` vanishes, ascending."""
    a, b, c = coefficients
    if c == 0.0:
        roots = [] if b == 0.0 else [-a / (3 * b)]
    else:
        disc = 9 * b * b - 20 * a * c
        if disc < 0:
            return []
        sq = math.sqrt(disc)
        roots = [(-3 * b - sq) / (10 * c), (-3 * b + sq) / (10 * c)]
    return sorted(math.sqrt(y) for y in roots if y > 0)


def image(coefficients: Coefficients, lo: float, hi: float) -> tuple[float, float]:
    """The exact image `[min p, max p]` of `[lo, hi]` (0 <= lo <= hi)."""
    points = [lo, hi, *(x for x in critical_points(coefficients) if lo < x < hi)]
    values = [step_value(coefficients, x) for x in points]
    return min(values), max(values)


def schedule_band(schedule: Sequence[Coefficients], ell: float) -> tuple[float, float]:
    """The exact image of `[ell, 1]` under the composed schedule."""
    lo, hi = ell, 1.0
    for coefficients in schedule:
        lo, hi = image(coefficients, lo, hi)
    return lo, hi


def quintic_band(coefficients: Coefficients) -> tuple[float, float]:
    """The band a repeated triple bounces in: its local minimum and maximum values (for
    the quintic (3.4445, -4.7750, 2.0315), about [0.682, 1.202])."""
    points = critical_points(coefficients)
    if len(points) != 2:
        raise ValueError(f"{coefficients} has no two positive critical points")
    first, second = (step_value(coefficients, x) for x in points)
    return second, first


def covered_interval(
    coefficients: Coefficients, steps: int, band: tuple[float, float], tol: float = 1e-12
) -> float:
    """The smallest `ell` such that `steps` repetitions of `coefficients` map all of
    `[ell, 1]` into `band` (up to a relative `tol`), by bisection (the image of a shorter
    interval is contained in that of a longer one, so the test is monotone in `ell`)."""

    def inside(ell: float) -> bool:
        lo, hi = schedule_band([coefficients] * steps, ell)
        return lo >= band[0] * (1 - 1e-9) and hi <= band[1] * (1 + 1e-9)

    left, right = 0.0, 1.0
    if not inside(right):
        raise ValueError(f"{steps} steps of {coefficients} do not reach {band} even from 1")
    while right - left > tol * right:
        mid = (left + right) / 2
        left, right = (left, mid) if inside(mid) else (mid, right)
    return right


def _solve4(rows: list[list[float]], rhs: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting for a 4 x 4 system."""
    m = [[*row, r] for row, r in zip(rows, rhs, strict=True)]
    n = len(m)
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for k in range(col, n + 1):
                m[r][k] -= f * m[col][k]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def minimax_step(lo: float, hi: float, iterations: int = 200) -> tuple[Coefficients, float]:
    """The odd quintic `p` minimizing `max |1 - p(x)|` on `[lo, hi]` (0 < lo < hi) and that
    error `E`, by Remez exchange: the error equioscillates at `lo`, the two critical points
    of `p` and `hi` (`1 - p = E, -E, E, -E`), so each exchange solves for `(a, b, c, E)` on
    four points and moves the inner two to the new critical points."""
    if not 0 < lo < hi:
        raise ValueError(f"minimax_step needs 0 < lo < hi, got [{lo}, {hi}]")
    points = [lo, lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3, hi]
    for _ in range(iterations):
        rows = [[x, x**3, x**5, (-1.0) ** i] for i, x in enumerate(points)]
        a, b, c, error = _solve4(rows, [1.0] * 4)
        inner = [x for x in critical_points((a, b, c)) if lo < x < hi]
        if len(inner) != 2:
            raise ArithmeticError(f"Remez exchange lost its alternation on [{lo}, {hi}]")
        new = [lo, *inner, hi]
        if max(abs(u - v) for u, v in zip(new, points, strict=True)) <= 1e-15 * hi:
            break
        points = new
    return (a, b, c), error


def minimax_schedule(ell: float, steps: int, safety: float = 1.01) -> list[Coefficients]:
    """The greedy minimax schedule of `steps` odd quintics for singular values in
    `[ell, 1]`: each step is `minimax_step` on the image of the steps before it; every step
    but the last is applied to `x / safety` (`a / s, b / s^3, c / s^5`), and the next
    interval is the exact image of the applied step."""
    if steps < 1:
        raise ValueError(f"minimax_schedule needs steps >= 1, got {steps}")
    if not 0 < ell < 1:
        raise ValueError(f"minimax_schedule needs 0 < ell < 1, got {ell}")
    if safety < 1:
        raise ValueError(f"the safety factor must be >= 1, got {safety}")
    lo, hi, schedule = ell, 1.0, []
    for t in range(steps):
        (a, b, c), _ = minimax_step(lo, hi)
        s = safety if t < steps - 1 else 1.0
        applied = (a / s, b / s**3, c / s**5)
        schedule.append(applied)
        lo, hi = image(applied, lo, hi)
    return schedule


def band_matched_ell(
    steps: int, ratio: float, safety: float = 1.01, bracket: tuple[float, float] = (1e-4, 0.01)
) -> float:
    """The `ell` at which `minimax_schedule(ell, steps, safety)` maps `[ell, 1]` into a band
    whose ends have `ratio` (hi / lo), by bisection (a longer interval, a wider band)."""

    def band_ratio(ell: float) -> float:
        lo, hi = schedule_band(minimax_schedule(ell, steps, safety), ell)
        return hi / lo

    left, right = bracket
    if not band_ratio(left) > ratio > band_ratio(right):
        raise ValueError(f"ratio {ratio} is not reached for ell in {bracket}")
    for _ in range(60):
        mid = (left + right) / 2
        left, right = (mid, right) if band_ratio(mid) > ratio else (left, mid)
    return right
