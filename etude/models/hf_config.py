"""Hugging Face `config.json` <-> `MoEConfig`, for the architectures etude implements.

Reading goes through transformers' own config classes, so defaults and renamed fields
(`rope_parameters` for `rope_theta`, `num_local_experts` for `num_experts`) are filled in as
transformers fills them. Anything etude does not implement is refused by name rather than
silently computed differently.
"""

from __future__ import annotations

from typing import Any

from etude.models.config import MoEConfig
from etude.models.rope import YaRN

# architecture in config.json -> transformers config class name
ARCHITECTURES = {
    "LlamaForCausalLM": "LlamaConfig",
    "Qwen3MoeForCausalLM": "Qwen3MoeConfig",
    "DeepseekV3ForCausalLM": "DeepseekV3Config",
}


class CheckpointError(ValueError):
    """A checkpoint etude cannot load or write; the message names what is wrong."""


def _config_class(architecture: str):
    import transformers

    return getattr(transformers, ARCHITECTURES[architecture])


def architecture_of(raw: dict[str, Any]) -> str:
    """The supported architecture a config.json dict declares, or CheckpointError."""
    names = raw.get("architectures") or []
    if len(names) != 1 or names[0] not in ARCHITECTURES:
        raise CheckpointError(
            f"unknown architecture {names or raw.get('model_type')!r}; etude loads "
            f"{', '.join(ARCHITECTURES)}"
        )
    return names[0]


def _refuse(field: str, value: Any, why: str) -> None:
    raise CheckpointError(f"unsupported config field {field}={value!r}: {why}")


def _rope_parameters(cfg) -> dict[str, Any]:
    # transformers has already moved a legacy `rope_scaling` (with "type") in here
    return getattr(cfg, "rope_parameters", None) or {}


def _rope_theta(cfg) -> float:
    return float(_rope_parameters(cfg).get("rope_theta", getattr(cfg, "rope_theta", 10000.0)))


def _yarn(cfg, architecture: str) -> YaRN | None:
    """The YaRN parameters of `rope_parameters` (None for default RoPE), read with the
    defaults transformers' `_compute_yarn_parameters` applies."""
    rope = _rope_parameters(cfg)
    kind = rope.get("rope_type", "default")
    if kind == "default":
        return None
    if kind != "yarn" or architecture != "DeepseekV3ForCausalLM":
        _refuse(
            "rope_parameters.rope_type",
            kind,
            "etude implements default RoPE, and YaRN for DeepseekV3ForCausalLM",
        )
    if rope.get("partial_rotary_factor", 1.0) != 1.0:
        _refuse(
            "rope_parameters.partial_rotary_factor",
            rope["partial_rotary_factor"],
            "etude rotates the whole RoPE head dimension",
        )
    original = rope["original_max_position_embeddings"]
    factor = rope.get("factor") or cfg.max_position_embeddings / original
    attention_factor = rope.get("attention_factor")
    return YaRN(
        factor=float(factor),
        original_max_position_embeddings=int(original),
        beta_fast=float(rope.get("beta_fast") or 32),
        beta_slow=float(rope.get("beta_slow") or 1),
        mscale=float(rope.get("mscale") or 0),
        mscale_all_dim=float(rope.get("mscale_all_dim") or 0),
        attention_factor=None if attention_factor is None else float(attention_factor),
        truncate=bool(rope.get("truncate", True)),
    )


def _rope_parameters_for(config: MoEConfig) -> dict[str, Any]:
    """config.json's `rope_parameters` for `config` (transformers 5 naming)."""
    if config.yarn is None:
        return {"rope_type": "default", "rope_theta": config.rope_theta}
    y = config.yarn
    out = {
        "rope_type": "yarn",
        "rope_theta": config.rope_theta,
        "factor": y.factor,
        "original_max_position_embeddings": y.original_max_position_embeddings,
        "beta_fast": y.beta_fast,
        "beta_slow": y.beta_slow,
        "mscale": y.mscale,
        "mscale_all_dim": y.mscale_all_dim,
        "truncate": y.truncate,
    }
    if y.attention_factor is not None:
        out["attention_factor"] = y.attention_factor
    return out


