"""Top-k expert routing: which experts each token goes to, and with what weight.

Two rules, both as the open checkpoints define them:
- softmax (etude's model, Qwen3-MoE, Mixtral): top-k of the softmax probabilities,
  optionally renormalized to sum to one;
- sigmoid (DeepSeek-V3, Kimi-K2): sigmoid scores; experts are *chosen* by score plus a
  score-correction bias, only within the `topk_group` best of `n_group` expert groups (a
  group's quality: the sum of its two best biased scores), and *weighted* by their unbiased
  scores, optionally renormalized, times `routed_scaling_factor`.

The sigmoid rule's bias is not trained by gradients: DeepSeek-V3's auxiliary-loss-free
balancing moves it after each step by a fixed rate towards equal expert loads
(`bias_balancing_update`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from etude.models.config import MoEConfig


def route(
    logits: Tensor, config: MoEConfig, bias: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """Router logits [N, E] -> (weights [N, k] float32, expert ids [N, k], probabilities
    [N, E] float32 for the load-balancing loss)."""
    logits = logits.float()
    k = config.top_k
    if config.router == "softmax":
        probs = logits.softmax(dim=-1)
        weights, ids = probs.topk(k, dim=-1)
        if config.norm_topk_prob:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights * config.routed_scaling_factor, ids, probs
    scores = logits.sigmoid()
    with torch.no_grad():
        choice = scores if bias is None else scores + bias.float()
        n, e = choice.shape
        groups = choice.view(n, config.n_group, e // config.n_group)
        group_quality = groups.topk(min(2, groups.shape[-1]), dim=-1).values.sum(-1)
        best = group_quality.topk(config.topk_group, dim=-1).indices
        keep = torch.zeros_like(group_quality, dtype=torch.bool).scatter_(1, best, True)
        keep = keep[:, :, None].expand_as(groups).reshape(n, e)
        ids = choice.masked_fill(~keep, float("-inf")).topk(k, dim=-1).indices
    weights = scores.gather(1, ids)
    if config.norm_topk_prob:
        weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-20)
    probs = scores / scores.sum(dim=-1, keepdim=True)
    return weights * config.routed_scaling_factor, ids, probs


def bias_balancing_update(load: Tensor, rate: float) -> Tensor:
    """The change to the score-correction bias [E] after a step (DeepSeek-V3, auxiliary-
    loss-free balancing): `rate` times sign(mean load - load), i.e. +rate for experts that
    got fewer than the mean of the step's routed token slots, -rate for those that got
    more, 0 at the mean. `load` [E]: slots routed to each expert over the whole batch."""
    load = load.float()
    return rate * torch.sign(load.mean() - load)
