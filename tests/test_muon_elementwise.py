"""Muon's fused elementwise passes equal the unfused reference, eagerly and compiled."""

from __future__ import annotations

import pytest
import torch

from etude.optim import Muon
from etude.optim.elementwise import apply_update, element_bytes, fused, momentum_direction
from etude.optim.plan import Assumptions, plan, predict

SHAPES = [(18, 40), (5, 6, 9), (3, 7)]


def _tensors(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g) for _ in range(4)]


def _reference(grad, buf, param, update, momentum, nesterov, decay, step):
    """The unfused ops Muon ran before (and torch.optim.Muon runs): lerp_, lerp, mul_, add_."""
    buf.lerp_(grad, 1 - momentum)
    direction = grad.lerp(buf, momentum) if nesterov else buf.clone()
    param.mul_(decay).add_(update, alpha=-step)
    return direction


@pytest.mark.parametrize("nesterov", [True, False])
def test_eager_passes_equal_unfused_reference(nesterov):
    for i, shape in enumerate(SHAPES):
        grad, buf, param, update = _tensors(shape, i)
        ref_buf, ref_param = buf.clone(), param.clone()
        momentum, decay, step = 0.95 - 0.05 * i, 1 - 0.02 * 0.1, 0.02 * (i + 1)
        want = _reference(grad, ref_buf, ref_param, update, momentum, nesterov, decay, step)
        got = torch.empty_like(grad)
        momentum_direction(grad, buf, momentum, nesterov, got)
        apply_update(param, update, decay, step)
        for a, b in ((got, want), (buf, ref_buf), (param, ref_param)):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


def test_compiled_passes_equal_eager_without_recompiling_for_new_scalars():
    # One compile per tensor rank, whatever the shapes and scalars (a learning-rate or
    # momentum schedule must not recompile every step).
    torch._dynamo.reset()
    direction, update = fused(momentum_direction), fused(apply_update)
    for i, (shape, momentum) in enumerate(
        [((18, 40), 0.9), ((6, 9), 0.95), ((3, 7), 0.97), ((7, 3), 0.8)]
    ):
        grad, buf, param, o = _tensors(shape, i)
        eager_buf, eager_param = buf.clone(), param.clone()
        got, want = (torch.empty_like(grad, dtype=torch.bfloat16) for _ in range(2))
        direction(grad, buf, momentum, True, got)
        momentum_direction(grad, eager_buf, momentum, True, want)
        update(param, o, 1 - 0.001 * i, 0.01 * (i + 1))
        apply_update(eager_param, o, 1 - 0.001 * i, 0.01 * (i + 1))
        assert got.dtype == torch.bfloat16
        torch.testing.assert_close(got.float(), want.float(), rtol=0, atol=0)
        torch.testing.assert_close(buf, eager_buf, rtol=0, atol=1e-6)
        torch.testing.assert_close(param, eager_param, rtol=0, atol=1e-6)
    frames = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    assert frames <= 2 * 2, f"{frames} graphs compiled for 2 functions on 2-D tensors"


def test_fused_muon_step_equals_eager_step():
    def run(fused_elementwise):
        g = torch.Generator().manual_seed(0)
        # 2-D only: the kernels compiled by the test above serve them, no new compile.
        params = [torch.nn.Parameter(torch.randn(s, generator=g)) for s in [(18, 40), (7, 3)]]
        opt = Muon(params, lr=0.02, ns_dtype=torch.float32, fused_elementwise=fused_elementwise)
        for _ in range(2):
            for p in params:
                p.grad = torch.randn(p.shape, generator=g)
            opt.step()
        return params

    for a, b in zip(run(True), run(False)):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


def test_planner_counts_fused_element_bytes():
    planned = plan("tiny", 8)
    fused_report = predict(planned, "h200", Assumptions(fused_elementwise=True))
    unfused_report = predict(planned, "h200", Assumptions(fused_elementwise=False))
    # fp32 parameters, bf16 NS: 5 x 4 + 2 x 2 fused, 11 x 4 + 2 x 2 unfused; the copies
    # to and from NS (2 x 2 each) and the norm pass of standard units do not depend on it.
    assert fused_report["element_bytes"]["local"] == element_bytes(4, 2, True).local == 24
    assert unfused_report["element_bytes"]["local"] == element_bytes(4, 2, False).local == 48
    assert fused_report["element_bytes"]["moved"] == unfused_report["element_bytes"]["moved"] == 4
    ratio = fused_report["time"]["elementwise_s"] / unfused_report["time"]["elementwise_s"]
    assert ratio < 1