def fp8_block_size(raw: dict[str, Any]) -> tuple[int, int] | None:
    """The (rows, cols) weight block of a block-quantized FP8 checkpoint (DeepSeek-V3,
    Kimi-K2: float8_e4m3fn weights, one float scale per block), None when unquantized;
    CheckpointError for any other quantization."""
    quant = raw.get("quantization_config")
    if not quant:
        return None
    method = quant.get("quant_method", "?")
    if method != "fp8":
        _refuse(
            "quantization_config", method, "etude dequantizes block FP8 only (quant_method 'fp8')"
        )
    if quant.get("fmt", "e4m3") != "e4m3":
        _refuse("quantization_config.fmt", quant["fmt"], "etude reads float8_e4m3fn weights")
    block = quant.get("weight_block_size")
    if not (isinstance(block, list | tuple) and len(block) == 2 and all(b > 0 for b in block)):
        _refuse(
            "quantization_config.weight_block_size",
            block,
            "etude dequantizes per-block scales ([rows, cols], e.g. [128, 128])",
        )
    return int(block[0]), int(block[1])


def _common_checks(cfg) -> None:
    if cfg.hidden_act != "silu":
        _refuse("hidden_act", cfg.hidden_act, "etude's FFNs are SwiGLU (silu)")
    if getattr(cfg, "attention_bias", False):
        _refuse("attention_bias", True, "etude's attention projections have no bias")
    if getattr(cfg, "mlp_bias", False):
        _refuse("mlp_bias", True, "etude's FFNs have no bias")
    if getattr(cfg, "use_sliding_window", False):
        _refuse("use_sliding_window", True, "etude attends to the whole causal prefix")
    if getattr(cfg, "pretraining_tp", 1) != 1:
        _refuse("pretraining_tp", cfg.pretraining_tp, "only 1 is implemented")


def config_from_hf(raw: dict[str, Any]) -> MoEConfig:
    """The `MoEConfig` of a config.json dict; CheckpointError naming the architecture or
    the field etude does not support."""
    arch = architecture_of(raw)
    fp8_block_size(raw)  # the loader dequantizes block FP8; anything else is refused here
    skip = ("transformers_version", "quantization_config")
    cfg = _config_class(arch)(**{k: v for k, v in raw.items() if k not in skip})
    _common_checks(cfg)
    common = dict(
        vocab_size=cfg.vocab_size,
        dim=cfg.hidden_size,
        n_layers=cfg.num_hidden_layers,
        n_heads=cfg.num_attention_heads,
        rope_theta=_rope_theta(cfg),
        yarn=_yarn(cfg, arch),
        max_seq_len=cfg.max_position_embeddings,
        norm_eps=cfg.rms_norm_eps,
        tie_embeddings=bool(cfg.tie_word_embeddings),
        dense_ffn_dim=cfg.intermediate_size,
    )
    if arch == "LlamaForCausalLM":
        return MoEConfig(
            **common,
            n_kv_heads=cfg.num_key_value_heads,
            head_dim=getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads,
            n_experts=0,
            top_k=0,
            expert_ffn_dim=0,
            n_shared_experts=0,
            n_dense_layers=cfg.num_hidden_layers,
            aux_loss_weight=0.0,
        )
    if arch == "Qwen3MoeForCausalLM":
        dense = tuple(
            i
            for i in range(cfg.num_hidden_layers)
            if i in cfg.mlp_only_layers
            or cfg.num_experts == 0
            or (i + 1) % cfg.decoder_sparse_step != 0
        )
        return MoEConfig(
            **common,
            n_kv_heads=cfg.num_key_value_heads,
            head_dim=cfg.head_dim,
            n_experts=cfg.num_experts,
            top_k=cfg.num_experts_per_tok,
            expert_ffn_dim=cfg.moe_intermediate_size,
            n_shared_experts=0,
            n_dense_layers=0,
            dense_layer_ids=dense,
            qk_norm=True,
            norm_topk_prob=bool(cfg.norm_topk_prob),
            aux_loss_weight=float(cfg.router_aux_loss_coef),
        )
    # DeepSeek-V3 / Kimi-K2 name their routing in config.json; V2's softmax or greedy
    # rules compute something else.
    if getattr(cfg, "scoring_func", "sigmoid") != "sigmoid":
        _refuse("scoring_func", cfg.scoring_func, "etude routes DeepSeek-V3 models by sigmoid")
    if getattr(cfg, "topk_method", "noaux_tc") != "noaux_tc":
        _refuse("topk_method", cfg.topk_method, "etude implements noaux_tc (group-limited top-k)")
    return MoEConfig(
        **common,
        n_kv_heads=cfg.num_attention_heads,
        head_dim=cfg.qk_nope_head_dim + cfg.qk_rope_head_dim,
        n_experts=cfg.n_routed_experts,
        top_k=cfg.num_experts_per_tok,
        expert_ffn_dim=cfg.moe_intermediate_size,
        n_shared_experts=cfg.n_shared_experts or 0,
        n_dense_layers=cfg.first_k_dense_replace,
        router="sigmoid",
        router_bias=True,
        norm_topk_prob=bool(cfg.norm_topk_prob),
        routed_scaling_factor=float(cfg.routed_scaling_factor),
        n_group=cfg.n_group,
        topk_group=cfg.topk_group,
        attention="mla",
        q_lora_rank=cfg.q_lora_rank,
        kv_lora_rank=cfg.kv_lora_rank,
        qk_nope_head_dim=cfg.qk_nope_head_dim,
        qk_rope_head_dim=cfg.qk_rope_head_dim,
        v_head_dim=cfg.v_head_dim,
        rope_interleave=bool(cfg.rope_interleave),
        # DeepSeek-V3 balances load with its bias, not an auxiliary loss.
        aux_loss_weight=0.0,
    )


