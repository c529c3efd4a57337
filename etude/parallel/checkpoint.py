"""Distributed Checkpoint save/load for a dual-mesh model and its optimizer.

A checkpoint is a directory `step_<N>` holding DCP shards and `meta.json` (step, model
config, layout, train state). It is written as `step_<N>.tmp` and renamed by rank 0 after
every rank has finished, so a run killed mid-save never leaves a directory that looks
valid. DCP stores DTensors by their global shapes, so a checkpoint loads under another
layout (EP 8 -> 4, CP 2 -> 1, another world size) and reshards on load. Loading first
compares the stored model config with the model's, on every rank, before any collective.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.optim import Optimizer

from etude.models.config import MoEConfig


def _barrier() -> None:
    if dist.is_initialized():
        dist.barrier()


def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def save(
    directory: Path, step: int, model: nn.Module, optimizer: Optimizer, meta: dict[str, Any]
) -> Path:
    """Write `directory/step_<step>` atomically; returns its path. Collective."""
    final = Path(directory) / f"step_{step}"
    tmp = final.with_name(final.name + ".tmp")
    if _rank() == 0 and tmp.exists():
        shutil.rmtree(tmp)
    _barrier()
    model_sd, optim_sd = get_state_dict(model, optimizer)
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=str(tmp))
    _barrier()
    if _rank() == 0:
        (tmp / "meta.json").write_text(json.dumps({"step": step, **meta}, indent=2))
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
    _barrier()
    return final


def latest(directory: Path) -> Path | None:
    """The finished checkpoint with the highest step under `directory`, or None."""
    done = [
        p
        for p in Path(directory).glob("step_*")
        if p.is_dir() and not p.name.endswith(".tmp") and (p / "meta.json").exists()
    ]
    return max(done, key=lambda p: int(p.name.split("_")[1]), default=None)


def read_meta(path: Path, config: MoEConfig) -> dict[str, Any]:
    """The checkpoint's metadata; ValueError if it is missing or from another model."""
    meta_file = Path(path) / "meta.json"
    if not meta_file.exists():
        raise FileNotFoundError(f"{path} is not a finished checkpoint (no meta.json)")
    meta = json.loads(meta_file.read_text())
    want = json.loads(json.dumps(dataclasses.asdict(config)))  # tuples as JSON lists
    stored = meta.get("model", {})
    diff = sorted(k for k in want if stored.get(k) != want[k])
    if diff:
        pairs = ", ".join(f"{k}: checkpoint {stored.get(k)!r} vs model {want[k]!r}" for k in diff)
        raise ValueError(f"checkpoint {path} is from another model ({pairs})")
    return meta


def load(path: Path, model: nn.Module, optimizer: Optimizer, config: MoEConfig) -> dict[str, Any]:
    """Load model and optimizer state from `path` (any layout) into the sharded `model`;
    returns the metadata. The model check happens before any collective."""
    meta = read_meta(path, config)
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=str(path))
    set_state_dict(
        model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"]
    )
    return meta
