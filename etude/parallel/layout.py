"""Dual-mesh layouts: one HSDP layout for dense weights, an independent one for experts.

Dense family: `dense_replicate` (R_d) x `dense_shard` (S_d) x `cp` ranks; dense weights are
FSDP-sharded over S_d*CP (CP ranks hold different tokens of the same sequences, so they
shard weights like data-parallel ranks) and replicated over R_d.
Expert family: `expert_replicate` (R_e) x `expert_shard` (S_e) x `ep` ranks; stacked
experts `[E, out, in]` are split over EP along E and FSDP-sharded over S_e along `out`.

Both products equal the world size, and nothing else ties them: CP=2 with EP=8 fits on 8
ranks, where a single shared mesh (EP carved out of the dense data-parallel dimensions, as
torchtitan requires) needs 16.

Ranks are numbered row-major over (replicate, shard, cp) and (replicate, shard, ep), the
innermost dimension fastest: with `ranks_per_node`, dense FSDP and CP groups then lie inside
one node, and the wide expert group spans nodes.

Gradients. Each rank's loss is the mean over its own tokens, and the global loss is the
mean over ranks, so every gradient is (1/W) * the sum over the W ranks' contributions. A
contribution reaches a parameter's gradient on other ranks through the autograd
collectives (CP's key/value all-gather, EP's all-to-all) before FSDP reduces it over the
family's replicate x shard ranks. `gradient_reductions()` derives both groups for each
family and proves that every rank's contribution is summed exactly once; the divide factor
is then W for both families, whereas FSDP's default divides by its own mesh size, which for
experts is W/EP: the classic "expert gradients are EP times too large" bug.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from etude.models.config import MoEConfig


class LayoutError(ValueError):
    """A layout that does not fit the world, the model or the sequence length."""


@dataclass(frozen=True)
class Layout:
    """A declarative dual-mesh layout; see the module docstring. Validated on creation."""

    dense_replicate: int = 1
    dense_shard: int = 1
    cp: int = 1
    expert_replicate: int = 1
    expert_shard: int = 1
    ep: int = 1
    ranks_per_node: int | None = None

    def __post_init__(self) -> None:
        for name in ("dense_replicate", "dense_shard", "cp", "expert_replicate", "ep"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise LayoutError(f"layout {name} must be a positive integer, got {value!r}")
        if not isinstance(self.expert_shard, int) or self.expert_shard < 1:
            raise LayoutError(
                f"layout expert_shard must be a positive integer, got {self.expert_shard!r}"
            )
        dense, expert = self.dense_size, self.expert_size
        if dense != expert:
            raise LayoutError(
                f"the dense family spans {self.dense_replicate}x{self.dense_shard}x{self.cp}="
                f"{dense} ranks but the expert family spans {self.expert_replicate}x"
                f"{self.expert_shard}x{self.ep}={expert}; both must equal the world size"
            )
        if self.ranks_per_node is not None:
            narrow = self.dense_shard * self.cp
            if self.ranks_per_node < 1 or dense % self.ranks_per_node:
                raise LayoutError(
                    f"ranks_per_node={self.ranks_per_node} does not divide the world size {dense}"
                )
            if self.ranks_per_node % narrow:
                raise LayoutError(
                    f"the dense FSDP x CP group of {self.dense_shard}x{self.cp}={narrow} ranks "
                    f"does not divide a node of {self.ranks_per_node} ranks, so it would "
                    "cross nodes"
                )

    @property
    def dense_size(self) -> int:
        return self.dense_replicate * self.dense_shard * self.cp

    @property
    def expert_size(self) -> int:
        return self.expert_replicate * self.expert_shard * self.ep

    @property
    def world_size(self) -> int:
        return self.dense_size

    @property
    def data_parallel(self) -> int:
        """How many groups of ranks see different sequences (CP ranks share sequences)."""
        return self.world_size // self.cp

    def check_fits(
        self,
        world_size: int | None = None,
        model: MoEConfig | None = None,
        seq_len: int | None = None,
        batch_size: int | None = None,
    ) -> None:
        """Raise LayoutError, in one sentence, if the layout does not fit the given world
        size, model (experts over EP, expert widths over S_e), sequence length or global
        batch size (sequences). Needs no process group: call it before any collective."""
        if world_size is not None and world_size != self.world_size:
            raise LayoutError(
                f"the layout needs {self.world_size} ranks "
                f"({self.dense_replicate}x{self.dense_shard}x{self.cp} dense, "
                f"{self.expert_replicate}x{self.expert_shard}x{self.ep} expert) "
                f"but the job has {world_size}"
            )
        if model is not None:
            self._check_model(model)
        if seq_len is not None and seq_len % (2 * self.cp):
            raise LayoutError(
                f"sequence length {seq_len} is not divisible by 2*CP={2 * self.cp} "
                "(each CP rank takes two load-balanced chunks)"
            )
        if batch_size is not None and batch_size % self.data_parallel:
            raise LayoutError(
                f"global batch of {batch_size} sequences does not divide over "
                f"{self.data_parallel} data-parallel groups "
                f"(world {self.world_size} / CP {self.cp})"
            )

    def _check_model(self, model: MoEConfig) -> None:
        if model.n_experts == 0:
            if self.ep > 1 or self.expert_shard > 1:
                raise LayoutError(
                    f"a model without experts cannot use EP={self.ep} or expert_shard="
                    f"{self.expert_shard}"
                )
            return
        if model.n_experts % self.ep:
            raise LayoutError(
                f"{model.n_experts} experts do not divide evenly over EP={self.ep} ranks"
            )
        # FSDP splits each expert's rows (dim 1 of [E, out, in]) and needs them even.
        for width in (model.expert_ffn_dim, model.dim):
            if width % self.expert_shard:
                raise LayoutError(
                    f"expert_shard={self.expert_shard} does not divide the expert weights' "
                    f"row count {width} (expert_ffn_dim={model.expert_ffn_dim}, "
                    f"dim={model.dim})"
                )

    def dense_ranks(self) -> np.ndarray:
        """Global ranks as a [R_d, S_d, CP] array (mesh coordinates -> rank)."""
        return np.arange(self.world_size).reshape(self.dense_replicate, self.dense_shard, self.cp)

    def expert_ranks(self) -> np.ndarray:
        """Global ranks as a [R_e, S_e, EP] array (mesh coordinates -> rank)."""
        return np.arange(self.world_size).reshape(self.expert_replicate, self.expert_shard, self.ep)

    def describe(self) -> str:
        return (
            f"dense {self.dense_replicate}x{self.dense_shard}x{self.cp} "
            f"(replicate x shard x cp), expert {self.expert_replicate}x{self.expert_shard}x"
            f"{self.ep} (replicate x shard x ep) on {self.world_size} ranks"
        )


@dataclass(frozen=True)
class FamilyReduction:
    """How one family's gradients are summed, derived from a layout.

    `reduce_groups`: per rank, the ranks FSDP sums its gradient shard over (reduce-scatter
    over shard, all-reduce over replicate). `reach`: per rank, the ranks on which its loss
    lands gradient contributions through autograd collectives (its CP group for dense
    weights: keys/values; its EP group for experts: tokens). `divide_factor`: what the sum
    must be divided by (the number of ranks whose mean losses are averaged);
    `fsdp_default_factor`: what FSDP would divide by on its own (its mesh size)."""

    family: str
    reduce_groups: tuple[tuple[int, ...], ...]
    reach: tuple[tuple[int, ...], ...]
    divide_factor: int
    fsdp_default_factor: int


def _groups_along(ranks: np.ndarray, axes: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """For each rank, the sorted ranks sharing its coordinates on every axis not in `axes`."""
    out: dict[int, tuple[int, ...]] = {}
    moved = np.moveaxis(ranks, axes, tuple(range(ranks.ndim - len(axes), ranks.ndim)))
    flat = moved.reshape(-1, int(np.prod([ranks.shape[a] for a in axes])))
    for row in flat:
        members = tuple(sorted(int(r) for r in row))
        for r in members:
            out[r] = members
    return tuple(out[r] for r in range(ranks.size))


def gradient_reductions(layout: Layout) -> list[FamilyReduction]:
    """Derive each family's reduction from the rank arrays and prove it counts every rank's
    contribution exactly once; raise LayoutError naming the family otherwise."""
    dense = layout.dense_ranks()
    expert = layout.expert_ranks()
    # Dense weights: FSDP over (replicate, shard*cp); contributions reach the CP group.
    dense_red = FamilyReduction(
        family="dense",
        reduce_groups=_groups_along(dense, (0, 1, 2)),
        reach=_groups_along(dense, (2,)),
        divide_factor=layout.world_size,
        fsdp_default_factor=layout.dense_size,
    )
    # Experts: FSDP over (replicate, shard) with the same EP coordinate; a rank's tokens
    # reach every member of its EP group (the holders of each expert).
    expert_red = FamilyReduction(
        family="expert",
        reduce_groups=_groups_along(expert, (0, 1)),
        reach=_groups_along(expert, (2,)),
        divide_factor=layout.world_size,
        fsdp_default_factor=layout.expert_replicate * layout.expert_shard,
    )
    for red in (dense_red, expert_red):
        check_counted_once(red, layout.world_size)
    return [dense_red, expert_red]


def check_counted_once(red: FamilyReduction, world_size: int) -> None:
    """Raise LayoutError unless, for every rank's reduced gradient, each rank of the world
    contributes exactly once.

    A dense contribution of rank j is spread over its whole reach (each CP rank computed a
    part of the keys/values j attended to), so the reduce group must contain all of it. An
    expert contribution lands only on the member of j's reach holding the same experts, so
    the group must meet j's reach exactly once."""
    for rank, group in enumerate(red.reduce_groups):
        members = set(group)
        for contributor in range(world_size):
            reached = set(red.reach[contributor])
            inside = len(reached & members)
            whole = red.family == "dense"
            if inside == 0 or (whole and inside != len(reached)) or (not whole and inside != 1):
                raise LayoutError(
                    f"{red.family} gradients reduced on rank {rank} count rank {contributor}'s "
                    f"contribution {inside} of {len(reached) if whole else 1} times"
                )


def parse_layout(text: str) -> dict[str, int]:
    """Parse `key=value` pairs like "dense_shard=2,cp=2,ep=8" (command-line overrides)."""
    out: dict[str, int] = {}
    fields = set(Layout.__dataclass_fields__)
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in fields:
            raise LayoutError(
                f"layout override {item!r} is not key=value with key in {sorted(fields)}"
            )
        try:
            out[key] = int(value)
        except ValueError:
            raise LayoutError(f"layout override {item!r}: {value!r} is not an integer") from None
    return out