def architecture_for(config: MoEConfig) -> str:
    """The Hugging Face architecture that computes what `config` does; CheckpointError for
    etude's own variants that none does (e.g. softmax routing with shared experts)."""
    if config.attention == "mla":
        if config.router == "sigmoid" and config.router_bias and config.n_experts:
            return "DeepseekV3ForCausalLM"
    elif config.n_experts == 0 or all(config.is_dense_layer(i) for i in range(config.n_layers)):
        if not config.qk_norm:
            return "LlamaForCausalLM"
    elif config.qk_norm and config.router == "softmax" and not config.n_shared_experts:
        return "Qwen3MoeForCausalLM"
    raise CheckpointError(
        "this model has no Hugging Face architecture etude can write (it matches none of "
        f"{', '.join(ARCHITECTURES)}); etude's own GQA MoE trains and checkpoints with DCP"
    )


def hf_config_for(config: MoEConfig, base: dict[str, Any] | None = None):
    """A transformers config object for `config`: `base` (the loaded checkpoint's
    config.json: token ids, chat settings) with every field etude models overwritten."""
    arch = architecture_for(config)
    fields: dict[str, Any] = dict(
        vocab_size=config.vocab_size,
        hidden_size=config.dim,
        num_hidden_layers=config.n_layers,
        num_attention_heads=config.n_heads,
        max_position_embeddings=config.max_seq_len,
        rms_norm_eps=config.norm_eps,
        tie_word_embeddings=config.tie_embeddings,
        intermediate_size=config.dense_ffn_dim,
        rope_parameters=_rope_parameters_for(config),
        hidden_act="silu",
        architectures=[arch],
    )
    if arch == "LlamaForCausalLM":
        fields.update(num_key_value_heads=config.n_kv_heads, head_dim=config.head_dim)
    elif arch == "Qwen3MoeForCausalLM":
        moe_layers = [i for i in range(config.n_layers) if not config.is_dense_layer(i)]
        fields.update(
            num_key_value_heads=config.n_kv_heads,
            head_dim=config.head_dim,
            num_experts=config.n_experts,
            num_experts_per_tok=config.top_k,
            moe_intermediate_size=config.expert_ffn_dim,
            decoder_sparse_step=1,
            mlp_only_layers=[i for i in range(config.n_layers) if i not in moe_layers],
            norm_topk_prob=config.norm_topk_prob,
            router_aux_loss_coef=config.aux_loss_weight,
        )
    else:
        fields.update(
            num_key_value_heads=config.n_heads,
            n_routed_experts=config.n_experts,
            num_experts_per_tok=config.top_k,
            moe_intermediate_size=config.expert_ffn_dim,
            n_shared_experts=config.n_shared_experts,
            first_k_dense_replace=config.n_dense_layers,
            norm_topk_prob=config.norm_topk_prob,
            routed_scaling_factor=config.routed_scaling_factor,
            n_group=config.n_group,
            topk_group=config.topk_group,
            q_lora_rank=config.q_lora_rank,
            kv_lora_rank=config.kv_lora_rank,
            qk_nope_head_dim=config.qk_nope_head_dim,
            qk_rope_head_dim=config.qk_rope_head_dim,
            v_head_dim=config.v_head_dim,
            rope_interleave=config.rope_interleave,
        )
    # etude writes unquantized weights; rope_scaling is the legacy name of rope_parameters
    drop = ("transformers_version", "dtype", "quantization_config", "rope_scaling")
    keep = {k: v for k, v in (base or {}).items() if k not in drop}
    return _config_class(arch)(**{**keep, **fields})
