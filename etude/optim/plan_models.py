"""The models `etude plan muon` plans: parameter shapes with their Muon param-group options.

- "tiny": the CPU test model of `etude.models` (`MoEConfig.parameter_shapes()`).
- "kimi-k2": Kimi K2 as published (moonshotai/Kimi-K2-Instruct `config.json`: hidden 7168,
  61 layers with the first dense (`first_k_dense_replace` 1, FFN 18432), 384 routed experts
  top-8 and 1 shared expert of width 2048, vocabulary 163840, untied embeddings) with its
  multi-head latent attention: 64 heads, `q_lora_rank` 1536, `kv_lora_rank` 512,
  `qk_nope_head_dim` 128, `qk_rope_head_dim` 64, `v_head_dim` 128. Names follow the Hugging
  Face DeepSeek-V3 modules; routed experts are stacked `[E, out, in]`.

Muon units of K2's attention: the down-projections `q_a_proj` (1536 x 7168) and
`kv_a_proj_with_mqa` (576 x 7168: the 512-wide latent and the 64-wide shared rope key) are
whole matrices; the up-projections are cut per head, `q_b_proj` into 64 blocks of 192 rows
(128 nope + 64 rope) and `kv_b_proj` into 64 blocks of 256 rows (128 key + 128 value), and
`o_proj` into 64 blocks of 128 columns. Router weights, norms, the router's score bias,
embeddings and the output head go to AdamW.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from etude.models.config import ParamShape, preset
from etude.optim.routing import route
from etude.optim.units import unit_boxes, unit_matrix_shape


@dataclass(frozen=True)
class PlannerModel:
    """A model as the planner sees it: its routed-expert count and every parameter."""

    name: str
    n_experts: int
    shapes: tuple[ParamShape, ...]

    def parameter_shapes(self) -> list[ParamShape]:
        """Every parameter, in module order."""
        return list(self.shapes)

    def num_parameters(self) -> int:
        """Total parameter count."""
        return sum(math.prod(p.shape) for p in self.shapes)


def kimi_k2_shapes() -> tuple[ParamShape, ...]:
    """Kimi K2's parameters with MLA attention (module docstring)."""
    d, heads, vocab, layers = 7168, 64, 163840, 61
    q_lora, kv_lora, nope, rope, v = 1536, 512, 128, 64, 128
    dense_ffn, experts, expert_ffn = 18432, 384, 2048
    out = [ParamShape("model.embed_tokens.weight", (vocab, d), None)]
    for i in range(layers):
        p = f"model.layers.{i}."
        a = p + "self_attn."
        out += [
            ParamShape(p + "input_layernorm.weight", (d,), None),
            ParamShape(a + "q_a_proj.weight", (q_lora, d), {}),
            ParamShape(a + "q_a_layernorm.weight", (q_lora,), None),
            ParamShape(a + "q_b_proj.weight", (heads * (nope + rope), q_lora), {"heads": heads}),
            ParamShape(a + "kv_a_proj_with_mqa.weight", (kv_lora + rope, d), {}),
            ParamShape(a + "kv_a_layernorm.weight", (kv_lora,), None),
            ParamShape(a + "kv_b_proj.weight", (heads * (nope + v), kv_lora), {"heads": heads}),
            ParamShape(a + "o_proj.weight", (d, heads * v), {"heads": heads, "head_dim": 1}),
            ParamShape(p + "post_attention_layernorm.weight", (d,), None),
        ]
        m = p + "mlp."
        if i == 0:
            out += [
                ParamShape(m + "gate_proj.weight", (dense_ffn, d), {}),
                ParamShape(m + "up_proj.weight", (dense_ffn, d), {}),
                ParamShape(m + "down_proj.weight", (d, dense_ffn), {}),
            ]
            continue
        out += [
            ParamShape(m + "gate.weight", (experts, d), None),
            ParamShape(m + "gate.e_score_correction_bias", (experts,), None),
            ParamShape(m + "experts.gate_proj", (experts, expert_ffn, d), {"experts": True}),
            ParamShape(m + "experts.up_proj", (experts, expert_ffn, d), {"experts": True}),
            ParamShape(m + "experts.down_proj", (experts, d, expert_ffn), {"experts": True}),
            ParamShape(m + "shared_experts.gate_proj.weight", (expert_ffn, d), {}),
            ParamShape(m + "shared_experts.up_proj.weight", (expert_ffn, d), {}),
            ParamShape(m + "shared_experts.down_proj.weight", (d, expert_ffn), {}),
        ]
    out += [
        ParamShape("model.norm.weight", (d,), None),
        ParamShape("lm_head.weight", (vocab, d), None),
    ]
    return tuple(out)


def planner_model(name: str) -> PlannerModel:
    """The named model, or a ValueError listing the known names."""
    if name == "kimi-k2":
        return PlannerModel("kimi-k2", 384, kimi_k2_shapes())
    if name == "tiny":
        cfg = preset("tiny")
        return PlannerModel("tiny", cfg.n_experts, tuple(cfg.parameter_shapes()))
    raise ValueError(f"unknown model preset {name!r}; known: tiny, kimi-k2")


@dataclass(frozen=True)
class UnitShape:
    """One distinct Newton–Schulz unit shape of a model: where it first occurs, how many."""

    name: str
    shape: tuple[int, int]
    count: int


def unit_shapes(model: PlannerModel) -> list[UnitShape]:
    """The distinct unit shapes of `model` (a tall unit and its transpose are one shape:
    NS of a transpose is the transpose of NS), in order of first occurrence."""
    found: dict[tuple[int, int], UnitShape] = {}
    for p in model.shapes:
        if p.muon is None:
            continue
        r = route(p.name, p.name, p.shape, p.muon)
        rows, cols = unit_matrix_shape(p.shape, r.granularity)
        key = (min(rows, cols), max(rows, cols))
        n = len(unit_boxes(p.shape, r.granularity))
        old = found.get(key)
        found[key] = UnitShape(old.name if old else p.name, key, (old.count if old else 0) + n)
    return list(found.values())
