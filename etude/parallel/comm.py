"""Counting collective bytes by process group, for every collective a step issues.

`CollectiveBytes` is a TorchDispatchMode: it sees FSDP2's c10d collectives and the
functional collectives of expert and context parallelism alike, and adds each one's
buffer size under its process group's label (see `Meshes.labels`). Sizes follow one
convention, which the analytic model in `analytic.py` uses too: all-gather counts its
output, reduce-scatter its input, all-reduce its tensor, all-to-all its input.
"""

from __future__ import annotations

from collections import defaultdict

import torch.distributed as dist
from torch import Tensor
from torch.utils._python_dispatch import TorchDispatchMode

# op name -> (kind, index of the tensor argument counted, index of the group argument)
_OPS = {
    "c10d._allgather_base_.default": ("all_gather", 0, 2),
    "c10d._reduce_scatter_base_.default": ("reduce_scatter", 1, 2),
    "c10d.allreduce_.default": ("all_reduce", 0, 1),
    "c10d.alltoall_base_.default": ("all_to_all", 1, 2),
    "_c10d_functional.all_gather_into_tensor.default": ("all_gather", 0, 2),
    "_c10d_functional.reduce_scatter_tensor.default": ("reduce_scatter", 0, 3),
    "_c10d_functional.all_reduce.default": ("all_reduce", 0, 2),
    "_c10d_functional.all_to_all_single.default": ("all_to_all", 0, 3),
}


def _nbytes(x: Tensor | list) -> int:
    if isinstance(x, list | tuple):
        return sum(_nbytes(t) for t in x)
    return x.numel() * x.element_size()


class CollectiveBytes(TorchDispatchMode):
    """`with CollectiveBytes(labels) as c: ...` then `c.bytes[(label, kind)]`."""

    def __init__(self, labels: dict[str, str]):
        super().__init__()
        self.labels = labels
        self.bytes: dict[tuple[str, str], int] = defaultdict(int)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        entry = _OPS.get(str(func))
        if entry is not None:
            kind, tensor_at, group_at = entry
            group = args[group_at]
            name = group if isinstance(group, str) else dist.ProcessGroup.unbox(group).group_name
            if name not in self.labels:  # a one-rank group moves nothing
                return func(*args, **(kwargs or {}))
            size = _nbytes(args[tensor_at])
            if kind == "all_gather" and func.name().startswith("_c10d_functional"):
                size *= args[1]  # the functional form takes the input and the group size
            self.bytes[(self.labels[name], kind)] += size
        return func(*args, **(kwargs or {}))

    def by_family(self) -> dict[str, int]:
        """Bytes per family ("dense", "expert", "stats") summed over kinds and roles."""
        out: dict[str, int] = defaultdict(int)
        for (label, _), n in self.bytes.items():
            out[label.split("/")[0]] += n
        return dict(out)
