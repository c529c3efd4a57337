"""The reference MoE transformer: names match the planner's shapes, KV-cache decoding equals
the full forward, experts' grouped matmul equals the loop, dense configs work."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from etude.models import KVCache, MoETransformer, preset
from etude.models.moe import LocalDispatch, expert_matmul, load_balancing_loss

TINY = preset("tiny")
DENSE_CONFIGS = {
    "no_experts": dataclasses.replace(TINY, n_experts=0),
    "all_dense_layers": dataclasses.replace(TINY, n_dense_layers=TINY.n_layers),
}


@pytest.mark.parametrize(
    "config",
    [TINY, dataclasses.replace(TINY, n_shared_experts=0), *DENSE_CONFIGS.values()],
    ids=["tiny", "no_shared", *DENSE_CONFIGS],
)
def test_named_parameters_match_parameter_shapes(config):
    model = MoETransformer(config)
    got = [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    want = [(p.name, p.shape) for p in config.parameter_shapes()]
    assert got == want
    assert sum(p.numel() for p in model.parameters()) == config.num_parameters()


def _tokens(b, t, seed=0):
    return torch.randint(0, TINY.vocab_size, (b, t), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("config", [TINY, DENSE_CONFIGS["no_experts"]], ids=["moe", "dense"])
def test_incremental_decoding_equals_full_forward(config):
    torch.manual_seed(0)
    model = MoETransformer(config).eval()
    tokens = _tokens(2, 12)
    with torch.no_grad():
        full = model(tokens)
        cache = KVCache.empty(config, batch=2, max_len=16)
        steps = [model(tokens[:, :5], cache=cache, start_pos=0)]
        steps += [model(tokens[:, p : p + 1], cache=cache, start_pos=p) for p in range(5, 12)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=1e-5)


def test_continuations_on_one_cached_prefix():
    torch.manual_seed(0)
    model = MoETransformer(TINY).eval()
    prefix, a, b = _tokens(1, 6, 1), _tokens(1, 4, 2), _tokens(1, 3, 3)
    with torch.no_grad():
        cache = KVCache.empty(TINY, batch=1, max_len=12)
        model(prefix, cache=cache, start_pos=0)
        on_a = model(a, cache=cache, start_pos=6)
        on_b = model(b, cache=cache, start_pos=6)  # overwrites a's positions
        full_a = model(torch.cat([prefix, a], dim=1))[:, 6:]
        full_b = model(torch.cat([prefix, b], dim=1))[:, 6:]
    torch.testing.assert_close(on_a, full_a, rtol=0, atol=1e-5)
    torch.testing.assert_close(on_b, full_b, rtol=0, atol=1e-5)


def test_cache_overflow_and_positions_with_cache_are_errors():
    model = MoETransformer(TINY)
    cache = KVCache.empty(TINY, batch=1, max_len=4)
    with pytest.raises(ValueError, match="do not fit a KV cache of 4"):
        model(_tokens(1, 3), cache=cache, start_pos=2)
    with pytest.raises(ValueError, match="either a KV cache or explicit positions"):
        model(_tokens(1, 3), cache=cache, positions=torch.arange(3))


def test_grouped_matmul_equals_loop_including_empty_experts():
    x = torch.randn(9, 16, requires_grad=True)
    w = torch.randn(4, 8, 16, requires_grad=True)
    counts = torch.tensor([3, 0, 6, 0])
    grads = []
    for grouped in (True, False):
        y = expert_matmul(x, w, counts, grouped=grouped)
        (gx, gw) = torch.autograd.grad((y * torch.arange(y.numel()).view_as(y)).sum(), (x, w))
        grads.append((y.detach(), gx, gw))
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
    assert grads[0][2][1].abs().max() == 0  # an expert without tokens gets a zero gradient


def test_explicit_positions_give_the_same_logits_in_any_order():
    # Context parallelism computes chunks of a sequence with their global positions.
    torch.manual_seed(0)
    model = MoETransformer(TINY)
    tokens = _tokens(2, 8)
    order = torch.tensor([4, 5, 6, 7, 0, 1, 2, 3])
    full = model(tokens)
    # Attention from the first half to the second is masked out by position, so the second
    # half alone (without keys at 0..3) differs; the whole permuted sequence must match.
    permuted = model(tokens[:, order], positions=order)
    torch.testing.assert_close(permuted, full[:, order], rtol=0, atol=1e-5)


def test_load_balancing_loss_is_one_when_uniform_and_larger_when_skewed():
    uniform = torch.full((8, 4), 0.25)
    ids = torch.arange(8).remainder(4).view(8, 1)
    assert load_balancing_loss(uniform, ids).item() == pytest.approx(1.0)
    skewed = F.one_hot(torch.zeros(8, dtype=torch.long), 4).float() * 0.7 + 0.075
    assert load_balancing_loss(skewed, torch.zeros(8, 1, dtype=torch.long)).item() > 2.5


def test_local_dispatch_round_trip():
    d = LocalDispatch(3)
    x = torch.randn(5, 4)
    ids = torch.tensor([[2, 0], [1, 2], [0, 1], [2, 1], [0, 2]])
    rows, counts, state = d.dispatch(x, ids)
    assert counts.tolist() == [3, 3, 4]
    torch.testing.assert_close(d.combine(rows, state), x.repeat_interleave(2, dim=0))


def test_training_a_few_steps_lowers_the_loss():
    torch.manual_seed(0)
    model = MoETransformer(TINY)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    tokens = _tokens(4, 33)
    losses = []
    for _ in range(10):
        logits, aux = model(tokens[:, :-1], return_aux_loss=True)
        loss = F.cross_entropy(logits.reshape(-1, TINY.vocab_size), tokens[:, 1:].reshape(-1))
        opt.zero_grad()
        (loss + TINY.aux_loss_weight * aux).backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 1.0


def test_a_forward_that_fills_the_cache_has_the_same_gradients():
    # The RL loss runs the student with a cache (to reuse its prefix for the teacher).
    torch.manual_seed(0)
    model = MoETransformer(TINY)
    tokens = _tokens(2, 10)
    grads = []
    for cache in (None, KVCache.empty(TINY, batch=2, max_len=10)):
        model.zero_grad()
        logits, aux = model(tokens, cache=cache, return_aux_loss=True)
        (logits.square().mean() + aux).backward()
        grads.append({n: p.grad.clone() for n, p in model.named_parameters()})
    for name, g in grads[0].items():
        torch.testing.assert_close(grads[1][name], g, rtol=1e-5, atol=1e-7, msg=name)


def test_logits_to_keep_equals_the_kept_rows_of_all_logits():
    """`logits_to_keep` (a [B, T] mask) gives the kept positions' logits in row-major order,
    with and without a KV cache."""
    torch.manual_seed(0)
    model = MoETransformer(preset("tiny")).eval()
    tokens = torch.randint(0, model.config.vocab_size, (3, 7))
    keep = torch.rand(3, 7) < 0.4
    keep[0, -1] = True
    with torch.no_grad():
        full = model(tokens)
        torch.testing.assert_close(model(tokens, logits_to_keep=keep), full[keep])
        cache = KVCache.empty(model.config, 3, 16)
        kept = model(tokens, cache=cache, start_pos=torch.tensor([0, 0, 0]), logits_to_keep=keep)
        torch.testing.assert_close(kept, full[keep], rtol=1e-4, atol=1e-4)
