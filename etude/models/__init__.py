"""Models: the reference MoE transformer and its size presets."""

from etude.models.config import PRESETS, MoEConfig, ParamShape, preset
from etude.models.moe import KVCache, MoETransformer

__all__ = ["PRESETS", "KVCache", "MoEConfig", "MoETransformer", "ParamShape", "preset"]
