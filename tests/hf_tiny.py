"""Tiny random-weight instances of real architectures, built locally with transformers'
config classes and saved as transformers saves them (shared by the open-checkpoint tests
and benchmark)."""

from __future__ import annotations

import json
from pathlib import Path

import torch

VOCAB = 96


def tiny_tokenizer():
    """A word-level tokenizer of VOCAB tokens (for checkpoints that need one)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    vocab.update({f"w{i}": i for i in range(3, VOCAB)})
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )


def tiny_configs() -> dict:
    """name -> transformers config of a tiny instance (a few layers, awkward choices on)."""
    from transformers import DeepseekV3Config, LlamaConfig, Qwen3MoeConfig

    common = dict(vocab_size=VOCAB, hidden_size=64, initializer_range=0.08)
    deepseek_v3 = dict(
        **common,
        intermediate_size=96,
        moe_intermediate_size=32,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=4,
        q_lora_rank=24,
        kv_lora_rank=16,
        qk_nope_head_dim=16,
        qk_rope_head_dim=8,
        v_head_dim=12,
        n_routed_experts=8,
        n_shared_experts=1,
        num_experts_per_tok=2,
        n_group=4,
        topk_group=2,
        routed_scaling_factor=2.5,
        first_k_dense_replace=1,
    )
    return {
        "llama": LlamaConfig(
            **common,
            intermediate_size=96,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            tie_word_embeddings=True,
            rope_parameters={"rope_type": "default", "rope_theta": 100000.0},
        ),
        "qwen3_moe": Qwen3MoeConfig(
            **common,
            intermediate_size=96,
            moe_intermediate_size=32,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=16,
            num_experts=8,
            num_experts_per_tok=2,
            norm_topk_prob=True,
            mlp_only_layers=[1],
        ),
        "deepseek_v3": DeepseekV3Config(**deepseek_v3),
        # YaRN as DeepSeek-V3 / Kimi-K2 configure it (legacy `rope_scaling`, "type"). The
        # RoPE dims, theta and original context of 16 put the interpolation ramp across
        # several pairs (0, 1/4, 1/2, 3/4, 1, ...), and mscale != mscale_all_dim makes
        # both the rotary and the softmax scaling differ from 1.
        "deepseek_v3_yarn": DeepseekV3Config(
            **{
                **deepseek_v3,
                "num_hidden_layers": 2,
                "qk_nope_head_dim": 8,
                "qk_rope_head_dim": 16,
            },
            max_position_embeddings=64,
            rope_theta=10.0,
            rope_scaling={
                "type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 16,
                "beta_fast": 4,
                "beta_slow": 1,
                "mscale": 0.7,
                "mscale_all_dim": 1.0,
            },
        ),
        "deepseek_v3_no_q_lora": DeepseekV3Config(
            **common,
            intermediate_size=96,
            moe_intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=4,
            q_lora_rank=None,
            kv_lora_rank=16,
            qk_nope_head_dim=8,
            qk_rope_head_dim=8,
            v_head_dim=8,
            n_routed_experts=8,
            n_shared_experts=2,
            num_experts_per_tok=3,
            n_group=2,
            topk_group=1,
            norm_topk_prob=False,
            routed_scaling_factor=1.5,
            first_k_dense_replace=0,
        ),
    }


def build_hf(name: str, seed: int = 0):
    """The transformers model for `tiny_configs()[name]`, fp32, eval mode, with norms and
    the DeepSeek score-correction bias perturbed away from their defaults (ones, zeros)."""
    config = tiny_configs()[name]
    torch.manual_seed(seed)
    model = _causal_lm(config)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "norm" in pname:
                p.add_(0.1 * torch.randn_like(p))
        for bname, b in model.named_buffers():
            if bname.endswith("e_score_correction_bias"):
                b.copy_(0.05 * torch.randn_like(b))
    return model.eval()


def _causal_lm(config):
    from transformers import DeepseekV3ForCausalLM, LlamaForCausalLM, Qwen3MoeForCausalLM

    cls = {
        "llama": LlamaForCausalLM,
        "qwen3_moe": Qwen3MoeForCausalLM,
        "deepseek_v3": DeepseekV3ForCausalLM,
    }[config.model_type]
    return cls(config)


def save_tiny(name: str, directory: Path, seed: int = 0, max_shard_size: str | None = None):
    """Save a tiny instance and a tokenizer to `directory` as transformers does; returns
    the transformers model."""
    model = build_hf(name, seed)
    kwargs = {"max_shard_size": max_shard_size} if max_shard_size else {}
    model.save_pretrained(directory, **kwargs)
    tiny_tokenizer().save_pretrained(directory)
    return model


def write_jsonl(path: Path, n: int = 60) -> Path:
    """`n` JSONL documents of 5-29 random tiny-tokenizer words each."""
    g = torch.Generator().manual_seed(0)
    lines = []
    for _ in range(n):
        words = torch.randint(
            3, VOCAB, (int(torch.randint(5, 30, (1,), generator=g)),), generator=g
        )
        lines.append(json.dumps({"text": " ".join(f"w{int(w)}" for w in words)}))
    path.write_text("\n".join(lines) + "\n")
    return path


FP8_MAX = 448.0  # largest finite float8_e4m3fn


def quantize_fp8(w: torch.Tensor, block: tuple[int, int]) -> tuple[torch.Tensor, torch.Tensor]:
    """A 2-D float weight -> (float8_e4m3fn weight, float32 scale_inv per block) as the
    released DeepSeek-V3 checkpoints store it (partial blocks at the right and bottom)."""
    (r, c), (br, bc) = w.shape, block
    rows, cols = -(-r // br), -(-c // bc)
    padded = torch.zeros(rows * br, cols * bc)
    padded[:r, :c] = w
    amax = padded.view(rows, br, cols, bc).abs().amax(dim=(1, 3))
    scale = (amax / FP8_MAX).clamp(min=1e-12)
    expanded = scale.repeat_interleave(br, 0).repeat_interleave(bc, 1)[:r, :c]
    return (w / expanded).to(torch.float8_e4m3fn), scale


def dequantize_by_hand(q: torch.Tensor, scale: torch.Tensor, block: tuple[int, int]):
    """The reference dequantization: each block's scale repeated over it, cropped."""
    r, c = q.shape
    expanded = scale.repeat_interleave(block[0], 0).repeat_interleave(block[1], 1)[:r, :c]
    return q.to(torch.float32) * expanded


