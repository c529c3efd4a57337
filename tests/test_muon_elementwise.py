"""Muon's fused elementwise passes equal the unfused reference, eagerly and compiled."""

from __future__ import annotations

import pytest
import torch

from etude.optim import Muon
from etude.optim.elementwise import (
    JustInTime,
    apply_update,
    element_bytes,
    fused,
    momentum_advance,
    momentum_direction,
    momentum_direction_only,
)
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
def test_split_momentum_pass_gives_the_bits_of_the_whole_one(nesterov):
    # A spread group's momentum pass in two: the direction over some elements (the buffer
    # read, not written), then the buffer's advance over all of them.
    for i, shape in enumerate(SHAPES):
        grad, buf, _, _ = _tensors(shape, i)
        momentum = 0.95 - 0.05 * i
        whole_buf, whole = buf.clone(), torch.empty_like(grad, dtype=torch.bfloat16)
        momentum_direction(grad, whole_buf, momentum, nesterov, whole)
        part = torch.empty_like(whole)
        momentum_direction_only(grad, buf, momentum, nesterov, part)
        assert torch.equal(buf, _tensors(shape, i)[1])  # untouched
        momentum_advance(grad, buf, momentum)
        assert torch.equal(part, whole) and torch.equal(buf, whole_buf)


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


def test_compiled_split_passes_give_the_bits_of_the_compiled_whole_pass():
    # What runs on CUDA is compiled: the split passes must still give the whole pass's
    # bits there (checked with the CPU compiler; the GPU's is the same expression in Triton).
    whole, only, advance = (
        fused(fn) for fn in (momentum_direction, momentum_direction_only, momentum_advance)
    )
    grad, buf, _, _ = _tensors((18, 40), 0)
    want_buf, want = buf.clone(), torch.empty_like(grad, dtype=torch.bfloat16)
    whole(grad, want_buf, 0.9, True, want)
    got = torch.empty_like(want)
    only(grad, buf, 0.9, True, got)
    advance(grad, buf, 0.9)
    assert torch.equal(got, want) and torch.equal(buf, want_buf)


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


def test_overlapped_muon_step_is_bit_identical_to_sequential(monkeypatch):
    # Single process (plain tensors, heads and experts), a job per unit shape: the
    # per-parameter order the overlap runs on CPU (updates of early jobs before momentum
    # passes of later ones) gives the same bits as all momentum passes, NS, then all updates.
    import etude.optim.muon as muon_module

    calls = []

    class Recorded(JustInTime):
        def prepare(self, params):
            calls.extend(("momentum", i) for i in params)
            super().prepare(params)

        def finished(self, i):
            calls.append(("update", i))
            super().finished(i)

    monkeypatch.setattr(muon_module, "JustInTime", Recorded)

    def run(overlap):
        g = torch.Generator().manual_seed(0)
        shapes = [(18, 40), (7, 3), (4, 6, 9)]
        params = [torch.nn.Parameter(torch.randn(s, generator=g)) for s in shapes]
        groups = [{"params": params[:1], "heads": 3, "head_dim": 0}, {"params": params[1:]}]
        opt = Muon(
            groups, lr=0.02, ns_dtype=torch.float32, job_numel=1, overlap_elementwise=overlap
        )
        for _ in range(2):
            for p in params:
                p.grad = torch.randn(p.shape, generator=g)
            opt.step()
        return params

    for a, b in zip(run(True), run(False)):
        assert torch.equal(a, b)
    first_update = calls.index(next(c for c in calls if c[0] == "update"))
    assert any(c[0] == "momentum" for c in calls[first_update : len(calls) // 2])
    with pytest.raises(ValueError, match="overlap_elementwise must be True, False or None"):
        Muon([torch.nn.Parameter(torch.zeros(2, 2))], overlap_elementwise="yes")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_overlapped_step_on_side_streams_is_bit_identical_on_cuda():
    # The stream path: momentum passes and updates on two side streams, ordered by events.
    def run(overlap):
        g = torch.Generator(device="cuda").manual_seed(0)
        shapes = [(256, 512), (64, 96), (8, 128, 64)]
        params = [torch.nn.Parameter(torch.randn(s, device="cuda", generator=g)) for s in shapes]
        opt = Muon(params, lr=0.02, job_numel=1 << 12, overlap_elementwise=overlap)
        for _ in range(3):
            for p in params:
                p.grad = torch.randn(p.shape, device="cuda", generator=g)
            opt.step()
        return [p.detach().cpu() for p in params]

    for a, b in zip(run(True), run(False)):
        assert torch.equal(a, b)


def test_just_in_time_runs_each_momentum_once_and_updates_after_it():
    calls = []
    passes = JustInTime(
        [lambda i=i: calls.append(("momentum", i)) for i in range(3)],
        {1: lambda: calls.append(("advance", 1))},
        [lambda i=i: calls.append(("update", i)) for i in range(3)],
    )
    passes.prepare((2, 0))
    passes.prepare((0,))
    passes.finished(0)
    with pytest.raises(RuntimeError, match="parameter 1: update issued before its momentum"):
        passes.finished(1)
    with pytest.raises(RuntimeError, match="parameter 1: advance issued before its momentum"):
        passes.advance((1,))
    with pytest.raises(RuntimeError, match="parameter 2: its momentum buffer has no advance"):
        passes.advance((2,))
    with pytest.raises(RuntimeError, match=r"parameters \[1, 2\] were never updated"):
        passes.close()
    passes.prepare((1,))
    passes.finished(2)
    passes.finished(1)
    with pytest.raises(RuntimeError, match=r"parameters \[1\]: momentum buffers never advanced"):
        passes.close()
    with passes.aside(), passes.ahead(), passes.behind():  # without streams: in line
        passes.advance((1,))
    passes.close()
    assert calls == [
        ("momentum", 2), ("momentum", 0), ("update", 0), ("momentum", 1), ("update", 2),
        ("update", 1), ("advance", 1),
    ]  # fmt: skip
    with pytest.raises(ValueError, match="3 momentum passes, 3 updates and advances"):
        JustInTime([lambda: None] * 3, {3: lambda: None}, [lambda: None] * 3)
