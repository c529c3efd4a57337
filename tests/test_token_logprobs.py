"""`token_logprobs` works in blocks of positions with its own backward: its values, and the
gradients of the RL loss through it, equal log_softmax + gather's on awkward shapes (block
boundaries inside and between rows, a one-token row, bf16 logits)."""

from __future__ import annotations

import pytest
import torch

from etude.rl import loss
from etude.rl.loss import policy_gradient_loss, token_logprobs


def reference(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """The whole-tensor computation the blocks replace."""
    dtype = torch.promote_types(logits.dtype, torch.float32)
    lp = torch.log_softmax(logits[:, :-1].to(dtype), dim=-1).gather(-1, tokens[:, 1:, None])[..., 0]
    return torch.cat([torch.zeros_like(lp[:, :1]), lp], dim=1)


@pytest.mark.parametrize(("batch", "length", "block"), [(3, 23, 5), (2, 16, 15), (1, 9, 512)])
def test_blocks_give_the_same_loss_and_gradients(monkeypatch, batch, length, block):
    monkeypatch.setattr(loss, "LOGPROB_CHUNK", block)
    torch.manual_seed(0)
    logits = torch.randn(batch, length, 37, dtype=torch.float64) * 3
    tokens = torch.randint(0, 37, (batch, length))
    mask = torch.rand(batch, length) < 0.7
    old = reference(logits, tokens) + 0.3 * torch.randn(batch, length, dtype=torch.float64)
    advantages = torch.randn(batch, dtype=torch.float64)
    grads, losses = [], []
    for fn in (token_logprobs, reference):
        x = logits.clone().requires_grad_()
        lp = fn(x, tokens)
        value = policy_gradient_loss(lp, old, advantages, mask.double(), 0.2, 0.28)
        value.backward()
        losses.append(value.item())
        grads.append(x.grad)
    assert losses[0] == pytest.approx(losses[1], abs=1e-12)
    torch.testing.assert_close(grads[0], grads[1], rtol=0, atol=1e-12)
    assert grads[0][:, -1].abs().max() == 0  # the last position predicts nothing


def test_values_match_in_fp32_and_bf16_and_a_one_token_row(monkeypatch):
    monkeypatch.setattr(loss, "LOGPROB_CHUNK", 4)
    torch.manual_seed(1)
    tokens = torch.randint(0, 50, (2, 11))
    for dtype, atol in ((torch.float32, 1e-5), (torch.bfloat16, 1e-5)):
        logits = torch.randn(2, 11, 50).to(dtype)
        got = token_logprobs(logits, tokens)
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, reference(logits, tokens), rtol=0, atol=atol)
        x = logits.clone().requires_grad_()
        token_logprobs(x, tokens).sum().backward()
        assert x.grad.dtype == dtype
    one = token_logprobs(torch.randn(1, 1, 50), tokens[:1, :1])
    assert one.shape == (1, 1) and one.item() == 0.0
