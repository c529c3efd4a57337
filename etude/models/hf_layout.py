"""Where each etude parameter lives in a Hugging Face checkpoint, for the three families.

A parameter is assembled from `Piece`s: a region (box) of the etude tensor that equals a
region of one checkpoint tensor. Most parameters are one piece (a renamed tensor); stacked
experts `[E, ffn, dim]` come from transformers' fused `experts.gate_up_proj` `[E, 2*ffn,
dim]` (gate rows first, then up rows) and `experts.down_proj`, or from per-expert
`experts.<e>.gate_proj.weight` tensors (one piece per expert) in older checkpoints.
Because pieces are boxes, a rank that holds only a slice of a parameter reads only the
checkpoint regions its slice overlaps (`etude.models.hf.read_box`).

Layouts by `MoEConfig`: `attention == "mla"` is DeepSeek-V3 (and Kimi-K2), `qk_norm` is
Qwen3-MoE (Qwen3 for a dense model), otherwise Llama.
"""

from __future__ import annotations

from dataclasses import dataclass

from etude.models.config import MoEConfig

Box = tuple[tuple[int, int], ...]

ATTENTION = {
    "wq": "q_proj",
    "wk": "k_proj",
    "wv": "v_proj",
    "wo": "o_proj",
    "q_norm": "q_norm",
    "k_norm": "k_norm",
    "wq_a": "q_a_proj",
    "q_a_norm": "q_a_layernorm",
    "wq_b": "q_b_proj",
    "wkv_a": "kv_a_proj_with_mqa",
    "kv_a_norm": "kv_a_layernorm",
    "wkv_b": "kv_b_proj",
}
FEED_FORWARD = {"w1": "gate_proj", "w2": "down_proj", "w3": "up_proj"}


@dataclass(frozen=True)
class Piece:
    """Region `box` of an etude tensor equals checkpoint tensor `key` at `box` shifted by
    `offset` (one entry per checkpoint dimension). `per_expert`: the checkpoint tensor is
    one expert's matrix, so etude's dim 0 (the expert) has no counterpart in it."""

    key: str
    box: Box
    offset: tuple[int, ...]
    per_expert: bool = False

    def source_shape(self) -> tuple[int, ...]:
        """The part of the checkpoint tensor this piece covers, ends included: the least
        shape the checkpoint tensor must have (its actual shape is checked elsewhere)."""
        dims = self.box[1:] if self.per_expert else self.box
        return tuple(o + hi - lo for o, (lo, hi) in zip(self.offset, dims))


def _whole(key: str, shape: tuple[int, ...]) -> list[Piece]:
    return [Piece(key, tuple((0, n) for n in shape), (0,) * len(shape))]


def _experts(prefix: str, name: str, shape: tuple[int, ...], fused: bool) -> list[Piece]:
    e, rows, cols = shape
    if not fused:
        key = FEED_FORWARD[name]
        return [
            Piece(f"{prefix}.{i}.{key}.weight", ((i, i + 1), (0, rows), (0, cols)), (0, 0), True)
            for i in range(e)
        ]
    full = ((0, e), (0, rows), (0, cols))
    if name == "w2":
        return [Piece(f"{prefix}.down_proj", full, (0, 0, 0))]
    row_offset = 0 if name == "w1" else rows  # gate rows, then up rows
    return [Piece(f"{prefix}.gate_up_proj", full, (0, row_offset, 0))]


def hf_key(name: str) -> str:
    """The checkpoint key of a non-expert etude parameter name."""
    parts = name.split(".")
    if name == "tok_embeddings.weight":
        return "model.embed_tokens.weight"
    if name == "norm.weight":
        return "model.norm.weight"
    if name == "output.weight":
        return "lm_head.weight"
    layer, module = f"model.layers.{parts[1]}", parts[2]
    if module == "attention_norm":
        return f"{layer}.input_layernorm.weight"
    if module == "ffn_norm":
        return f"{layer}.post_attention_layernorm.weight"
    if module == "attention":
        return f"{layer}.self_attn.{ATTENTION[parts[3]]}.weight"
    if module == "feed_forward":
        return f"{layer}.mlp.{FEED_FORWARD[parts[3]]}.weight"
    if parts[3] == "router":
        return f"{layer}.mlp.gate.weight"
    if parts[3] == "router_bias":
        return f"{layer}.mlp.gate.e_score_correction_bias"
    if parts[3] == "shared":
        return f"{layer}.mlp.shared_experts.{FEED_FORWARD[parts[4]]}.weight"
    raise KeyError(f"no checkpoint key for parameter {name!r}")


def pieces(config: MoEConfig, fused_experts: bool = True) -> dict[str, list[Piece]]:
    """etude parameter name -> its pieces, in `config.parameter_shapes()` order."""
    out = {}
    for p in config.parameter_shapes():
        if ".moe.experts." in p.name:
            layer = p.name.split(".")[1]
            prefix = f"model.layers.{layer}.mlp.experts"
            out[p.name] = _experts(prefix, p.name.rsplit(".", 1)[1], p.shape, fused_experts)
        else:
            out[p.name] = _whole(hf_key(p.name), p.shape)
    return out


def checkpoint_shapes(layout: dict[str, list[Piece]]) -> dict[str, tuple[int, ...]]:
    """Checkpoint key -> the shape the layout implies for it (the union of its pieces)."""
    shapes: dict[str, tuple[int, ...]] = {}
    for ps in layout.values():
        for piece in ps:
            need = piece.source_shape()
            have = shapes.get(piece.key, (0,) * len(need))
            shapes[piece.key] = tuple(max(a, b) for a, b in zip(have, need))
    return shapes
