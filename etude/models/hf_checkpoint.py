"""Load and save open checkpoints: Hugging Face directories (config.json + safetensors,
one file or a sharded index) and GGUF files, with their tokenizers.

Usage::

    from etude.models import load_pretrained, save_pretrained
    model, tokenizer = load_pretrained("path/to/hf_dir")        # or a .gguf file
    save_pretrained(model, "out_dir", tokenizer)                 # transformers loads it back

Weights are read through `hf_layout.Piece`s, so any region of a parameter can be read
without the rest (`read_box`): a rank holding a shard of a parameter reads only the
checkpoint bytes of that shard (`etude.parallel.pretrained`). Saving writes to a staging
directory beside the target and renames it when complete, so an interrupted export never
leaves a directory that looks like a checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from etude.models.config import MoEConfig
from etude.models.fp8_blocks import SCALE_SUFFIX, dequantize, scale_region, scale_shape
from etude.models.hf_config import CheckpointError, config_from_hf, fp8_block_size, hf_config_for
from etude.models.hf_layout import Box, Piece, checkpoint_shapes, pieces
from etude.models.moe import MoETransformer

INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")


class SafetensorsSource:
    """Tensors of a Hugging Face directory, read by region (memory-mapped, lazily).

    `fp8_block`: the checkpoint is block-quantized FP8 (`fp8_blocks`): each float8 weight
    is read dequantized to float32 with its `weight_scale_inv`, region by region, and the
    scale tensors are not listed among the names."""

    def __init__(self, directory: Path, fp8_block: tuple[int, int] | None = None):
        self.directory = Path(directory)
        self.fp8_block = fp8_block
        index = self.directory / INDEX
        if index.exists():
            weight_map = json.loads(index.read_text())["weight_map"]
        elif (self.directory / SINGLE).exists():
            weight_map = None
        else:
            raise CheckpointError(f"{directory} has neither {SINGLE} nor {INDEX}")
        files = sorted(set(weight_map.values())) if weight_map else [SINGLE]
        self._handles: dict[str, Any] = {}
        self.file_of: dict[str, str] = {}
        for name in files:
            handle = self._open(name)
            for key in handle.keys():  # noqa: SIM118 (a safe_open handle)
                self.file_of[key] = name
        if weight_map:
            missing = sorted(k for k in weight_map if k not in self.file_of)
            if missing:
                raise CheckpointError(
                    f"{len(missing)} tensors listed in {INDEX} are not in their shards, "
                    f"e.g. {missing[0]!r} (expected in {weight_map[missing[0]]})"
                )
        self.scale_of = self._fp8_scales()

    def _open(self, name: str):
        from safetensors import SafetensorError, safe_open

        path = self.directory / name
        if not path.exists():
            raise CheckpointError(f"shard {name} listed in {self.directory / INDEX} is missing")
        need, size = _safetensors_length(path), path.stat().st_size
        if need < 0:
            raise CheckpointError(f"shard {path} is not a safetensors file (unreadable header)")
        if need != size:
            raise CheckpointError(
                f"shard {path} is truncated or corrupt: its header describes {need} bytes, "
                f"the file has {size}"
            )
        try:
            handle = safe_open(str(path), framework="pt")
        except SafetensorError as err:
            raise CheckpointError(f"shard {path} is unreadable: {err}") from None
        self._handles[name] = handle
        return handle

    def _fp8_scales(self) -> dict[str, str]:
        """float8 weight key -> its scale key, after checking that every float8 tensor
        has a scale of the block-grid shape (and that the config declared FP8)."""
        scales = {k[: -len(SCALE_SUFFIX)]: k for k in self.file_of if k.endswith(SCALE_SUFFIX)}
        out = {}
        for key in self.file_of:
            if not self._dtype(key).startswith("F8"):
                continue
            if self.fp8_block is None:
                raise CheckpointError(
                    f"tensor {key!r} is {self._dtype(key)} but config.json declares no "
                    "quantization_config (block FP8 needs quant_method 'fp8' and "
                    "weight_block_size)"
                )
            if key not in scales:
                raise CheckpointError(f"FP8 tensor {key!r} has no {key + SCALE_SUFFIX!r}")
            want = scale_shape(self.shape(key), self.fp8_block)
            got = self.shape(scales[key])
            if got != want:
                raise CheckpointError(
                    f"tensor {scales[key]!r} has shape {list(got)}, expected {list(want)} "
                    f"(blocks {list(self.fp8_block)} of {list(self.shape(key))})"
                )
            out[key] = scales[key]
        return out

    def _dtype(self, key: str) -> str:
        return self._handles[self.file_of[key]].get_slice(key).get_dtype()

    def names(self) -> list[str]:
        scales = set(self.scale_of.values())
        return [k for k in self.file_of if k not in scales]

    def shape(self, key: str) -> tuple[int, ...]:
        return tuple(self._handles[self.file_of[key]].get_slice(key).get_shape())

    def _read_raw(self, key: str, index: tuple[slice, ...]) -> Tensor:
        from safetensors import safe_open

        # A handle of its own per read: safetensors memory-maps the shard, and the mapped
        # pages read stay in this process's RSS until the map closes; closing after each
        # read keeps a rank's footprint to the tensors it keeps.
        with safe_open(str(self.directory / self.file_of[key]), framework="pt") as handle:
            return handle.get_slice(key)[index]

    def read(self, key: str, index: tuple[slice, ...]) -> Tensor:
        """Region `index` (explicit start/stop per dimension) of tensor `key`; float32
        dequantized for an FP8 weight (only the scales of the blocks it overlaps read)."""
        if key not in self.scale_of:
            return self._read_raw(key, index)
        scales = self._read_raw(self.scale_of[key], scale_region(index, self.fp8_block))
        start = (index[-2].start, index[-1].start)
        return dequantize(self._read_raw(key, index), scales, self.fp8_block, start)


def _safetensors_length(path: Path) -> int:
    """The file length a safetensors header describes (8-byte little-endian header size,
    the JSON header, then the data up to the largest end offset); -1 if unreadable."""
    with path.open("rb") as f:
        head = f.read(8)
        if len(head) < 8:
            return -1
        n = int.from_bytes(head, "little")
        try:
            header = json.loads(f.read(n))
        except ValueError:
            return -1
    ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"]
    return 8 + n + max(ends, default=0)


class TensorSource:
    """Tensors held in memory (a GGUF file transformers has dequantized)."""

    def __init__(self, tensors: Mapping[str, Tensor]):
        self.tensors = tensors

    def names(self) -> list[str]:
        return list(self.tensors)

    def shape(self, key: str) -> tuple[int, ...]:
        return tuple(self.tensors[key].shape)

    def read(self, key: str, index: tuple[slice, ...]) -> Tensor:
        return self.tensors[key][index]


def experts_fused(source) -> bool:
    """Whether the checkpoint stores experts as transformers' fused 3-D tensors."""
    return any(k.endswith(".mlp.experts.gate_up_proj") for k in source.names())


