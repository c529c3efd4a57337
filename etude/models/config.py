"""Sizes of the reference MoE transformer, from a tiny CPU model to a 1T-parameter preset.

`MoEConfig.parameter_shapes()` lists every parameter such a model has, with the Muon
granularity that applies to it, so that the optimizer planner (`etude plan muon`) and the
benchmarks can reason about a model without building it.
"""

from __future__ import annotations

from dataclasses import dataclass


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

    def is_dense_layer(self, i: int) -> bool:
        """Layer `i` has a dense FFN: it is among the first `n_dense_layers`, or the model has
        no experts at all (`n_experts == 0`, a dense model)."""
        return i < self.n_dense_layers or self.n_experts == 0

    def parameter_shapes(self) -> list[ParamShape]:
        """Every parameter of the model, in module order."""
        d, hd = self.dim, self.head_dim
        out = [ParamShape("tok_embeddings.weight", (self.vocab_size, d), None)]
        for i in range(self.n_layers):
            p = f"layers.{i}."
            out += [
                ParamShape(p + "attention_norm.weight", (d,), None),
                ParamShape(
                    p + "attention.wq.weight",
                    (self.n_heads * hd, d),
                    {"heads": self.n_heads, "head_dim": 0},
                ),
                ParamShape(
                    p + "attention.wk.weight",
                    (self.n_kv_heads * hd, d),
                    {"heads": self.n_kv_heads, "head_dim": 0},
                ),
                ParamShape(
                    p + "attention.wv.weight",
                    (self.n_kv_heads * hd, d),
                    {"heads": self.n_kv_heads, "head_dim": 0},
                ),
                ParamShape(
                    p + "attention.wo.weight",
                    (d, self.n_heads * hd),
                    {"heads": self.n_heads, "head_dim": 1},
                ),
                ParamShape(p + "ffn_norm.weight", (d,), None),
            ]
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
        out += [
            ParamShape("norm.weight", (d,), None),
            ParamShape("output.weight", (self.vocab_size, d), None),
        ]
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
