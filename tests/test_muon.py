"""Single-process Muon: equal to torch.optim.Muon and to plain per-block references."""

from __future__ import annotations

import itertools
import math
import re

import pytest
import torch

from etude.optim import Muon
from etude.optim.newton_schulz import (
    QUINTIC,
    choose_method,
    coefficient_schedule,
    newton_schulz,
    ns_flops,
)

SHAPES = [(18, 40), (40, 18), (3, 7), (16, 16)]


def _params(shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s, generator=g)) for s in shapes]


def _grads(params, step):
    g = torch.Generator().manual_seed(100 + step)
    return [torch.randn(p.shape, generator=g) for p in params]


def _reference_ns(x: torch.Tensor, steps: int = 5, eps: float = 1e-7) -> torch.Tensor:
    """Keller Jordan's quintic iteration on one matrix, written out plainly, in fp32."""
    a, b, c = QUINTIC
    tall = x.shape[0] > x.shape[1]
    x = x.T if tall else x
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


def _reference_step(p, grad, buf, *, lr, wd, momentum, nesterov, adjust, blocks):
    """One Muon step on `p`, orthogonalizing each block view given by `blocks(t)`."""
    buf.mul_(momentum).add_(grad, alpha=1 - momentum)
    update = grad * (1 - momentum) + buf * momentum if nesterov else buf.clone()
    out = torch.empty_like(update)
    for index in blocks(update):
        block = update[index]
        rows, cols = block.shape
        scale = {
            None: math.sqrt(max(1, rows / cols)),
            "original": math.sqrt(max(1, rows / cols)),
            "match_rms_adamw": 0.2 * math.sqrt(max(rows, cols)),
        }[adjust]
        out[index] = _reference_ns(block) * scale
    p.mul_(1 - lr * wd).sub_(out * lr)


@pytest.mark.parametrize(
    "adjust,nesterov,wd",
    list(itertools.product([None, "original", "match_rms_adamw"], [True, False], [0.0, 0.1])),
)
def test_bf16_matches_torch_muon(adjust, nesterov, wd):
    ours, theirs = _params(SHAPES), _params(SHAPES)
    kw = dict(lr=0.02, weight_decay=wd, nesterov=nesterov, adjust_lr_fn=adjust)
    opt, ref = Muon(ours, **kw, ns_method="standard"), torch.optim.Muon(theirs, **kw)
    for step in range(3):
        for a, b, g in zip(ours, theirs, _grads(ours, step)):
            a.grad, b.grad = g.clone(), g.clone()
        opt.step()
        ref.step()
    for a, b in zip(ours, theirs):
        # Within bf16 rounding of the update: the orthogonalized update has entries of size
        # O(1); bf16 keeps 8 bits, so 1% of the largest learning-rate step per step bounds it.
        rows, cols = a.shape
        step_size = 0.02 * max(math.sqrt(max(1, rows / cols)), 0.2 * math.sqrt(max(rows, cols)))
        torch.testing.assert_close(a, b, rtol=0, atol=3 * 0.01 * step_size)


@pytest.mark.parametrize(
    "adjust,nesterov,wd",
    list(itertools.product([None, "match_rms_adamw"], [True, False], [0.0, 0.1])),
)
def test_fp32_equals_plain_reference(adjust, nesterov, wd):
    ours = _params(SHAPES)
    theirs = [p.detach().clone() for p in ours]
    bufs = [torch.zeros_like(p) for p in theirs]
    opt = Muon(
        ours,
        lr=0.02,
        weight_decay=wd,
        nesterov=nesterov,
        adjust_lr_fn=adjust,
        ns_dtype=torch.float32,
        ns_method="standard",
    )
    for step in range(3):
        for a, b, buf, g in zip(ours, theirs, bufs, _grads(ours, step)):
            a.grad = g
            _reference_step(
                b,
                g,
                buf,
                lr=0.02,
                wd=wd,
                momentum=0.95,
                nesterov=nesterov,
                adjust=adjust,
                blocks=lambda t: [(slice(None), slice(None))],
            )
        opt.step()
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a.detach(), b, rtol=0, atol=1e-6)


def _check_against_block_loop(p, group: dict, blocks, adjust) -> None:
    """Three Muon steps on `p` with `group` options equal the plain per-block loop."""
    ref = p.detach().clone()
    buf = torch.zeros_like(ref)
    opt = Muon(
        [{"params": [p], **group}],
        lr=0.02,
        ns_dtype=torch.float32,
        ns_method="standard",
        adjust_lr_fn=adjust,
    )
    for step in range(3):
        (g,) = _grads([p], step)
        p.grad = g
        _reference_step(
            ref, g, buf, lr=0.02, wd=0.1, momentum=0.95, nesterov=True, adjust=adjust,
            blocks=blocks,
        )  # fmt: skip
        opt.step()
    torch.testing.assert_close(p.detach(), ref, rtol=0, atol=1e-6)


