"""Warm start: supervised training of the policy on demonstrations (trainable tokens only),
so that RL starts from a policy that can act and can read hints in its context."""

from __future__ import annotations

from collections.abc import Callable

import torch

from etude.rl.batch import pad_batch
from etude.rl.sft import sft_loss
from etude.rl.trajectory import ChatTokenizer, Message, tokenize


def warm_start(
    policy,
    optimizer: torch.optim.Optimizer,
    tok: ChatTokenizer,
    demos: Callable[[int], list[list[Message]]],
    steps: int,
    on_step: Callable[[int, float], None] | None = None,
) -> list[float]:
    """`steps` optimizer steps on batches `demos(step)` (lists of message lists, tokenized
    with `tok`, on the policy's device); returns the losses."""
    losses = []
    device = next(policy.parameters()).device
    for step in range(steps):
        tokenized = [tokenize(m, tok) for m in demos(step)]
        tokens, mask = pad_batch([t.tokens for t in tokenized], [t.trainable for t in tokenized])
        loss = sft_loss(policy, tokens.to(device), mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if on_step is not None:
            on_step(step, losses[-1])
    return losses
