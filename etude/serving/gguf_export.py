"""The trained policy as a GGUF file for llama.cpp: the original GGUF's metadata and
tensors, with the trained tensors replaced by the trainer's current weights.

The replaced tensors are written as F32 (exactly the trainer's weights) or F16; the others
keep their original encoding (SmolLM2's file is Q4_1 with a Q8_0 embedding), which is the
data the Hugging Face model was dequantized from, so they are the trainer's weights too.

Hugging Face → GGUF: names through `gguf`'s tensor-name map (`model.layers.3.self_attn.q_proj`
→ `blk.3.attn_q`), and the rows of q_proj / k_proj permuted the way llama.cpp's
`convert_hf_to_gguf.py` does (within each head, the two rotary halves interleaved;
transformers undoes this when it loads a GGUF).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

EXPORT_DTYPES = ("f32", "f16")


def permute_rotary(weight: torch.Tensor, n_head: int) -> torch.Tensor:
    """llama.cpp's `permute` for a q or k projection `[n_head·head_dim, in]` (or a bias):
    per head, rows `[r0 … r_{d/2-1}, r_{d/2} …]` become `[r0, r_{d/2}, r1, r_{d/2+1}, …]`."""
    shape = weight.shape
    return (
        weight.reshape(n_head, 2, shape[0] // n_head // 2, *shape[1:]).swapaxes(1, 2).reshape(shape)
    )


def gguf_tensor(name: str, tensor: torch.Tensor, config, tensor_map) -> tuple[str, np.ndarray]:
    """(GGUF name, array as llama.cpp expects it) for the Hugging Face parameter `name`."""
    gguf_name = tensor_map.get_name(name, try_suffixes=(".weight", ".bias"))
    if gguf_name is None:
        raise ValueError(f"no GGUF name for the parameter {name!r}")
    data = tensor.detach().to(torch.float32).cpu()
    if name.endswith(("q_proj.weight", "q_proj.bias")):
        data = permute_rotary(data, config.num_attention_heads)
    elif name.endswith(("k_proj.weight", "k_proj.bias")):
        data = permute_rotary(data, config.num_key_value_heads)
    return gguf_name, data.numpy()


def export_gguf(
    model, source: Path, out: Path, names: list[str] | None = None, dtype: str = "f32"
) -> Path:
    """Write `out`: the GGUF at `source` with the tensors of `model`'s parameters `names`
    (default: those with requires_grad) replaced by their current values in `dtype`. The
    file appears complete or not at all (written beside it, then renamed). Only Llama-
    architecture models (SmolLM2, Llama) are mapped."""
    import gguf

    if dtype not in EXPORT_DTYPES:
        raise ValueError(f"dtype must be one of {EXPORT_DTYPES}, got {dtype!r}")
    reader = gguf.GGUFReader(str(source))
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    if arch != "llama":
        raise ValueError(f"{source}: exporting a {arch!r} model is not supported (llama only)")
    config = model.config
    tensor_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, config.num_hidden_layers)
    params = dict(model.named_parameters())
    chosen = [n for n, p in params.items() if p.requires_grad] if names is None else names
    replaced = dict(gguf_tensor(n, params[n], config, tensor_map) for n in chosen)
    missing = set(replaced) - {t.name for t in reader.tensors}
    if missing:
        raise ValueError(f"{source} has no tensor(s) {sorted(missing)}")

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(out.name + ".tmp")
    writer = gguf.GGUFWriter(str(staging), arch=arch, endianess=reader.endianess)
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        sub_type = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), field.types[0], sub_type=sub_type)
    for tensor in reader.tensors:
        if tensor.name in replaced:
            data = replaced[tensor.name]
            writer.add_tensor(
                tensor.name, data.astype(np.float16 if dtype == "f16" else np.float32)
            )
        else:
            writer.add_tensor(tensor.name, tensor.data, raw_dtype=tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(staging, out)
    return out
