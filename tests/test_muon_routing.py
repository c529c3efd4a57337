"""Muon's routing: every parameter's destination and reason, strict mode, and 3-D tensors
passed without group options orthogonalized per expert (never silently left to AdamW)."""

from __future__ import annotations

import math
import re

import pytest
import torch

from etude.models import MoETransformer, preset
from etude.optim import Muon


def _grads(params, step):
    g = torch.Generator().manual_seed(100 + step)
    return [torch.randn(p.shape, generator=g) for p in params]


def test_strict_raises_naming_the_parameter():
    conv = torch.nn.Parameter(torch.zeros(4, 3, 2, 2))
    with pytest.raises(ValueError, match=re.escape("parameter 'conv.weight' (shape (4, 3, 2, 2))")):
        Muon([("conv.weight", conv), ("w", torch.nn.Parameter(torch.zeros(3, 3)))], strict=True)
    with pytest.raises(ValueError, match=re.escape("parameter 'group 1, parameter 0'")):
        Muon(
            [{"params": [torch.nn.Parameter(torch.zeros(3, 3))]}, {"params": [conv]}],
            strict=True,
        )
    # Without strict the same tensor goes to AdamW, and the route says it fell back.
    (r,) = [r for r in Muon([("conv.weight", conv)]).routing]
    assert (r.algorithm, r.rule) == ("adamw", "no_unit")
    # Told to, or by a named reason, AdamW is fine under strict.
    Muon([{"params": [("conv.weight", conv)], "algorithm": "adamw"}], strict=True)
    Muon([("embed_tokens.weight", torch.nn.Parameter(torch.zeros(8, 4)))], strict=True)


def test_plain_parameter_list_of_an_moe_routes_expert_stacks_per_expert():
    model = MoETransformer(preset("tiny"))
    opt = Muon(list(model.parameters()), strict=True)
    names = [n for n, _ in model.named_parameters()]
    routes = dict(zip(names, opt.routing))
    experts = [n for n in names if ".experts." in n]
    assert experts, "the tiny preset lost its routed experts"
    for n in experts:
        r = routes[n]
        assert (r.algorithm, r.rule, r.granularity.kind) == ("muon", "stacked_experts", "experts")
        assert r.units.startswith(f"{r.shape[0]} experts of {r.shape[1]}x{r.shape[2]}")
    for n, r in routes.items():
        expected = "muon" if len(r.shape) >= 2 else "adamw"  # names unknown: 2-D is Muon
        assert r.algorithm == expected, n
    # The expert stacks form a Muon group of their own, marked as experts.
    expert_groups = [g for g in opt.param_groups if g.get("experts")]
    assert sum(len(g["params"]) for g in expert_groups) == len(experts)
    text = opt.routing_report()
    assert "stacked_experts: a 3-D tensor with no group option" in text
    muon_numel = sum(math.prod(r.shape) for r in opt.routing if r.algorithm == "muon")
    assert f"({muon_numel} of {sum(p.numel() for p in model.parameters())} elements)" in text


def test_named_parameters_report_names_and_reasons():
    model = MoETransformer(preset("tiny"))
    opt = Muon(model.named_parameters())
    by_name = {r.label: r for r in opt.routing}
    assert by_name["tok_embeddings.weight"].rule == "embedding_or_head"
    assert by_name["output.weight"].algorithm == "adamw"
    assert by_name["layers.1.moe.router.weight"].algorithm == "adamw"
    assert by_name["layers.0.attention_norm.weight"].rule == "not_a_matrix"
    assert by_name["layers.1.moe.experts.w1"].rule == "stacked_experts"
    assert by_name["layers.0.attention.wq.weight"].units == "1 matrix of 64x64"
    line = next(x for x in opt.routing_report().splitlines() if x.startswith("output.weight"))
    assert "adamw" in line and "output head" in line


def _expert_stack_model(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.nn.Parameter(torch.randn(5, 6, 9, generator=g)),
        torch.nn.Parameter(torch.randn(3, 10, 4, generator=g)),
        torch.nn.Parameter(torch.randn(7, 12, generator=g)),
    ]


def test_implied_experts_equal_torch_muon_per_expert():
    """A plain list with 3-D stacks equals torch.optim.Muon run on every expert slice as its
    own 2-D parameter (both bf16 Newton–Schulz, as torch.optim.Muon always is)."""
    ours = _expert_stack_model()
    slices = [
        torch.nn.Parameter(p.detach()[e].clone()) if p.ndim == 3 else None
        for p in ours
        for e in range(p.shape[0] if p.ndim == 3 else 1)
    ]
    theirs = [s for s in slices if s is not None] + [torch.nn.Parameter(ours[2].detach().clone())]
    kw = dict(lr=0.02, weight_decay=0.1)
    opt, ref = Muon(ours, **kw, ns_method="standard"), torch.optim.Muon(theirs, **kw)
    for step in range(3):
        grads = _grads(ours, step)
        for p, g in zip(ours, grads):
            p.grad = g.clone()
        expert_grads = [g[e] for g in grads[:2] for e in range(g.shape[0])] + [grads[2]]
        for p, g in zip(theirs, expert_grads):
            p.grad = g.clone()
        opt.step()
        ref.step()
    got = [p[e] for p in ours[:2] for e in range(p.shape[0])] + [ours[2]]
    for a, b in zip(got, theirs):
        # Within bf16 rounding of the update (momentum is rounded differently: written out
        # here, lerp there), as in test_muon.test_bf16_matches_torch_muon.
        rows, cols = b.shape
        step_size = 0.02 * math.sqrt(max(1, rows / cols))
        torch.testing.assert_close(a.detach(), b.detach(), rtol=0, atol=3 * 0.01 * step_size)


def test_implied_experts_equal_explicit_experts_group_fp32():
    implied, explicit = _expert_stack_model(), _expert_stack_model()
    kw = dict(lr=0.02, ns_dtype=torch.float32)
    opt_implied = Muon(implied, **kw)
    opt_explicit = Muon([{"params": explicit[:2], "experts": True}, {"params": explicit[2:]}], **kw)
    for step in range(3):
        for ps in (implied, explicit):
            for p, g in zip(ps, _grads(ps, step)):
                p.grad = g
        opt_implied.step()
        opt_explicit.step()
    assert opt_implied.last_step_stats.ns_units == 5 + 3 + 1
    for a, b in zip(implied, explicit):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