def check_source(source, config: MoEConfig) -> dict[str, list[Piece]]:
    """The layout of `config` in `source`, after checking that every tensor it needs is
    there with its shape (CheckpointError naming the tensor and both shapes)."""
    layout = pieces(config, fused_experts=experts_fused(source))
    have = set(source.names())
    for key, want in checkpoint_shapes(layout).items():
        if key not in have:
            raise CheckpointError(f"checkpoint has no tensor {key!r} (needed for this config)")
        got = source.shape(key)
        if got != want:
            raise CheckpointError(f"tensor {key!r} has shape {list(got)}, expected {list(want)}")
    return layout


def read_box(source, layout: list[Piece], box: Box, dtype: torch.dtype) -> Tensor:
    """Region `box` of one etude parameter assembled from its pieces, reading only the
    checkpoint regions that overlap it. A box that is exactly one piece is the read
    tensor itself (no further copy)."""
    out = (
        None
        if len(layout) == 1 and layout[0].box == box
        else torch.empty(tuple(hi - lo for lo, hi in box), dtype=dtype)
    )
    for piece in layout:
        lo = [max(a, p) for (a, _), (p, _) in zip(box, piece.box)]
        hi = [min(b, q) for (_, b), (_, q) in zip(box, piece.box)]
        if any(h <= low for low, h in zip(lo, hi)):
            continue
        dims = list(zip(lo, hi, (p for p, _ in piece.box)))
        if piece.per_expert:
            dims = dims[1:]
        index = tuple(slice(a - p + o, b - p + o) for (a, b, p), o in zip(dims, piece.offset))
        chunk = source.read(piece.key, index)
        if piece.per_expert:
            chunk = chunk.unsqueeze(0)
        if out is None:
            return chunk.to(dtype)
        target = tuple(slice(a - s, b - s) for a, b, (s, _) in zip(lo, hi, box))
        out[target] = chunk.to(dtype)
    return out


