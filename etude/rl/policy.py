"""The policy protocol `rl_update` trains through: a forward that fills a KV cache, and the
teacher's logits on a cached prefix. Two implementations: `NativePolicy` for `etude.models`
transformers (and modules with their call signature, such as the ToolGrid byte policy) and
`HFPolicy` for Hugging Face causal LMs. Both may wrap an FSDP2-sharded module.

Shapes: tokens [B, T] → logits [B, T, V]; the cache holds the same B rows."""

from __future__ import annotations

from typing import Any, Protocol

from torch import Tensor, nn

from etude.rl.teacher import TeacherQuery, cached_teacher_logits_hf, cached_teacher_logits_moe


class Policy(Protocol):
    """What one RL update needs from a model."""

    module: nn.Module

    def forward_with_cache(self, tokens: Tensor) -> tuple[Tensor, Any]:
        """Logits [B, T, V] for tokens [B, T], and the cache the forward filled."""
        ...

    def logits(self, tokens: Tensor) -> Tensor:
        """Logits [B, T, V] without a cache (a reference model's forward)."""
        ...

    def teacher_logits(
        self, cache: Any, rows: list[int], queries: list[TeacherQuery]
    ) -> list[Tensor]:
        """Teacher logits [L_q, V] per query (of batch row `rows[q]`) in one forward,
        reusing the cached prefix."""
        ...


class NativePolicy:
    """An `etude.models` transformer: `module(tokens, cache=KVCache, start_pos=)`, with a
    `config` (`MoEConfig`)."""

    def __init__(self, module: nn.Module):
        self.module = module

    def forward_with_cache(self, tokens: Tensor) -> tuple[Tensor, Any]:
        from etude.models import KVCache

        param = next(self.module.parameters())
        cache = KVCache.empty(
            self.module.config, tokens.shape[0], tokens.shape[1], param.dtype, param.device
        )
        return self.module(tokens, cache=cache, start_pos=0), cache

    def logits(self, tokens: Tensor) -> Tensor:
        return self.module(tokens)

    def teacher_logits(
        self, cache: Any, rows: list[int], queries: list[TeacherQuery]
    ) -> list[Tensor]:
        return cached_teacher_logits_moe(self.module, cache, rows, queries)


class HFPolicy:
    """A Hugging Face causal LM (`module(input_ids=, use_cache=)` returning `.logits` and
    `.cache`, or `.past_key_values` before transformers 5)."""

    def __init__(self, module: nn.Module):
        self.module = module

    def forward_with_cache(self, tokens: Tensor) -> tuple[Tensor, Any]:
        out = self.module(input_ids=tokens, use_cache=True)
        return out.logits, out.cache if hasattr(out, "cache") else out.past_key_values

    def logits(self, tokens: Tensor) -> Tensor:
        return self.module(input_ids=tokens).logits

    def teacher_logits(
        self, cache: Any, rows: list[int], queries: list[TeacherQuery]
    ) -> list[Tensor]:
        return cached_teacher_logits_hf(self.module, cache, rows, queries)
