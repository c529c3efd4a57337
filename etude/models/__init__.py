"""Models: the reference MoE transformer, its size presets, and open checkpoints
(Llama, Qwen3-MoE, DeepSeek-V3 / Kimi-K2) loaded from and saved to Hugging Face layouts."""

from etude.models.config import PRESETS, MoEConfig, ParamShape, preset
from etude.models.hf_checkpoint import load_pretrained, save_pretrained
from etude.models.hf_config import CheckpointError
from etude.models.moe import KVCache, MoETransformer

__all__ = [
    "PRESETS",
    "CheckpointError",
    "KVCache",
    "MoEConfig",
    "MoETransformer",
    "ParamShape",
    "load_pretrained",
    "preset",
    "save_pretrained",
]
