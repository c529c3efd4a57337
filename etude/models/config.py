"""Sizes and variants of the decoder, from a tiny CPU model to a 1T-parameter preset.

One config describes etude's own GQA MoE (the default) and the open architectures loaded
from Hugging Face checkpoints (`etude.models.hf`): Llama-family dense models, Qwen3-MoE
(per-head q/k RMSNorm, softmax routing) and DeepSeek-V3 / Kimi-K2 (multi-head latent
attention, sigmoid group-limited routing with a score-correction bias).

`MoEConfig.parameter_shapes()` lists every parameter such a model has, with the Muon
granularity that applies to it, so that the optimizer planner (`etude plan muon`) and the
benchmarks can reason about a model without building it.
"""

from __future__ import annotations

from dataclasses import dataclass

from etude.models.rope import YaRN


@dataclass(frozen=True)
class ParamShape:
    """One parameter: its name, global shape, and Muon param-group options.

    `muon` is None for parameters AdamW updates (embeddings, norms, router, output head),
    `{}` for whole matrices, `{"heads": H, "head_dim": d}` or `{"experts": True}`.
    """

    name: str
    shape: tuple[int, ...]
    muon: dict | None


@dataclass(frozen=True)
class MoEConfig:
    """A decoder with grouped-query attention and top-k routed experts plus shared experts.

    The first `n_dense_layers` layers use a dense SwiGLU FFN of width `dense_ffn_dim`; the
    rest route each token to `top_k` of `n_experts` experts of width `expert_ffn_dim`, plus
    `n_shared_experts` always-on experts of the same width. `n_experts == 0` makes every layer
    dense. `aux_loss_weight` scales the load-balancing loss in training; `max_seq_len` bounds
    the KV cache and the training sequence length.

    Variants (defaults: etude's own model):
    - `dense_layer_ids`: when given, exactly these layers are dense (Qwen3-MoE's
      `mlp_only_layers` / `decoder_sparse_step`), overriding `n_dense_layers`;
    - `qk_norm`: RMSNorm over each query and key head before RoPE (Qwen3);
    - `tie_embeddings`: the output head is the embedding matrix (no `output.weight`);
    - `router`: "softmax" (top-k of softmax probabilities) or "sigmoid" (DeepSeek-V3: top-k
      of sigmoid scores plus `router_bias`, within the best `topk_group` of `n_group` expert
      groups); `norm_topk_prob` renormalizes the chosen weights, `routed_scaling_factor`
      scales them; `router_bias` adds the score-correction bias (chooses, never weighs);
    - `attention`: "gqa" or "mla" (multi-head latent attention: queries through a rank
      `q_lora_rank` bottleneck, or directly when None; keys/values from one compressed
      latent of `kv_lora_rank` plus a shared `qk_rope_head_dim` RoPE key; per-head
      `qk_nope_head_dim` + `qk_rope_head_dim` query/key and `v_head_dim` value dims);
    - `rope_interleave`: RoPE on interleaved pairs (DeepSeek checkpoints), not halves;
    - `yarn`: YaRN-scaled RoPE (`rope.YaRN`; DeepSeek-V3 / Kimi-K2 `rope_scaling`), which
      for MLA also scales the softmax by `rope.yarn_softmax_scale` (a dict of its fields
      is accepted, as configs read back from JSON hold it).
    """

    vocab_size: int
    dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    n_experts: int
    top_k: int
    expert_ffn_dim: int
    n_shared_experts: int
    n_dense_layers: int
    dense_ffn_dim: int
    rope_theta: float = 10000.0
    max_seq_len: int = 4096
    norm_eps: float = 1e-5
    aux_loss_weight: float = 0.01
    dense_layer_ids: tuple[int, ...] | None = None
    qk_norm: bool = False
    tie_embeddings: bool = False
    router: str = "softmax"
    norm_topk_prob: bool = True
    routed_scaling_factor: float = 1.0
    router_bias: bool = False
    n_group: int = 1
    topk_group: int = 1
    attention: str = "gqa"
    q_lora_rank: int | None = None
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    rope_interleave: bool = False
    yarn: YaRN | None = None

    def __post_init__(self) -> None:
        if isinstance(self.yarn, dict):
            object.__setattr__(self, "yarn", YaRN(**self.yarn))
        if self.router not in ("softmax", "sigmoid"):
            raise ValueError(f"router must be 'softmax' or 'sigmoid', got {self.router!r}")
        if self.attention not in ("gqa", "mla"):
            raise ValueError(f"attention must be 'gqa' or 'mla', got {self.attention!r}")
        if self.dense_layer_ids is not None:
            object.__setattr__(self, "dense_layer_ids", tuple(self.dense_layer_ids))
        if self.n_experts and self.n_experts % self.n_group:
            raise ValueError(f"n_group={self.n_group} does not divide {self.n_experts} experts")

    def is_dense_layer(self, i: int) -> bool:
        """Layer `i` has a dense FFN: it is listed in `dense_layer_ids` (when given) or among
        the first `n_dense_layers`, or the model has no experts (`n_experts == 0`)."""
        if self.n_experts == 0:
            return True
        if self.dense_layer_ids is not None:
            return i in self.dense_layer_ids
        return i < self.n_dense_layers

    @property
    def qk_head_dim(self) -> int:
        """Per-head query/key width: head_dim (GQA) or nope + rope dims (MLA)."""
        if self.attention == "mla":
            return self.qk_nope_head_dim + self.qk_rope_head_dim
        return self.head_dim

    @property
    def value_head_dim(self) -> int:
        return self.v_head_dim if self.attention == "mla" else self.head_dim

    def kv_cache_dims(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """(heads, width) of what the KV cache (and context parallelism) holds per position:
        keys and values for GQA; for MLA the normed compressed latent [1, kv_lora_rank] and
        the shared RoPE key [1, qk_rope_head_dim]."""
        if self.attention == "mla":
            return (1, self.kv_lora_rank), (1, self.qk_rope_head_dim)
        return (self.n_kv_heads, self.head_dim), (self.n_kv_heads, self.head_dim)

    def _attention_shapes(self, p: str) -> list[ParamShape]:
        d, h = self.dim, self.n_heads
        if self.attention == "gqa":
            hd, kv = self.head_dim, self.n_kv_heads
            out = [
                ParamShape(p + "wq.weight", (h * hd, d), {"heads": h, "head_dim": 0}),
                ParamShape(p + "wk.weight", (kv * hd, d), {"heads": kv, "head_dim": 0}),
                ParamShape(p + "wv.weight", (kv * hd, d), {"heads": kv, "head_dim": 0}),
                ParamShape(p + "wo.weight", (d, h * hd), {"heads": h, "head_dim": 1}),
            ]
            if self.qk_norm:
                out += [
                    ParamShape(p + "q_norm.weight", (hd,), None),
                    ParamShape(p + "k_norm.weight", (hd,), None),
                ]
            return out
        qk, r = self.qk_head_dim, self.kv_lora_rank
        if self.q_lora_rank is None:
            out = [ParamShape(p + "wq.weight", (h * qk, d), {"heads": h, "head_dim": 0})]
        else:
            out = [
                ParamShape(p + "wq_a.weight", (self.q_lora_rank, d), {}),
                ParamShape(p + "q_a_norm.weight", (self.q_lora_rank,), None),
                ParamShape(
                    p + "wq_b.weight", (h * qk, self.q_lora_rank), {"heads": h, "head_dim": 0}
                ),
            ]
        out += [
            ParamShape(p + "wkv_a.weight", (r + self.qk_rope_head_dim, d), {}),
            ParamShape(p + "kv_a_norm.weight", (r,), None),
            ParamShape(
                p + "wkv_b.weight",
                (h * (self.qk_nope_head_dim + self.v_head_dim), r),
                {"heads": h, "head_dim": 0},
            ),
            ParamShape(p + "wo.weight", (d, h * self.v_head_dim), {"heads": h, "head_dim": 1}),
        ]
        return out

    def parameter_shapes(self) -> list[ParamShape]:
        """Every parameter of the model, in module order."""
        d = self.dim
        out = [ParamShape("tok_embeddings.weight", (self.vocab_size, d), None)]
        for i in range(self.n_layers):
            p = f"layers.{i}."
            out.append(ParamShape(p + "attention_norm.weight", (d,), None))
            out += self._attention_shapes(p + "attention.")
            out.append(ParamShape(p + "ffn_norm.weight", (d,), None))
            if self.is_dense_layer(i):
                f = self.dense_ffn_dim
                out += [
                    ParamShape(p + "feed_forward.w1.weight", (f, d), {}),
                    ParamShape(p + "feed_forward.w2.weight", (d, f), {}),
                    ParamShape(p + "feed_forward.w3.weight", (f, d), {}),
                ]
                continue
            e, f = self.n_experts, self.expert_ffn_dim
            out += [
                # MoE's own parameter first: named_parameters lists it before submodules'
                *([ParamShape(p + "moe.router_bias", (e,), None)] if self.router_bias else []),
                ParamShape(p + "moe.router.weight", (e, d), None),
                ParamShape(p + "moe.experts.w1", (e, f, d), {"experts": True}),
                ParamShape(p + "moe.experts.w2", (e, d, f), {"experts": True}),
                ParamShape(p + "moe.experts.w3", (e, f, d), {"experts": True}),
            ]
            if self.n_shared_experts:
                fs = f * self.n_shared_experts
                out += [
                    ParamShape(p + "moe.shared.w1.weight", (fs, d), {}),
                    ParamShape(p + "moe.shared.w2.weight", (d, fs), {}),
                    ParamShape(p + "moe.shared.w3.weight", (fs, d), {}),
                ]
        out.append(ParamShape("norm.weight", (d,), None))
        if not self.tie_embeddings:
            out.append(ParamShape("output.weight", (self.vocab_size, d), None))
        return out

    def num_parameters(self) -> int:
        """Total parameter count."""
        total = 0
        for p in self.parameter_shapes():
            n = 1
            for s in p.shape:
                n *= s
            total += n
        return total


PRESETS: dict[str, MoEConfig] = {
    # The CPU test model: byte-level vocabulary, 8 experts so that EP=8 fits 8 ranks.
    "tiny": MoEConfig(
        vocab_size=256,
        dim=64,
        n_layers=2,
        n_heads=4,
        n_kv_heads=2,
        head_dim=16,
        n_experts=8,
        top_k=2,
        expert_ffn_dim=32,
        n_shared_experts=1,
        n_dense_layers=1,
        dense_ffn_dim=128,
    ),
    # Kimi K2's published shapes (61 layers, hidden 7168, 384 routed + 1 shared experts of
    # width 2048, 64 heads, layer 0 dense with FFN 18432, vocabulary 163840). K2 uses MLA;
    # here attention is plain multi-head attention with head_dim 128, which keeps the
    # per-head Muon units close in size to MLA's projections.
    "kimi-k2": MoEConfig(
        vocab_size=163840,
        dim=7168,
        n_layers=61,
        n_heads=64,
        n_kv_heads=64,
        head_dim=128,
        n_experts=384,
        top_k=8,
        expert_ffn_dim=2048,
        n_shared_experts=1,
        n_dense_layers=1,
        dense_ffn_dim=18432,
    ),
}


def preset(name: str) -> MoEConfig:
    """The named preset, or a ValueError listing the known names."""
    if name not in PRESETS:
        raise ValueError(f"unknown model preset {name!r}; known: {', '.join(PRESETS)}")
    return PRESETS[name]
