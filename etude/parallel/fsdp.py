"""FSDP2 per family: dense modules on the dense mesh, experts on the expert mesh, each with
the divide factor its layout derives (see `layout.gradient_reductions`)."""

from __future__ import annotations

import functools

import torch
from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard
from torch.distributed.nn.functional import all_reduce
from torch.distributed.tensor import Shard

from etude.models.moe import MoETransformer
from etude.parallel.context import apply_context_parallel
from etude.parallel.expert import apply_expert_parallel
from etude.parallel.layout import gradient_reductions
from etude.parallel.mesh import Meshes


def mixed_precision(enabled: bool) -> MixedPrecisionPolicy:
    """bf16 compute and communication with fp32 master weights and gradient reductions, or
    plain fp32 (for parity tests)."""
    if not enabled:
        return MixedPrecisionPolicy()
    return MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)


def _set_divide_factor(module: FSDPModule, factor: int, shard_size: int) -> None:
    module.set_gradient_divide_factor(float(factor))
    # gloo has no PREMUL_SUM, so reduce with SUM and let FSDP divide locally. But torch 2.13
    # divides twice when the shard group has one rank and sums are forced (once while
    # copying the unreduced gradient, once after), and with one rank no PREMUL_SUM is
    # issued anyway: force sums only for real shard groups.
    module.set_force_sum_reduction_for_comms(shard_size > 1)


def parallelize(
    model: MoETransformer,
    meshes: Meshes,
    *,
    bf16: bool = False,
    layout_factors: bool = True,
) -> MoETransformer:
    """Apply context parallelism, expert parallelism and per-family FSDP2 to `model` in place.

    Every rank must hold the same full initial weights (same seed). Each transformer block
    and the experts of each MoE layer become FSDP units; the root unit holds embeddings,
    the final norm and the output head. `layout_factors=False` keeps FSDP's default
    averaging (each family divides by its own mesh size), which is wrong for experts
    whenever EP > 1; it exists so that tests can show the difference."""
    layout = meshes.layout
    layout.check_fits(model=model.config)
    factors = {r.family: r.divide_factor for r in gradient_reductions(layout)}
    policy = mixed_precision(bf16)
    apply_context_parallel(model, meshes.cp)
    apply_expert_parallel(model, meshes.expert["ep"])
    dense_units: list[FSDPModule] = []
    for block in model.layers:
        if hasattr(block, "moe"):
            fully_shard(
                block.moe.experts,
                mesh=meshes.expert_fsdp,
                # dim 0 (experts) is already split over EP; FSDP splits each expert's rows.
                shard_placement_fn=lambda _: Shard(1),
                mp_policy=policy,
                reshard_after_forward=True,
            )
            if layout_factors:
                _set_divide_factor(block.moe.experts, factors["expert"], layout.expert_shard)
            block.moe.batch_sum = functools.partial(all_reduce, group=meshes.stats)
        dense_units.append(
            fully_shard(block, mesh=meshes.dense, mp_policy=policy, reshard_after_forward=True)
        )
    dense_units.append(
        fully_shard(model, mesh=meshes.dense, mp_policy=policy, reshard_after_forward=True)
    )
    if layout_factors:
        for unit in dense_units:
            _set_divide_factor(unit, factors["dense"], layout.dense_shard * layout.cp)
    return model