def read_hf_config(directory: Path) -> dict[str, Any]:
    path = Path(directory) / "config.json"
    if not path.exists():
        raise CheckpointError(f"{directory} has no config.json: not a Hugging Face checkpoint")
    return json.loads(path.read_text())


def load_tokenizer(path: str | Path, *, trust_remote_code: bool = False):
    """The tokenizer of a Hugging Face directory or a GGUF file. A tokenizer whose class
    ships as Python code in the checkpoint (Kimi-K2's `tokenization_kimi.py`, named by
    `auto_map` in tokenizer_config.json) runs that code only with `trust_remote_code`."""
    path = Path(path)
    from transformers import AutoTokenizer

    if path.suffix == ".gguf":
        return AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    if not any((path / f).exists() for f in TOKENIZER_FILES):
        raise CheckpointError(
            f"{path} has no tokenizer (none of {', '.join(TOKENIZER_FILES)}); etude trains "
            "with the checkpoint's own tokenizer"
        )
    custom = _custom_tokenizer_class(path)
    if custom and not trust_remote_code:
        raise CheckpointError(
            f"{path}'s tokenizer is the class {custom} defined by Python code shipped with the "
            "checkpoint; pass --trust-remote-code (`trust_remote_code=True`) to run it"
        )
    return AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)


def _custom_tokenizer_class(path: Path) -> str:
    """The `module.Class` tokenizer_config.json's auto_map names for AutoTokenizer, or ''."""
    config = path / "tokenizer_config.json"
    if not config.exists():
        return ""
    entry = (json.loads(config.read_text()).get("auto_map") or {}).get("AutoTokenizer")
    if isinstance(entry, list):  # [slow class, fast class]: either may be null
        entry = next((e for e in entry if e), None)
    return entry or ""


def transformers_source(hf_model) -> tuple[dict[str, Any], TensorSource]:
    """(config.json dict, tensor source) of a transformers model held in memory."""
    raw = hf_model.config.to_dict()
    raw["architectures"] = [type(hf_model).__name__]
    method = (raw.get("quantization_config") or {}).get("quant_method")
    if getattr(method, "value", method) == "gguf":
        del raw["quantization_config"]  # transformers dequantized GGUF tensors on load
    tensors = dict(hf_model.state_dict())
    if raw.get("tie_word_embeddings"):
        tensors.pop("lm_head.weight", None)
    return raw, TensorSource(tensors)


def _gguf_source(path: Path) -> tuple[dict[str, Any], TensorSource]:
    # transformers dequantizes GGUF and maps its tensor names; etude converts from that.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM

    hf = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
    return transformers_source(hf)


