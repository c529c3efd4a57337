"""What a layout predicts, per rank and per family: parameter, gradient and optimizer-state
bytes, and collective bytes per training step (same counting convention as `comm.py`).

Pure functions of the model config and the layout, so `etude plan layout` can print them
for a 1T-parameter preset without building anything, and tests can compare them with what
a real run measures.
"""

from __future__ import annotations

import math
from collections import defaultdict

from etude.models.config import MoEConfig, ParamShape
from etude.parallel.layout import Layout


def is_expert(name: str) -> bool:
    return ".moe.experts." in name


def _numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _padded(shape: tuple[int, ...], shards: int) -> int:
    # FSDP2 pads dim 0 up to a multiple of the shard count.
    return math.ceil(shape[0] / shards) * shards * _numel(shape[1:])


def _dense_units(config: MoEConfig) -> dict[str, list[ParamShape]]:
    """FSDP units of dense weights: one per transformer block, and the root."""
    units: dict[str, list[ParamShape]] = defaultdict(list)
    for p in config.parameter_shapes():
        if is_expert(p.name):
            continue
        units[".".join(p.name.split(".")[:2]) if p.name.startswith("layers.") else "root"].append(p)
    return units


def state_bytes(
    config: MoEConfig, layout: Layout, optimizer: str = "muon", param_bytes: int = 4
) -> dict[str, dict[str, float]]:
    """Per-rank bytes of parameters, gradients and optimizer state, by family, for fp32
    master weights: Muon keeps one momentum buffer per matrix and AdamW two moments for
    the parameters Muon leaves to it (embeddings, norms, router, output head)."""
    dense_shards = layout.dense_shard * layout.cp
    out = {f: {"params": 0.0, "grads": 0.0, "optimizer": 0.0} for f in ("dense", "expert")}
    for p in config.parameter_shapes():
        if is_expert(p.name):
            family, n = "expert", _numel(p.shape) / (layout.ep * layout.expert_shard)
        else:
            family, n = "dense", _padded(p.shape, dense_shards) / dense_shards
        states = 1 if optimizer == "muon" and p.muon is not None else 2
        out[family]["params"] += n * param_bytes
        out[family]["grads"] += n * param_bytes
        out[family]["optimizer"] += states * n * param_bytes
    return out


def step_collective_bytes(
    config: MoEConfig,
    layout: Layout,
    batch_size: int,
    seq_len: int,
    compute_bytes: int = 4,
    reduce_bytes: int = 4,
) -> dict[tuple[str, str], float]:
    """Bytes per rank per forward+backward, keyed like `CollectiveBytes.bytes`:
    (group label, collective kind). Expert all-to-all depends on routing per rank; the
    value is the mean over ranks (what the ranks send in total divided by the world)."""
    out: dict[tuple[str, str], float] = defaultdict(float)
    dense_shards = layout.dense_shard * layout.cp
    for params in _dense_units(config).values():
        padded = sum(_padded(p.shape, dense_shards) for p in params)
        if dense_shards > 1:
            # reshard after forward: gathered in forward and again in backward
            out[("dense/shard", "all_gather")] += 2 * padded * compute_bytes
            out[("dense/shard", "reduce_scatter")] += padded * reduce_bytes
        if layout.dense_replicate > 1:
            out[("dense/replicate", "all_reduce")] += padded / dense_shards * reduce_bytes
    moe_layers = sum(not config.is_dense_layer(i) for i in range(config.n_layers))
    expert_local = (
        sum(_numel(p.shape) for p in config.parameter_shapes() if is_expert(p.name)) / layout.ep
    )
    if layout.expert_shard > 1:
        out[("expert/shard", "all_gather")] += 2 * expert_local * compute_bytes
        out[("expert/shard", "reduce_scatter")] += expert_local * reduce_bytes
    if layout.expert_replicate > 1:
        out[("expert/replicate", "all_reduce")] += expert_local / layout.expert_shard * reduce_bytes
    local_seqs, local_len = batch_size // layout.data_parallel, seq_len // layout.cp
    tokens = local_seqs * local_len
    if layout.ep > 1:
        # dispatch and combine, forward and backward; plus the int64 counts exchange
        rows = tokens * config.top_k
        out[("expert/ep", "all_to_all")] += moe_layers * (
            4 * rows * config.dim * compute_bytes + config.n_experts * 8
        )
    if layout.cp > 1:
        # what attention gathers per position: GQA keys and values, or MLA's compressed pair
        width = sum(h * w for h, w in config.kv_cache_dims())
        kv = local_seqs * seq_len * width * compute_bytes
        out[("dense/cp", "all_gather")] += config.n_layers * (kv + seq_len * 8)
        out[("dense/cp", "reduce_scatter")] += config.n_layers * kv
    if layout.world_size > 1 and moe_layers:
        # load-balancing statistics: 2E+1 floats, forward and backward
        out[("stats", "all_reduce")] += moe_layers * 2 * (2 * config.n_experts + 1) * 4
    return dict(out)


def by_family(bytes_by_label: dict[tuple[str, str], float]) -> dict[str, float]:
    """Sum (label, kind) -> bytes into family -> bytes."""
    out: dict[str, float] = defaultdict(float)
    for (label, _), n in bytes_by_label.items():
        out[label.split("/")[0]] += n
    return dict(out)


def shared_mesh_min_gpus(layout: Layout) -> int:
    """Ranks a single shared mesh needs for the same R_d, CP and EP, when (as in torchtitan)
    expert parallelism is carved out of the dense data-parallel shard x CP dimensions, so EP
    must divide S_d*CP: the dense shard group grows to lcm(S_d*CP, EP)."""
    return layout.dense_replicate * math.lcm(layout.dense_shard * layout.cp, layout.ep)