@pytest.mark.parametrize("head_dim", [0, 1])
def test_per_head_equals_per_block_loop(head_dim):
    shape, heads = ((24, 10), 4) if head_dim == 0 else ((10, 24), 4)
    size = shape[head_dim] // heads

    def blocks(t):
        for h in range(heads):
            rows = slice(h * size, (h + 1) * size)
            yield (rows, slice(None)) if head_dim == 0 else (slice(None), rows)

    (p,) = _params([shape])
    _check_against_block_loop(p, {"heads": heads, "head_dim": head_dim}, blocks, "match_rms_adamw")


def test_per_expert_equals_per_block_loop():
    (p,) = _params([(5, 6, 9)])
    blocks = lambda t: [(e,) for e in range(t.shape[0])]  # noqa: E731
    _check_against_block_loop(p, {"experts": True}, blocks, None)


class _TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(32, 8)
        self.proj = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.lm_head = torch.nn.Linear(8, 32, bias=False)

    def forward(self, x):
        return self.lm_head(self.norm(self.proj(self.embed_tokens(x))))


def test_named_parameters_route_embeddings_heads_and_vectors_to_adamw():
    model = _TinyLM()
    opt = Muon(model.named_parameters(), lr=0.01)
    by_algorithm = {g["algorithm"]: set(g["param_names"]) for g in opt.param_groups}
    assert by_algorithm["muon"] == {"proj.weight"}
    assert by_algorithm["adamw"] == {
        "embed_tokens.weight",
        "proj.bias",
        "norm.weight",
        "norm.bias",
        "lm_head.weight",
    }


def test_adamw_part_equals_torch_adamw():
    torch.manual_seed(0)
    model, twin = _TinyLM(), _TinyLM()
    twin.load_state_dict(model.state_dict())
    for m in (model, twin):  # only the AdamW part moves, so both see the same gradients
        m.proj.weight.requires_grad_(False)
    opt = Muon(model.named_parameters(), lr=0.01, adamw_lr=3e-3, adamw_weight_decay=0.01)
    adamw_names = next(g["param_names"] for g in opt.param_groups if g["algorithm"] == "adamw")
    ref = torch.optim.AdamW(
        [p for n, p in twin.named_parameters() if n in adamw_names],
        lr=3e-3,
        betas=(0.9, 0.95),
        eps=1e-8,
        weight_decay=0.01,
    )
    x = torch.randint(0, 32, (4, 6))
    for _ in range(3):
        for m in (model, twin):
            m.zero_grad()
            m(x).logsumexp(-1).mean().backward()
        opt.step()
        ref.step()
    for (name, a), (_, b) in zip(model.named_parameters(), twin.named_parameters()):
        if name in adamw_names:
            torch.testing.assert_close(a, b, rtol=0, atol=1e-7)


def test_state_dict_round_trip_continues_identically():
    def run(steps, opt_state=None, params=None):
        params = params or _params(SHAPES)
        opt = Muon(params, lr=0.02, ns_dtype=torch.float32)
        if opt_state is not None:
            opt.load_state_dict(opt_state)
        for step in steps:
            for p, g in zip(params, _grads(params, step)):
                p.grad = g
            opt.step()
        return params, opt

    uninterrupted, _ = run(range(4))
    half, opt = run(range(2))
    saved_params = [p.detach().clone() for p in half]
    state = opt.state_dict()
    resumed, _ = run(range(2, 4), state, [torch.nn.Parameter(t) for t in saved_params])
    for a, b in zip(uninterrupted, resumed):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_gram_and_polar_express_variants():
    g = torch.randn(3, 16, 256, generator=torch.Generator().manual_seed(0))
    schedule = coefficient_schedule(QUINTIC, 5)
    standard = newton_schulz(g, schedule, dtype=torch.float32)
    gram = newton_schulz(g, schedule, dtype=torch.float32, method="gram")
    torch.testing.assert_close(gram, standard, rtol=0, atol=1e-4)
    assert choose_method(16, 256, 5) == "gram"
    assert choose_method(64, 64, 5) == "standard"
    assert ns_flops(16, 256, 5, "gram") < ns_flops(16, 256, 5, "standard")
    # Polar Express lands its singular values closer to 1 than the quintic in 5 steps.
    polar = newton_schulz(g, coefficient_schedule("polar_express", 5), dtype=torch.float32)
    err_polar = (torch.linalg.svdvals(polar) - 1).abs().max()
    err_quintic = (torch.linalg.svdvals(standard) - 1).abs().max()
    assert err_polar < err_quintic


def test_ns_flops_counted_per_step():
    (p,) = _params([(8, 32)])
    opt = Muon([{"params": [p], "heads": 2, "head_dim": 0}])
    p.grad = torch.ones_like(p)
    opt.step()
    assert opt.last_step_stats.ns_units == 2
    assert choose_method(4, 32, 5) == "gram"  # Muon's default "auto" asks choose_method
    assert opt.last_step_stats.ns_flops == 2 * ns_flops(4, 32, 5, "gram")


