"""Symmetric products in the Gram iteration ("gram_triangular"): each product equals the
full one, the iteration equals the Gram iteration with full products, the FLOPs and copies
are exactly as counted, and they run only when opted into (`ns_block`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from etude.optim import Muon
from etude.optim.newton_schulz import (
    QUINTIC,
    SYMMETRIC_BLOCK,
    choose_method,
    coefficient_schedule,
    gram_iteration,
    gram_restarts,
    newton_schulz,
    ns_flops,
    ns_mirror_numel,
    symmetric_matmul,
    symmetric_matmul_flops,
    symmetric_mirror_numel,
)
from etude.optim.sharded import ParamSpec, group_units
from etude.optim.units import Granularity

# (batch, side, inner, block): sides not a multiple of the block, one smaller than a block,
# a block of one row, and an exact multiple.
AWKWARD = [(3, 10, 7, 4), (2, 3, 5, 8), (1, 17, 30, 5), (4, 16, 16, 4), (2, 9, 4, 1)]


def _symmetric(batch: int, side: int, seed: int) -> torch.Tensor:
    a = torch.randn(batch, side, side, generator=torch.Generator().manual_seed(seed))
    return (a + a.mT) / side**0.5


@pytest.mark.parametrize(("batch", "side", "inner", "block"), AWKWARD)
def test_symmetric_products_equal_full_products(batch, side, inner, block):
    x = torch.randn(batch, side, inner, generator=torch.Generator().manual_seed(side))
    x = x / x.norm(dim=(-2, -1), keepdim=True)
    r = _symmetric(batch, side, 1)
    q = 0.5 * torch.eye(side) - 0.3 * r + 0.2 * r @ r  # a polynomial of r: they commute
    cases = {
        "X X^T": (symmetric_matmul(x, x.mT, block), x @ x.mT),
        "Q R": (symmetric_matmul(q, r, block), q @ r),
        "R Q": (symmetric_matmul(r, q, block), r @ q),
        "b R + c R R": (
            symmetric_matmul(r, r, block, add=r, beta=-4.775, alpha=2.0315),
            torch.baddbmm(r, r, r, beta=-4.775, alpha=2.0315),
        ),
        "c R R": (symmetric_matmul(r, r, block, alpha=0.5), 0.5 * r @ r),
    }
    block_of = torch.arange(side) // block
    below = block_of[:, None] > block_of[None, :]  # blocks below the diagonal: copies
    for name, (got, full) in cases.items():
        assert got.shape == full.shape == (batch, side, side)
        assert torch.equal(got[:, below], got.mT[:, below]), name
        torch.testing.assert_close(got, full, rtol=1e-5, atol=1e-6, msg=name)


def test_a_product_that_is_not_symmetric_is_not_what_it_computes():
    # Guards the test above: the lower blocks are copied, not computed.
    u, v = torch.randn(1, 8, 8), torch.randn(1, 8, 8)
    assert not torch.allclose(symmetric_matmul(u, v, 4), u @ v, atol=1e-3)


@pytest.mark.parametrize(("batch", "side", "inner", "block"), AWKWARD)
def test_flops_and_copies_of_one_product_are_as_counted(batch, side, inner, block):
    x = torch.randn(batch, side, inner)
    with FlopCounterMode(display=False) as counter:
        symmetric_matmul(x, x.mT, block)
    assert counter.get_total_flops() == batch * symmetric_matmul_flops(side, inner, block)
    # The computed blocks and the copied ones tile the square once.
    computed = symmetric_matmul_flops(side, 1, block) // 2
    assert computed + symmetric_mirror_numel(side, block) == side * side


def test_block_count_is_b_b_plus_1_over_2_of_b_squared():
    for blocks in (1, 2, 8, 16):
        side = blocks * 32
        full = 2 * side * side * 100
        assert symmetric_matmul_flops(side, 100, 32) * 2 * blocks == full * (blocks + 1)
        assert symmetric_mirror_numel(side, 32) * 2 * blocks == side * side * (blocks - 1)


@pytest.mark.parametrize("coefficients", [QUINTIC, "polar_express"])
@pytest.mark.parametrize("steps", [1, 2, 5, 6])
def test_triangular_equals_full_gram_in_fp32(coefficients, steps):
    schedule = coefficient_schedule(coefficients, steps)
    for shape, block in [((3, 24, 80), 5), ((2, 80, 24), 8), ((1, 7, 9), 16), ((2, 33, 40), 32)]:
        g = torch.randn(shape, generator=torch.Generator().manual_seed(steps))
        full = newton_schulz(g, schedule, dtype=torch.float32, method="gram")
        triangular = newton_schulz(
            g, schedule, dtype=torch.float32, method="gram_triangular", block=block
        )
        # The bound of the Gram iteration against the standard one (test_ns_gram.py).
        torch.testing.assert_close(triangular, full, rtol=0, atol=2e-5)


def test_triangular_in_bf16_stays_within_rounding_of_standard():
    schedule = coefficient_schedule(QUINTIC, 5)
    g = torch.randn(1, 96, 512, generator=torch.Generator().manual_seed(0))
    exact = newton_schulz(g, schedule, dtype=torch.float32, method="standard")

    def error(method: str) -> float:
        o = newton_schulz(g, schedule, dtype=torch.bfloat16, method=method, block=16)
        return float((o.float() - exact).norm() / exact.norm())

    assert error("gram_triangular") < 3 * error("standard")


class _CopiedElements(TorchDispatchMode):
    """Counts the elements written by copies (the mirror's slice assignments)."""

    def __init__(self) -> None:
        super().__init__()
        self.numel = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.copy_.default:
            self.numel += args[0].numel()
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(("shape", "block"), [((16, 96), 5), ((96, 16), 16), ((40, 40), 8)])
def test_ns_flops_and_copies_equal_what_runs(shape, block):
    for steps in (1, 2, 5, 6):  # phases 1; 2; 2 + 3; 2 + 3 + 1
        schedule = coefficient_schedule(QUINTIC, steps)
        x = torch.randn(2, *shape)
        if shape[0] > shape[1]:
            x = x.mT
        x = x / x.norm(dim=(-2, -1), keepdim=True)
        with FlopCounterMode(display=False) as counter, _CopiedElements() as copies:
            gram_iteration(x, schedule, gram_restarts(steps), block)
        assert counter.get_total_flops() == 2 * ns_flops(
            *shape, steps, "gram_triangular", block=block
        )
        assert copies.numel == 2 * ns_mirror_numel(*shape, steps, "gram_triangular", block=block)
    assert ns_mirror_numel(*shape, 5, "gram", block=block) == 0


def test_choose_method_takes_triangular_once_the_side_exceeds_a_block():
    block = SYMMETRIC_BLOCK
    assert block == 256
    assert choose_method(2048, 7168, 5, block) == "gram_triangular"
    assert choose_method(7168, 2048, 5, block) == "gram_triangular"
    assert choose_method(256, 7168, 5, block) == "gram"  # one block: the same products
    for m, n in [(2048, 7168), (1536, 7168), (128, 7168), (512, 512), (600, 800)]:
        costs = [ns_flops(m, n, 5, k, block=block) for k in ("standard", "gram", "gram_triangular")]
        assert ns_flops(m, n, 5, "auto", block=block) == min(costs)
    # K2's expert unit: 36 of the 64 blocks of each symmetric product; 6 of its 14 square
    # products full.
    ratio = ns_flops(2048, 7168, 5, "gram_triangular", block=block) / ns_flops(
        2048, 7168, 5, "gram"
    )
    assert ratio == pytest.approx(0.765625)


def test_symmetric_products_are_opt_in():
    # Without a block (every default), a shape where they would save FLOPs keeps full ones.
    assert choose_method(2048, 7168, 5) == "gram"
    assert ns_flops(2048, 7168, 5, "auto") == ns_flops(2048, 7168, 5, "gram")
    shape = (260, 400)  # the short side exceeds one block of 256 rows
    specs = [ParamSpec("w", shape, Granularity("matrix"))]
    boxes = [np.array([[[0, shape[0]], [0, shape[1]]]])]
    assert [u.method for u in group_units(specs, [0], boxes, 5, "auto")] == ["gram"]
    opted = group_units(specs, [0], boxes, 5, "auto", SYMMETRIC_BLOCK)
    assert [u.method for u in opted] == ["gram_triangular"]

    def muon_step_flops(**options) -> int:
        gen = torch.Generator().manual_seed(0)
        p = torch.nn.Parameter(torch.randn(shape, generator=gen))
        p.grad = torch.randn(shape, generator=gen)
        opt = Muon([p], **options)
        opt.step()
        return opt.last_step_stats.ns_flops

    assert muon_step_flops() == ns_flops(*shape, 5, "gram")
    assert muon_step_flops(ns_block=SYMMETRIC_BLOCK) == ns_flops(
        *shape, 5, "gram_triangular", block=SYMMETRIC_BLOCK
    )
    assert ns_flops(*shape, 5, "gram_triangular", block=SYMMETRIC_BLOCK) < ns_flops(
        *shape, 5, "gram"
    )


def test_muon_refuses_a_bad_block():
    p = [torch.nn.Parameter(torch.randn(4, 4))]
    with pytest.raises(ValueError, match="ns_block must be an int >= 1 or None"):
        Muon(p, ns_block=0)
    with pytest.raises(ValueError, match="needs an ns_block"):
        Muon(p, ns_method="gram_triangular", ns_block=None)
    with pytest.raises(ValueError, match="needs a block size"):
        newton_schulz(torch.randn(1, 4, 8), [QUINTIC], method="gram_triangular", block=None)
