"""Device meshes built from a `Layout`: the dense FSDP mesh, the CP group, the expert mesh.

Every rank must call `build_meshes` with the same layout, in the same order relative to
other group creation (DeviceMesh creates its process groups collectively).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh

from etude.parallel.layout import Layout


@dataclass
class Meshes:
    """`dense`: 2-D (replicate, shard) mesh over R_d x (S_d*CP) ranks for dense weights;
    `cp`: this rank's context-parallel group; `expert`: 3-D (replicate, shard, ep) mesh;
    `stats`: a world-spanning group of its own for load-balancing statistics, loss and
    gradient-norm sums; `labels`: process-group name -> "family/role" for the groups that
    move data (more than one rank), for collective accounting."""

    layout: Layout
    dense: DeviceMesh
    cp: dist.ProcessGroup
    expert: DeviceMesh
    stats: dist.ProcessGroup
    labels: dict[str, str]

    @property
    def ep(self) -> dist.ProcessGroup:
        return self.expert.get_group("ep")

    @property
    def expert_fsdp(self) -> DeviceMesh:
        return self.expert["replicate", "shard"]

    def cp_rank(self) -> int:
        return dist.get_rank(self.cp)

    def data_rank(self) -> int:
        """Index of this rank's data-parallel group (which slice of the batch it reads)."""
        return dist.get_rank() // self.layout.cp


def build_meshes(layout: Layout) -> Meshes:
    """Create the meshes for `layout` on the current process group (CPU/gloo or CUDA)."""
    layout.check_fits(world_size=dist.get_world_size())
    device = "cuda" if torch.cuda.is_available() and dist.get_backend() == "nccl" else "cpu"
    # A mesh dimension spanning the world would otherwise reuse the default group, and two
    # roles (say CP and EP on 4 ranks) would share one group and be indistinguishable in the
    # collective accounting: naming the backend makes every dimension its own group.
    backend = (dist.get_backend(), None)
    dense_ranks = torch.from_numpy(layout.dense_ranks())
    dense = DeviceMesh(
        device,
        dense_ranks.reshape(layout.dense_replicate, layout.dense_shard * layout.cp),
        mesh_dim_names=("replicate", "shard"),
        backend_override=(backend, backend),
    )
    cp_mesh = DeviceMesh(
        device,
        dense_ranks.reshape(-1, layout.cp),
        mesh_dim_names=("data", "cp"),
        backend_override=(backend, backend),
    )
    expert = DeviceMesh(
        device,
        torch.from_numpy(layout.expert_ranks()),
        mesh_dim_names=("replicate", "shard", "ep"),
        backend_override=(backend, backend, backend),
    )
    stats = dist.new_group(list(range(layout.world_size)))
    groups = {
        "dense/replicate": dense.get_group("replicate"),
        "dense/shard": dense.get_group("shard"),
        "dense/cp": cp_mesh.get_group("cp"),
        "expert/replicate": expert.get_group("replicate"),
        "expert/shard": expert.get_group("shard"),
        "expert/ep": expert.get_group("ep"),
        "stats": stats,
    }
    labels = {g.group_name: label for label, g in groups.items() if g.size() > 1}
    return Meshes(layout, dense, cp_mesh.get_group("cp"), expert, stats, labels)
