"""`etude export --hf OUT SOURCE`: write a Hugging Face directory that transformers loads.

SOURCE is a training checkpoint (`<run>/checkpoints/step_<N>`, written by `etude train
--init`, any layout: Distributed Checkpoint reshards it onto this one process) or an open
checkpoint (a Hugging Face directory or a GGUF file, converted as is)::

    etude export --hf exported/ runs/smol/checkpoints/step_200
    etude export --hf smollm2-hf/ path/to/SmolLM2-135M-Instruct.Q4_1.gguf

The export is atomic (`OUT.partial`, renamed when complete) and refuses an existing OUT.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import torch.distributed.checkpoint as dcp

from etude.models import MoEConfig, MoETransformer, load_pretrained, save_pretrained
from etude.models.hf_checkpoint import load_tokenizer
from etude.models.hf_config import CheckpointError


def from_training_checkpoint(
    path: Path, *, trust_remote_code: bool = False
) -> tuple[MoETransformer, object]:
    """(model, tokenizer) of a DCP checkpoint written by `etude train --init`."""
    meta_file = path / "meta.json"
    meta = json.loads(meta_file.read_text())
    if "hf_config" not in meta:
        raise CheckpointError(
            f"{path} is a checkpoint of etude's own model (not started from an open "
            "checkpoint with --init): it has no Hugging Face architecture to export to"
        )
    fields = dict(meta["model"])
    if fields.get("dense_layer_ids") is not None:
        fields["dense_layer_ids"] = tuple(fields["dense_layer_ids"])
    config = MoEConfig(**fields)
    with torch.device("meta"):
        model = MoETransformer(config)
    model.to_empty(device="cpu")
    state = {"model": model.state_dict()}
    dcp.load(state, checkpoint_id=str(path))
    model.load_state_dict(state["model"])
    model.hf_config = meta["hf_config"]
    tokenizer_dir = path.parent.parent / "tokenizer"
    return model, load_tokenizer(tokenizer_dir, trust_remote_code=trust_remote_code)


def export(
    source: str | Path,
    out: str | Path,
    max_shard_bytes: int = 5 << 30,
    *,
    trust_remote_code: bool = False,
) -> Path:
    """Write SOURCE (training checkpoint, HF directory or GGUF) to OUT as a HF directory;
    `trust_remote_code` lets a tokenizer shipped as code run (see `load_tokenizer`)."""
    source, out = Path(source), Path(out)
    if out.exists():
        raise CheckpointError(f"{out} already exists; export to a new directory")
    if not source.exists():
        raise FileNotFoundError(f"{source} does not exist")
    if (source / "meta.json").exists():
        model, tokenizer = from_training_checkpoint(source, trust_remote_code=trust_remote_code)
    else:
        model, tokenizer = load_pretrained(source, trust_remote_code=trust_remote_code)
    return save_pretrained(model, out, tokenizer, max_shard_bytes=max_shard_bytes)


def main(args: argparse.Namespace) -> int:
    path = export(args.source, args.hf, trust_remote_code=args.trust_remote_code)
    print(f"wrote {path}")
    return 0
