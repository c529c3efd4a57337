"""Expert parallelism: experts split over the EP group, tokens moved to them and back.

`AllToAllDispatch` replaces `MoE.dispatch`. For each MoE layer, each rank sorts its token
slots by expert, exchanges per-expert counts with one all-to-all, sends the rows with a
second (autograd) all-to-all, regroups what it received by local expert for the grouped
matmul, and reverses the path in `combine`. Row order is fixed by stable sorts, so the
result is deterministic; experts that receive no tokens simply have zero-size groups.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch import Tensor
from torch.distributed.tensor import Shard, distribute_tensor

from etude.models.moe import MoETransformer


class AllToAllDispatch:
    """`MoE.dispatch` for `n_experts` experts split evenly over the ranks of `group`."""

    def __init__(self, group: dist.ProcessGroup, n_experts: int):
        self.group = group
        self.ep = dist.get_world_size(group)
        if n_experts % self.ep:
            raise ValueError(f"{n_experts} experts do not divide evenly over EP={self.ep} ranks")
        self.n_experts, self.local = n_experts, n_experts // self.ep

    def dispatch(self, x: Tensor, expert_ids: Tensor) -> tuple[Tensor, Tensor, Any]:
        """x [N, dim], expert_ids [N, k] -> (rows for this rank's experts, grouped by local
        expert; counts [E/EP]; state for `combine`)."""
        flat = expert_ids.flatten()
        order = flat.argsort(stable=True)
        counts = torch.bincount(flat, minlength=self.n_experts)
        received_counts = torch.empty_like(counts)
        dist.all_to_all_single(received_counts, counts, group=self.group)
        received_counts = received_counts.view(self.ep, self.local)  # [source, local expert]
        send = counts.view(self.ep, self.local).sum(1).tolist()
        recv = received_counts.sum(1).tolist()
        rows = funcol.all_to_all_single_autograd(
            x[order // expert_ids.shape[1]], recv, send, self.group
        )
        # Received rows are ordered (source, local expert); the matmul wants (expert, source).
        expert_of_row = torch.arange(self.local).repeat(self.ep)
        expert_of_row = expert_of_row.repeat_interleave(received_counts.flatten())
        regroup = expert_of_row.argsort(stable=True)
        return rows[regroup], received_counts.sum(0), (order, regroup, send, recv)

    def combine(self, y: Tensor, state: Any) -> Tensor:
        """Expert outputs (dispatch order) -> rows in this rank's slot order [N*k, dim]."""
        order, regroup, send, recv = state
        back = funcol.all_to_all_single_autograd(y[regroup.argsort()], send, recv, self.group)
        return back[order.argsort()]


def apply_expert_parallel(model: MoETransformer, ep_mesh) -> None:
    """Split every MoE layer's stacked experts over the 1-D `ep_mesh` (DTensor `Shard(0)`,
    each rank keeping its slice of the full weights it holds) and route tokens with
    all-to-all. With EP=1 the weights still become DTensors so both families look alike
    to FSDP, the optimizer and checkpoints."""
    group = ep_mesh.get_group()
    for block in model.layers:
        if not hasattr(block, "moe"):
            continue
        experts = block.moe.experts
        for name in ("w1", "w2", "w3"):
            full = getattr(experts, name).detach()
            sharded = distribute_tensor(full, ep_mesh, [Shard(0)], src_data_rank=None)
            setattr(experts, name, torch.nn.Parameter(sharded))
        block.moe.dispatch = AllToAllDispatch(group, model.config.n_experts)
