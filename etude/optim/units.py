"""Where Newton–Schulz units and parameter shards lie inside a parameter.

Muon orthogonalizes a parameter in units: the whole matrix, one attention head (a block of
rows or of columns), or one expert of a stacked `[E, out, in]` weight. A sharded parameter
(a DTensor) is split differently: each rank holds a hyper-rectangle chosen by its
placements. Both are described here as boxes, arrays of `[D, 2]` (start, stop) per tensor
dimension, so that the planner can ask the one question it needs answered: how many
elements of unit `u` does rank `r` hold (`overlap_numel`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch.distributed.tensor import Replicate, Shard
from torch.distributed.tensor.placement_types import _StridedShard

Box = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Granularity:
    """How a parameter is cut into Newton–Schulz units.

    kind: "matrix" (the whole 2-D parameter), "heads" (`heads` equal blocks of rows when
    `head_dim == 0`, of columns when `head_dim == 1`), or "experts" (a 3-D `[E, out, in]`
    tensor, one `out x in` unit per expert).
    """

    kind: str = "matrix"
    heads: int = 1
    head_dim: int = 0


def validate(name: str, shape: tuple[int, ...], g: Granularity) -> None:
    """Raise a ValueError naming `name` if `g` cannot cut a tensor of `shape`."""
    if g.kind == "experts":
        if len(shape) != 3:
            raise ValueError(
                f"parameter {name!r}: 'experts' needs a 3-D [E, out, in] tensor, "
                f"got shape {tuple(shape)}"
            )
        return
    if len(shape) != 2:
        raise ValueError(
            f"parameter {name!r}: Muon orthogonalizes matrices, got shape {tuple(shape)}; "
            "mark stacked experts with 'experts': True or leave the tensor to AdamW"
        )
    if g.kind == "heads":
        if g.head_dim not in (0, 1):
            raise ValueError(f"parameter {name!r}: head_dim must be 0 or 1, got {g.head_dim}")
        if g.heads < 1 or shape[g.head_dim] % g.heads:
            raise ValueError(
                f"parameter {name!r}: heads={g.heads} does not divide dimension "
                f"{g.head_dim} of size {shape[g.head_dim]}"
            )
    elif g.kind != "matrix":
        raise ValueError(f"parameter {name!r}: unknown granularity {g.kind!r}")


def unit_boxes(shape: tuple[int, ...], g: Granularity) -> np.ndarray:
    """Boxes `[U, D, 2]` of the units of a tensor of `shape`, in unit order."""
    full = np.array([[0, n] for n in shape], dtype=np.int64)
    if g.kind == "matrix":
        return full[None]
    if g.kind == "experts":
        boxes = np.repeat(full[None], shape[0], axis=0)
        boxes[:, 0, 0] = np.arange(shape[0])
        boxes[:, 0, 1] = np.arange(shape[0]) + 1
        return boxes
    size = shape[g.head_dim] // g.heads
    boxes = np.repeat(full[None], g.heads, axis=0)
    boxes[:, g.head_dim, 0] = np.arange(g.heads) * size
    boxes[:, g.head_dim, 1] = (np.arange(g.heads) + 1) * size
    return boxes


def unit_matrix_shape(shape: tuple[int, ...], g: Granularity) -> tuple[int, int]:
    """The `(rows, cols)` each unit is orthogonalized as."""
    if g.kind == "experts":
        return shape[1], shape[2]
    if g.kind == "heads":
        rows, cols = shape
        return (rows // g.heads, cols) if g.head_dim == 0 else (rows, cols // g.heads)
    return shape[0], shape[1]


def shard_boxes(
    name: str, shape: tuple[int, ...], mesh_shape: tuple[int, ...], placements: tuple
) -> np.ndarray:
    """Boxes `[*mesh_shape, D, 2]` of the local shard at every mesh coordinate.

    Follows DTensor's rules: mesh dimensions apply left to right, and `Shard(d)` splits the
    current extent of tensor dim `d` into `torch.chunk` pieces (ceil-sized, trailing ones
    possibly empty). Raises for placements other than `Shard` and `Replicate`.
    """
    boxes = np.zeros((*mesh_shape, len(shape), 2), dtype=np.int64)
    boxes[..., 1] = np.array(shape)
    for mesh_dim, placement in enumerate(placements):
        if isinstance(placement, Replicate):
            continue
        if not isinstance(placement, Shard) or isinstance(placement, _StridedShard):
            raise ValueError(
                f"parameter {name!r}: Muon cannot orthogonalize a DTensor with placement "
                f"{placement!r} on mesh dim {mesh_dim}; supported are Shard(d) and Replicate "
                "(reduce Partial gradients first; shard experts on a dim other than the EP dim "
                "to avoid _StridedShard)"
            )
        d = placement.dim
        n = mesh_shape[mesh_dim]
        coord = np.arange(n).reshape([n if i == mesh_dim else 1 for i in range(len(mesh_shape))])
        start, stop = boxes[..., d, 0].copy(), boxes[..., d, 1].copy()
        chunk = -(-(stop - start) // n)
        boxes[..., d, 0] = np.minimum(start + coord * chunk, stop)
        boxes[..., d, 1] = np.minimum(start + (coord + 1) * chunk, stop)
    return boxes


def overlap_numel(units: np.ndarray, shards: np.ndarray) -> np.ndarray:
    """Elements shared by each unit and each shard: `[U, D, 2] x [W, D, 2] -> [U, W]`."""
    lo = np.maximum(units[:, None, :, 0], shards[None, :, :, 0])
    hi = np.minimum(units[:, None, :, 1], shards[None, :, :, 1])
    return np.clip(hi - lo, 0, None).prod(axis=-1)


def intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The box shared by boxes `a` and `b` (`[D, 2]` each), or None when it is empty."""
    lo = np.maximum(a[:, 0], b[:, 0])
    hi = np.minimum(a[:, 1], b[:, 1])
    if np.any(hi <= lo):
        return None
    return np.stack([lo, hi], axis=1)


def slices_within(inner: np.ndarray, outer: np.ndarray) -> tuple[slice, ...]:
    """Index of box `inner` inside a tensor that holds box `outer`."""
    return tuple(slice(int(i0 - o0), int(i1 - o0)) for (i0, i1), (o0, _) in zip(inner, outer))
