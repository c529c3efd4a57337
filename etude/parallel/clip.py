"""Gradient-norm clipping over parameters sharded on different meshes, in one all-reduce.

Each rank sums the squares of its local gradient shards, each divided by the number of
ranks holding the same shard (the product of its `Replicate` mesh dimensions), so the sum
over the world is the squared norm of the full gradients. `torch.nn.utils.clip_grad_norm_`
cannot mix DTensors from two meshes; this needs a single scalar all-reduce for both.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed.tensor import DTensor, Replicate


def _copies(t: Tensor) -> int:
    if not isinstance(t, DTensor):
        return dist.get_world_size() if dist.is_initialized() else 1
    n = 1
    for size, placement in zip(t.device_mesh.shape, t.placements):
        if isinstance(placement, Replicate):
            n *= size
    # Ranks outside this mesh (none for our meshes, which span the world) would hold more.
    return n * (dist.get_world_size() // t.device_mesh.size() if dist.is_initialized() else 1)


def grad_norm(params: Iterable[Tensor]) -> Tensor:
    """The L2 norm of all gradients of `params` (plain tensors or DTensors), float32."""
    total = torch.zeros((), dtype=torch.float32)
    for p in params:
        if p.grad is None:
            continue
        g = p.grad.to_local() if isinstance(p.grad, DTensor) else p.grad
        total += g.float().square().sum() / _copies(p.grad)
    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.all_reduce(total)
    return total.sqrt()


def clip_grad_norm_(params: Iterable[Tensor], max_norm: float) -> Tensor:
    """Scale gradients in place so that their global norm is at most `max_norm`; returns
    the norm before clipping."""
    params = [p for p in params if p.grad is not None]
    norm = grad_norm(params)
    scale = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
    for p in params:
        p.grad.mul_(scale.item())
    return norm