def _quantized_key(key: str, t: torch.Tensor) -> bool:
    # As in the released checkpoints: every Linear of the decoder layers except the router
    # is FP8; embeddings, norms, the router, its bias and the output head stay high precision.
    return (
        t.dim() == 2
        and key.startswith("model.layers.")
        and key.endswith("proj.weight")
        and "layernorm" not in key
    )


def save_tiny_fp8(name: str, directory: Path, block: tuple[int, int], seed: int = 0):
    """Save a tiny DeepSeek-V3 instance as a block-FP8 checkpoint (per-expert tensors,
    `weight_scale_inv` per block, `quantization_config` in config.json) with a tokenizer;
    returns (the transformers model holding the hand-dequantized weights, the written
    {key: tensor} of the checkpoint)."""
    hf = build_hf(name, seed)
    fused = hf.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    for key, t in fused.items():
        if key.endswith("mlp.experts.gate_up_proj"):  # [E, 2F, D]: gate rows, then up rows
            prefix, f = key.removesuffix("gate_up_proj"), t.shape[1] // 2
            for e in range(t.shape[0]):
                tensors[f"{prefix}{e}.gate_proj.weight"] = t[e, :f]
                tensors[f"{prefix}{e}.up_proj.weight"] = t[e, f:]
        elif key.endswith("mlp.experts.down_proj"):  # [E, D, F]
            prefix = key.removesuffix("down_proj")
            for e in range(t.shape[0]):
                tensors[f"{prefix}{e}.down_proj.weight"] = t[e]
        else:
            tensors[key] = t
    written, dequantized = {}, {}
    for key, t in tensors.items():
        if _quantized_key(key, t):
            q, scale = quantize_fp8(t, block)
            written[key], written[key + "_scale_inv"] = q, scale
            dequantized[key] = dequantize_by_hand(q, scale, block)
        else:
            written[key] = dequantized[key] = t.contiguous()
    fused_dequantized = {}
    for key, t in fused.items():
        if key.endswith("mlp.experts.gate_up_proj"):
            prefix, n = key.removesuffix("gate_up_proj"), t.shape[0]
            gate = [dequantized[f"{prefix}{e}.gate_proj.weight"] for e in range(n)]
            up = [dequantized[f"{prefix}{e}.up_proj.weight"] for e in range(n)]
            fused_dequantized[key] = torch.stack([torch.cat([g, u]) for g, u in zip(gate, up)])
        elif key.endswith("mlp.experts.down_proj"):
            prefix = key.removesuffix("down_proj")
            fused_dequantized[key] = torch.stack(
                [dequantized[f"{prefix}{e}.down_proj.weight"] for e in range(t.shape[0])]
            )
        else:
            fused_dequantized[key] = dequantized[key]
    hf.load_state_dict(fused_dequantized)
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    save_file(written, str(directory / "model.safetensors"), metadata={"format": "pt"})
    raw = {**hf.config.to_dict(), "architectures": ["DeepseekV3ForCausalLM"]}
    raw["quantization_config"] = {
        "activation_scheme": "dynamic",
        "fmt": "e4m3",
        "quant_method": "fp8",
        "weight_block_size": list(block),
    }
    (directory / "config.json").write_text(json.dumps(raw, indent=2))
    tiny_tokenizer().save_pretrained(directory)
    return hf, written