def open_checkpoint(path: str | Path) -> tuple[MoEConfig, dict[str, Any], Any]:
    """(etude config, the checkpoint's config.json dict, tensor source) of a Hugging Face
    directory or a GGUF file; reads no weights from a directory."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    if path.suffix == ".gguf":
        raw, source = _gguf_source(path)
    else:
        raw = read_hf_config(path)
        source = None
    config = config_from_hf(raw)
    return config, raw, source or SafetensorsSource(path, fp8_block_size(raw))


def load_pretrained(
    path: str | Path, dtype: torch.dtype = torch.float32, *, trust_remote_code: bool = False
) -> tuple[MoETransformer, Any]:
    """(model, tokenizer) from a Hugging Face directory or a GGUF file. The model keeps the
    checkpoint's config.json as `model.hf_config` for `save_pretrained`;
    `trust_remote_code` lets a tokenizer shipped as code run (see `load_tokenizer`)."""
    config, raw, source = open_checkpoint(path)
    tokenizer = load_tokenizer(path, trust_remote_code=trust_remote_code)
    return _build(config, raw, source, dtype), tokenizer


def from_transformers(hf_model, dtype: torch.dtype = torch.float32) -> MoETransformer:
    """The etude model of a transformers model in memory (same weights, copied)."""
    raw, source = transformers_source(hf_model)
    return _build(config_from_hf(raw), raw, source, dtype)


def _build(config: MoEConfig, raw: dict[str, Any], source, dtype: torch.dtype) -> MoETransformer:
    layout = check_source(source, config)
    with torch.device("meta"):
        model = MoETransformer(config)
    state = {
        name: read_box(source, layout[name], tuple((0, n) for n in p.shape), dtype)
        for name, p in model.named_parameters()
    }
    # assign: the read tensors become the parameters (requires_grad kept), no extra copy
    model.load_state_dict(state, assign=True)
    model.hf_config = raw
    return model


def hf_state_dict(config: MoEConfig, params: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """etude parameters -> the checkpoint tensors transformers' save_pretrained writes
    (per-expert matrices)."""
    layout = pieces(config, fused_experts=False)
    shapes = checkpoint_shapes(layout)
    out: dict[str, Tensor] = {}
    for name, ps in layout.items():
        t = params[name].detach()
        for piece in ps:
            region = t[tuple(slice(lo, hi) for lo, hi in piece.box)]
            if piece.per_expert:
                region = region[0]
            if region.shape == shapes[piece.key]:
                out[piece.key] = region.contiguous()
                continue
            dst = out.setdefault(piece.key, torch.empty(shapes[piece.key], dtype=t.dtype))
            dst[tuple(slice(o, o + n) for o, n in zip(piece.offset, region.shape))] = region
    return out


def _write_shards(tensors: dict[str, Tensor], directory: Path, max_shard_bytes: int) -> None:
    from safetensors.torch import save_file

    shards: list[dict[str, Tensor]] = [{}]
    size = 0
    for key in sorted(tensors):
        nbytes = tensors[key].numel() * tensors[key].element_size()
        if shards[-1] and size + nbytes > max_shard_bytes:
            shards.append({})
            size = 0
        shards[-1][key] = tensors[key]
        size += nbytes
    if len(shards) == 1:
        save_file(shards[0], str(directory / SINGLE), metadata={"format": "pt"})
        return
    weight_map = {}
    for i, shard in enumerate(shards):
        name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        save_file(shard, str(directory / name), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(shard, name))
    total = sum(t.numel() * t.element_size() for t in tensors.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (directory / INDEX).write_text(json.dumps(index, indent=2))


def save_pretrained(
    model: MoETransformer,
    path: str | Path,
    tokenizer: Any = None,
    hf_config: dict[str, Any] | None = None,
    max_shard_bytes: int = 5 << 30,
    params: Mapping[str, Tensor] | None = None,
) -> Path:
    """Write `model` as a Hugging Face directory at `path` (which must not exist yet):
    config.json (`hf_config`, default `model.hf_config`, updated from the model's config),
    safetensors shards with an index when over `max_shard_bytes`, and the tokenizer.
    `params` replaces `model.named_parameters()` (full tensors, e.g. gathered from shards).
    Written to `<path>.partial` and renamed when complete."""
    path = Path(path)
    if path.exists():
        raise CheckpointError(f"{path} already exists; export to a new directory")
    config = model.config
    hf = hf_config_for(config, hf_config or getattr(model, "hf_config", None))
    tensors = hf_state_dict(config, params or dict(model.named_parameters()))
    staging = path.with_name(path.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    try:
        _write_shards(tensors, staging, max_shard_bytes)
        hf.save_pretrained(staging)
        if tokenizer is not None:
            tokenizer.save_pretrained(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    staging.rename(path)
    return path
