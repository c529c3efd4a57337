"""Load an open checkpoint onto a dual-mesh layout, each rank reading only its shards.

The model is built on the meta device (no memory), parallelized (context and expert
parallelism, FSDP2 per family), materialized empty, and then every parameter's local
shard is read from the checkpoint by its global box (`etude.models.hf_checkpoint.
read_box`): safetensors are memory-mapped and sliced, so a rank touches only the bytes of
its own rows of dense weights and of its own experts' rows. No rank ever holds a full
copy of the model. (torch's DCP `HuggingFaceStorageReader` reads HF safetensors too, but
it cannot re-layout transformers' per-expert tensors into etude's stacked experts or
split fused ones, so etude slices safetensors itself.)

    from etude.parallel.pretrained import load_sharded
    model, tokenizer, hf_config = load_sharded("path/to/hf_dir", meshes)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch.distributed.tensor import DTensor
from torch.distributed.tensor._utils import compute_local_shape_and_global_offset

from etude.models.hf_checkpoint import check_source, load_tokenizer, open_checkpoint, read_box
from etude.models.hf_layout import Box
from etude.models.moe import MoETransformer
from etude.parallel.fsdp import parallelize
from etude.parallel.mesh import Meshes


def local_box(p: torch.Tensor) -> Box:
    """The global region [(start, stop)] per dim that this rank holds of parameter `p`."""
    if not isinstance(p, DTensor):
        return tuple((0, n) for n in p.shape)
    shape, offset = compute_local_shape_and_global_offset(p.shape, p.device_mesh, p.placements)
    return tuple((o, o + n) for o, n in zip(offset, shape))


def fill_local_shards(model: MoETransformer, source: Any, layout: dict) -> int:
    """Copy every parameter's local shard from `source`; returns the elements read."""
    read = 0
    with torch.no_grad():
        for name, p in model.named_parameters():
            local = p.to_local() if isinstance(p, DTensor) else p
            box = local_box(p)
            if local.numel() == 0:
                continue
            local.copy_(read_box(source, layout[name], box, local.dtype).view_as(local))
            read += local.numel()
    return read


def load_sharded(
    path: str | Path,
    meshes: Meshes | None,
    *,
    bf16: bool = False,
    device: str = "cpu",
    opened: tuple | None = None,
    weights: bool = True,
    trust_remote_code: bool = False,
) -> tuple[MoETransformer, Any, dict[str, Any]]:
    """(parallelized model, tokenizer, the checkpoint's config.json) on this rank; with
    `meshes=None` a plain single-process model. Collective when `meshes` is given.
    `opened`: what `open_checkpoint(path)` returned, if already called; `weights=False`
    leaves the parameters uninitialized (a resumed run loads them from DCP);
    `trust_remote_code` lets a tokenizer shipped as code run."""
    config, raw, source = opened or open_checkpoint(path)
    tokenizer = load_tokenizer(path, trust_remote_code=trust_remote_code)
    layout = check_source(source, config)
    with torch.device("meta"):
        model = MoETransformer(config)
    if meshes is not None:
        parallelize(model, meshes, bf16=bf16)
    model.to_empty(device=device)
    if weights:
        fill_local_shards(model, source, layout)
    model.hf_config = raw
    return model, tokenizer, raw
