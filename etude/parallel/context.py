"""Context parallelism: split each sequence over the CP group, gather keys and values.

Each CP rank takes two of the 2*CP equal chunks of a sequence, chunk r and chunk 2*CP-1-r,
so that every rank has the same amount of causal attention work (early chunks attend to
little, late ones to much). Attention all-gathers keys, values and their positions over the
CP group with autograd functional collectives (backward: reduce-scatter of their
gradients), and masks by position, so gradients are exact.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch import Tensor

from etude.models.moe import MoETransformer


def chunk_positions(seq_len: int, cp: int, cp_rank: int) -> Tensor:
    """Positions [seq_len / cp] that CP rank `cp_rank` holds: chunks r and 2*cp-1-r."""
    if seq_len % (2 * cp):
        raise ValueError(f"sequence length {seq_len} is not divisible by 2*CP={2 * cp}")
    size = seq_len // (2 * cp)
    first, second = cp_rank * size, (2 * cp - 1 - cp_rank) * size
    return torch.cat([torch.arange(first, first + size), torch.arange(second, second + size)])


class AllGatherKV:
    """`Attention.gather_kv` for a CP group: k, v [B, T_local, H, D] -> [B, T, H, D]."""

    def __init__(self, group: dist.ProcessGroup):
        self.group = group

    def __call__(self, k: Tensor, v: Tensor, positions: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        k = funcol.all_gather_tensor_autograd(k.contiguous(), gather_dim=1, group=self.group)
        v = funcol.all_gather_tensor_autograd(v.contiguous(), gather_dim=1, group=self.group)
        positions = funcol.all_gather_tensor(positions, gather_dim=0, group=self.group)
        return k, v, positions


def apply_context_parallel(model: MoETransformer, group: dist.ProcessGroup) -> None:
    """Make every attention layer gather keys/values over `group` (a no-op for size 1)."""
    if dist.get_world_size(group) == 1:
        return
    for block in model.layers:
        block.attention.gather_kv = AllGatherKV(group)
