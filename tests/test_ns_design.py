"""The scalar design of Newton–Schulz schedules (etude.optim.ns_design) and "minimax_4"."""

import math

import pytest
import torch

from etude.optim.newton_schulz import MINIMAX_4, QUINTIC, coefficient_schedule, newton_schulz
from etude.optim.ns_design import (
    band_matched_ell,
    covered_interval,
    image,
    minimax_schedule,
    minimax_step,
    quintic_band,
    schedule_band,
)

# the band and interval benchmarks/results/ns_schedule_design.json states for minimax_4
ELL, BAND = 0.0023744194212112495, (0.7237357369800009, 1.2762642630199998)


def _dense_band(schedule, ell, n=200_001):
    """The composed map's range on a dense log-spaced grid of [ell, 1] (a check of `image`
    by sampling, independent of its critical-point argument)."""
    x = torch.logspace(math.log10(ell), 0, n, dtype=torch.float64)
    for a, b, c in schedule:
        x = x * (a + x * x * (b + c * x * x))
    return float(x.min()), float(x.max())


def test_image_is_the_sampled_range():
    for lo, hi in [(0.001, 1.0), (0.5, 1.3), (0.7, 0.9)]:
        exact = image(QUINTIC, lo, hi)
        grid = torch.linspace(lo, hi, 100_001, dtype=torch.float64)
        y = grid * (QUINTIC[0] + grid**2 * (QUINTIC[1] + QUINTIC[2] * grid**2))
        assert exact[0] == pytest.approx(float(y.min()), abs=1e-9)
        assert exact[1] == pytest.approx(float(y.max()), abs=1e-9)


def test_quintic_band_and_interval():
    lo, hi = quintic_band(QUINTIC)
    assert (round(lo, 4), round(hi, 4)) == (0.6818, 1.2024)
    ell = covered_interval(QUINTIC, 5, (lo, hi))
    assert 0.0015 < ell < 0.00151
    # 5 steps bring [ell, 1] into the band, 4 do not, and a smaller ell is not covered
    assert _dense_band([QUINTIC] * 5, ell)[0] >= lo - 1e-9
    assert _dense_band([QUINTIC] * 4, ell)[0] < 0.25
    assert _dense_band([QUINTIC] * 5, 0.98 * ell)[0] < lo - 1e-3


def test_minimax_step_equioscillates():
    (a, b, c), error = minimax_step(0.1, 1.0)
    x = torch.linspace(0.1, 1.0, 100_001, dtype=torch.float64)
    deviation = (1 - x * (a + x * x * (b + c * x * x))).abs().max()
    assert float(deviation) == pytest.approx(abs(error), rel=1e-6)
    # a wider interval cannot be approximated better
    assert abs(minimax_step(0.01, 1.0)[1]) > abs(error)


def test_minimax_4_is_the_design_and_stays_in_its_band():
    design = minimax_schedule(ELL, 4)
    for got, want in zip(MINIMAX_4, design, strict=True):
        assert got == pytest.approx(want, rel=1e-12)
    band = schedule_band(MINIMAX_4, ELL)
    assert band == pytest.approx(BAND, abs=1e-9)
    sampled = _dense_band(MINIMAX_4, ELL)
    assert BAND[0] - 1e-9 <= sampled[0] and sampled[1] <= BAND[1] + 1e-9
    # the band has the quintic's ratio of ends, and ELL is where the design reaches it
    lo, hi = quintic_band(QUINTIC)
    assert band[1] / band[0] == pytest.approx(hi / lo, rel=1e-9)
    assert band_matched_ell(4, hi / lo) == pytest.approx(ELL, rel=1e-9)
    # the safety factor: singular values up to 1.01 (rounding) stay in the band's top
    lo_hi = (ELL, 1.01)
    for coefficients in MINIMAX_4:
        lo_hi = image(coefficients, *lo_hi)
    assert lo_hi[1] <= BAND[1] + 1e-9


def test_on_the_quintic_interval_four_steps_are_wider():
    """No 4-step schedule brings the quintic's whole interval into a band that narrow."""
    lo, hi = quintic_band(QUINTIC)
    ell = covered_interval(QUINTIC, 5, (lo, hi))
    best = schedule_band(minimax_schedule(ell, 4, safety=1.0), ell)
    assert best[1] / best[0] > 1.3 * hi / lo


def test_coefficient_schedule_minimax_4():
    assert coefficient_schedule("minimax_4", 4) == list(MINIMAX_4)
    for steps in (3, 5):
        with pytest.raises(ValueError, match="exactly 4 steps"):
            coefficient_schedule("minimax_4", steps)
    with pytest.raises(ValueError, match="minimax_4"):
        coefficient_schedule("minimax_5", 4)


def test_bad_design_input():
    with pytest.raises(ValueError, match="0 < lo < hi"):
        minimax_step(0.5, 0.5)
    with pytest.raises(ValueError, match="steps >= 1"):
        minimax_schedule(0.01, 0)
    with pytest.raises(ValueError, match="safety"):
        minimax_schedule(0.01, 4, safety=0.9)


def test_minimax_4_orthogonalizes_as_its_scalar_map():
    """On a matrix G = U diag(s) V^T, fp32 iteration gives U diag(f(s / |s|)) V^T for the
    composed scalar map f: every normalized singular value in [ELL, 1] lands in the band."""
    torch.manual_seed(0)
    u, _ = torch.linalg.qr(torch.randn(48, 48, dtype=torch.float64))
    v, _ = torch.linalg.qr(torch.randn(96, 48, dtype=torch.float64))
    s = torch.cat([torch.logspace(-3, 0, 47, dtype=torch.float64), torch.tensor([8.0])])
    g = (u * s) @ v.T
    o = newton_schulz(g[None].float(), coefficient_schedule("minimax_4", 4), dtype=torch.float32)
    got = (u.T @ o[0].double() @ v).diagonal()
    x = s / s.norm()
    want = x.clone()
    for a, b, c in MINIMAX_4:
        want = want * (a + want * want * (b + c * want * want))
    assert torch.allclose(got, want, atol=1e-4)
    inside = x >= ELL
    assert inside.sum() > 20 and not inside.all()
    assert got[inside].min() >= BAND[0] - 1e-4 and got.max() <= BAND[1] + 1e-4


def test_muon_refuses_minimax_4_at_other_step_counts():
    from etude.optim import Muon

    w = torch.nn.Parameter(torch.randn(8, 16))
    Muon([w], ns_coefficients="minimax_4", ns_steps=4)
    with pytest.raises(ValueError, match="exactly 4 steps"):
        Muon([w], ns_coefficients="minimax_4")