@pytest.mark.parametrize(
    "shape,group,message",
    [
        ((12, 8), {"heads": 5}, "'bad': heads=5 does not divide dimension 0 of size 12"),
        ((12, 8), {"heads": 4, "head_dim": 2}, "'bad': head_dim must be 0 or 1"),
        ((12, 8), {"experts": True}, "'bad': 'experts' needs a 3-D"),
        ((2, 2, 12, 8), {"algorithm": "muon"}, "'bad': Muon orthogonalizes matrices"),
        ((2, 12, 8), {"heads": 2}, "'bad': Muon orthogonalizes matrices"),
        ((12, 8), {"algorithm": "sgd"}, "algorithm must be 'muon' or 'adamw'"),
    ],
)
def test_bad_groups_name_the_parameter(shape, group, message):
    p = torch.nn.Parameter(torch.zeros(shape))
    with pytest.raises(ValueError, match=re.escape(message)):
        Muon([{"params": [("bad", p)], **group}])


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"adjust_lr_fn": "nope"}, "adjust_lr_fn must be one of"),
        ({"ns_method": "svd"}, "ns_method must be"),
        ({"ns_coefficients": (1.0, 2.0)}, "ns_coefficients must be three floats"),
        ({"ns_steps": 0}, r"ns_steps must be in \[1, 99\]"),
        ({"lr": -1.0}, "must be >= 0"),
        ({"max_in_flight": 0}, "max_in_flight must be >= 1"),
    ],
)
def test_bad_options_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Muon([torch.nn.Parameter(torch.zeros(4, 4))], **kwargs)


def test_mixed_parameter_dtypes_share_a_batch_exactly():
    # Pieces are cast to ns_dtype before batching, so a bf16 and an fp32 matrix of one shape
    # are orthogonalized together and each gets the update it would get alone.
    together = [
        torch.nn.Parameter(torch.ones(6, 10, dtype=d)) for d in (torch.bfloat16, torch.float32)
    ]
    alone = [torch.nn.Parameter(p.detach().clone()) for p in together]
    grads = [torch.randn(6, 10, generator=torch.Generator().manual_seed(i)) for i in range(2)]
    opt = Muon(together, lr=0.02)
    singles = [Muon([p], lr=0.02) for p in alone]
    for ps in (together, alone):
        for p, g in zip(ps, grads):
            p.grad = g.to(p.dtype)
    opt.step()
    for single in singles:
        single.step()
    assert opt.last_step_stats.ns_units == 2
    for a, b in zip(together, alone):
        assert a.dtype == b.dtype
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_gradient_dtype_mismatch_names_the_parameter():
    p = torch.nn.Parameter(torch.zeros(4, 4, dtype=torch.bfloat16))
    opt = Muon([("w", p)])
    p.grad_dtype = None  # torch refuses such a gradient unless told to allow any dtype
    p.grad = torch.ones(4, 4, dtype=torch.float32)
    with pytest.raises(ValueError, match=r"parameter .w.: gradient dtype torch\.float32 differs"):
        opt.step()


def test_passes_write_into_ns_buffers_and_strided_shards_keep_a_buffer():
    # Heads and experts: the momentum pass writes each direction straight into the NS
    # stacks and the update reads the NS results (no direction buffer). A transposed
    # parameter, and a non-contiguous gradient, get the same bits as contiguous copies: the
    # parameter keeps a direction buffer, the gradient is made contiguous.
    def run(strided: bool):
        g = torch.Generator().manual_seed(0)
        q, e = torch.randn(12, 10, generator=g), torch.randn(3, 4, 6, generator=g)
        t = torch.randn(9, 5, generator=g)
        params = [torch.nn.Parameter(x) for x in (q, e, t.T.contiguous().T if strided else t)]
        groups = [{"params": params[:1], "heads": 2}, {"params": params[1:]}]
        opt = Muon(groups, lr=0.02, weight_decay=0.1, ns_dtype=torch.float32)
        for _ in range(2):
            for p in params:
                grad = torch.randn(p.shape[::-1], generator=g).permute(*reversed(range(p.ndim)))
                p.grad = grad if strided else grad.contiguous()
            opt.step()
        ((_, path),) = opt._plans.values()
        return params, path

    got, path = run(strided=True)
    want, contiguous = run(strided=False)
    assert not got[2].is_contiguous() and not got[0].grad.is_contiguous()
    for a, b in zip(got, want):
        assert torch.equal(a, b)
    assert [d is not None for d in path.directions] == [False, False, True]
    assert [d is not None for d in contiguous.directions] == [False, False, False]
    assert all(at is not None for parts in contiguous.inputs for _, at in parts)
