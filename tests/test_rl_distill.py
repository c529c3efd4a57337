"""KL estimators against direct computation on small distributions (float64 loops)."""

from __future__ import annotations

import math

import pytest
import torch

from etude.rl.distill import (
    estimate,
    forward_kl,
    generalized_jsd,
    reverse_kl,
    sampled_token_kl,
    teacher_path_length,
    topk_reverse_kl,
)


def _logits(seed, n=3, v=7):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, v, generator=g, dtype=torch.float64) * 2


def _p(logits, temp=1.0):
    return [[math.exp(x / temp) for x in row] for row in logits.tolist()]


def _norm(rows):
    return [[x / sum(r) for x in r] for r in rows]


def _kl(p, q):
    return sum(a * math.log(a / b) for a, b in zip(p, q) if a > 0)


@pytest.mark.parametrize("temp", [1.0, 0.5, 2.0])
def test_reverse_and_forward_kl_equal_direct_sums(temp):
    s, t = _logits(0), _logits(1)
    ps, pt = _norm(_p(s)), _norm(_p(t, temp))
    want_rev = [_kl(a, b) for a, b in zip(ps, pt)]
    want_fwd = [_kl(b, a) for a, b in zip(ps, pt)]
    torch.testing.assert_close(
        reverse_kl(s, t, temp).double(),
        torch.tensor(want_rev, dtype=torch.float64),
        atol=1e-6,
        rtol=1e-5,
    )
    torch.testing.assert_close(
        forward_kl(s, t, temp).double(),
        torch.tensor(want_fwd, dtype=torch.float64),
        atol=1e-6,
        rtol=1e-5,
    )


@pytest.mark.parametrize("beta", [0.1, 0.5, 0.9])
def test_generalized_jsd_equals_mixture_definition(beta):
    s, t = _logits(2), _logits(3)
    ps, pt = _norm(_p(s)), _norm(_p(t))
    want = []
    for a, b in zip(ps, pt):
        m = [beta * y + (1 - beta) * x for x, y in zip(a, b)]
        want.append(beta * _kl(b, m) + (1 - beta) * _kl(a, m))
    got = generalized_jsd(s, t, beta).double()
    torch.testing.assert_close(got, torch.tensor(want, dtype=torch.float64), atol=1e-6, rtol=1e-5)
    with pytest.raises(ValueError, match="beta"):
        generalized_jsd(s, t, 1.0)


def test_topk_with_tail_bucket_equals_direct_and_full_when_k_covers_all_but_one():
    s, t = _logits(4), _logits(5)
    ps, pt = _norm(_p(s)), _norm(_p(t))
    k = 3
    want = []
    for a, b in zip(ps, pt):
        top = sorted(range(len(a)), key=lambda i: -a[i])[:k]
        a_b = [a[i] for i in top] + [1 - sum(a[i] for i in top)]
        b_b = [b[i] for i in top] + [1 - sum(b[i] for i in top)]
        want.append(_kl(a_b, b_b))
    got = topk_reverse_kl(s, t, k).double()
    torch.testing.assert_close(got, torch.tensor(want, dtype=torch.float64), atol=1e-6, rtol=1e-5)
    # with every token but one in the top-k, the tail bucket is that token: the full KL
    torch.testing.assert_close(
        topk_reverse_kl(s, t, s.shape[1] - 1), reverse_kl(s, t), atol=1e-5, rtol=1e-5
    )


def test_sampled_estimator_value_and_expected_gradient_equal_reverse_kl():
    s, t = _logits(6, n=1, v=5).float(), _logits(7, n=1, v=5).float()
    ls, lt = torch.log_softmax(s, -1), torch.log_softmax(t, -1)
    for x in range(5):
        got = sampled_token_kl(s, t, torch.tensor([x]))
        torch.testing.assert_close(got, (ls - lt)[:, x])
    # E_{x~p_s}[∇ surrogate(x)] == ∇ KL(s‖t): enumerate x with weights p_s(x)
    s_param = s.clone().requires_grad_(True)
    expected = torch.zeros_like(s)
    for x in range(5):
        (g,) = torch.autograd.grad(sampled_token_kl(s_param, t, torch.tensor([x])).sum(), s_param)
        expected += torch.softmax(s, -1)[0, x] * g
    (want,) = torch.autograd.grad(reverse_kl(s_param, t).sum(), s_param)
    torch.testing.assert_close(expected, want, atol=1e-5, rtol=1e-4)


def test_estimate_dispatch_and_unknown_name():
    s, t = _logits(8).float(), _logits(9).float()
    tokens = torch.tensor([0, 1, 2])
    torch.testing.assert_close(estimate("reverse_kl", s, t, tokens), reverse_kl(s, t))
    torch.testing.assert_close(estimate("forward_kl", s, t, tokens), forward_kl(s, t))
    with pytest.raises(ValueError, match="unknown KL estimator 'kl9'"):
        estimate("kl9", s, t, tokens)
    with pytest.raises(ValueError, match="teacher_temperature"):
        reverse_kl(s, t, 0.0)


def test_teacher_path_length_stops_at_the_first_token_the_teacher_would_not_pick():
    teacher = torch.full((4, 6), -5.0)
    teacher[torch.arange(4), torch.tensor([1, 2, 3, 4])] = 5.0  # arg-max 1, 2, 3, 4
    assert teacher_path_length(teacher, torch.tensor([1, 2, 3, 4])) == 4
    assert teacher_path_length(teacher, torch.tensor([1, 2, 0, 4])) == 3  # the departure counts
    assert teacher_path_length(teacher, torch.tensor([0, 2, 3, 4])) == 1
