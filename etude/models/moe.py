"""The reference Mixture-of-Experts decoder: RMSNorm, RoPE, grouped-query attention (or
multi-head latent attention, `mla.py`), top-k routed experts (`routing.py`) plus a shared
expert, and a load-balancing loss. `MoEConfig`'s variants make it Llama, Qwen3-MoE or
DeepSeek-V3 / Kimi-K2 as well (loaded from checkpoints by `etude.models.hf`).

Usage::

    from etude.models import MoETransformer, KVCache, preset
    model = MoETransformer(preset("tiny"))
    logits = model(tokens)                                  # tokens [B, T] int64 -> [B, T, V]
    logits, aux = model(tokens, return_aux_loss=True)       # aux: load-balancing loss, scalar
    loss = cross_entropy(logits, targets) + model.config.aux_loss_weight * aux

    cache = KVCache.empty(model.config, batch=B, max_len=256)
    logits = model(prompt, cache=cache, start_pos=0)        # fills positions [0, P)
    logits = model(next_tokens, cache=cache, start_pos=P)   # attends to the cached prefix
    logits = model(rows, cache=cache, start_pos=starts)     # starts [B]: a prefix per row

A cache holds keys and values by position: calling again with the same `start_pos` runs
another continuation on the same prefix (positions past the prefix are overwritten).
`MoEConfig(n_experts=0, ...)` or `n_dense_layers == n_layers` gives a dense model.

Parameter names and shapes equal `MoEConfig.parameter_shapes()` (the optimizer planner reads
those): attention projections keep heads as row blocks (`wo`: column blocks) for per-head
Muon, and routed experts are stacked `[E, out, in]` for per-expert Muon.

Distribution plugs in without changing this file's math (see `etude.parallel`):
`Attention.gather_kv` (context parallelism gathers keys/values of the whole sequence),
`MoE.dispatch` (expert parallelism moves tokens to the ranks holding their experts) and
`MoE.batch_sum` (sums load-balancing statistics over every rank's tokens).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.distributed.tensor import DTensor, distribute_tensor

from etude.models.attend import attend
from etude.models.config import MoEConfig
from etude.models.mla import LatentAttention
from etude.models.rope import rope
from etude.models.routing import bias_balancing_update, route

# gather_kv(k, v, key_positions) -> (k, v, key_positions); k, v: [B, T, kv_heads, head_dim]
GatherKV = Callable[[Tensor, Tensor, Tensor], tuple[Tensor, Tensor, Tensor]]


@dataclass
class KVCache:
    """Keys and values by position for each layer: `keys[i]`, `values[i]` are
    [B, max_len, heads, width] (`MoEConfig.kv_cache_dims()`: GQA keys and values, or MLA's
    compressed latent and RoPE key). Position `p` of every sequence lives at index `p`."""

    keys: list[Tensor]
    values: list[Tensor]

    @classmethod
    def empty(
        cls,
        config: MoEConfig,
        batch: int,
        max_len: int | None = None,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str | None = None,
    ) -> KVCache:
        """A zeroed cache for `batch` sequences of up to `max_len` (default
        `config.max_seq_len`) positions."""
        length = max_len or config.max_seq_len
        (kh, kd), (vh, vd) = config.kv_cache_dims()

        def make(heads: int, width: int) -> list[Tensor]:
            shape = (batch, length, heads, width)
            return [torch.zeros(shape, dtype=dtype, device=device) for _ in range(config.n_layers)]

        return cls(keys=make(kh, kd), values=make(vh, vd))

    @property
    def max_len(self) -> int:
        return self.keys[0].shape[1]


class Attention(nn.Module):
    """Causal multi-head / grouped-query attention; masks by position, not by index, so a
    query sees exactly the keys at positions <= its own wherever they come from (a cache,
    or the other ranks of a context-parallel group)."""

    def __init__(self, config: MoEConfig):
        super().__init__()
        if config.n_heads % config.n_kv_heads:
            raise ValueError(
                f"n_heads={config.n_heads} is not a multiple of n_kv_heads={config.n_kv_heads}"
            )
        self.n_heads, self.n_kv_heads, self.head_dim = (
            config.n_heads,
            config.n_kv_heads,
            config.head_dim,
        )
        self.rope_theta, self.yarn = config.rope_theta, config.yarn
        self.wq = nn.Linear(config.dim, config.n_heads * config.head_dim, bias=False)
        self.wk = nn.Linear(config.dim, config.n_kv_heads * config.head_dim, bias=False)
        self.wv = nn.Linear(config.dim, config.n_kv_heads * config.head_dim, bias=False)
        self.wo = nn.Linear(config.n_heads * config.head_dim, config.dim, bias=False)
        if config.qk_norm:  # Qwen3: RMSNorm over each head's query and key, before RoPE
            self.q_norm = nn.RMSNorm(config.head_dim, eps=config.norm_eps)
            self.k_norm = nn.RMSNorm(config.head_dim, eps=config.norm_eps)
        self.gather_kv: GatherKV | None = None

    def forward(
        self, x: Tensor, positions: Tensor, cache: tuple[Tensor, Tensor] | None = None
    ) -> Tensor:
        """x [B, T, dim], positions [T] (contiguous with a cache), or [B, T] per row (only
        with a cache) -> [B, T, dim]. `cache` is one layer's (keys, values) of a KVCache; the
        new keys/values are written at `positions`."""
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.n_heads, self.head_dim)
        k = self.wk(x).view(b, t, self.n_kv_heads, self.head_dim)
        if hasattr(self, "q_norm"):
            q, k = self.q_norm(q), self.k_norm(k)
        q = rope(q, positions, self.rope_theta, yarn=self.yarn)
        k = rope(k, positions, self.rope_theta, yarn=self.yarn)
        v = self.wv(x).view(b, t, self.n_kv_heads, self.head_dim)
        key_positions = positions
        if cache is not None:
            if positions.dim() == 1:
                end = int(positions[-1]) + 1
                cache[0][:, int(positions[0]) : end] = k
                cache[1][:, int(positions[0]) : end] = v
            else:  # each row continues its own prefix
                end = int(positions.max()) + 1
                rows = torch.arange(b, device=x.device)[:, None]
                cache[0][rows, positions] = k
                cache[1][rows, positions] = v
            k, v = cache[0][:, :end], cache[1][:, :end]
            key_positions = torch.arange(end, device=x.device)
        if self.gather_kv is not None:
            k, v, key_positions = self.gather_kv(k, v, key_positions)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))  # [B, heads, T, head_dim]
        out = attend(q, k, v, positions, key_positions)
        return self.wo(out.transpose(1, 2).reshape(b, t, self.n_heads * self.head_dim))


class FeedForward(nn.Module):
    """SwiGLU: w2(silu(w1 x) * w3 x)."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def _local(w: Tensor) -> Tensor:
    # Under expert parallelism the parameter is a DTensor sharded over experts; this rank
    # computes with its own experts only.
    return w.to_local() if isinstance(w, DTensor) else w


def expert_matmul(x: Tensor, w: Tensor, counts: Tensor, grouped: bool | None = None) -> Tensor:
    """Rows of `x` [N, in], grouped by expert in order with `counts` [E] rows each, times
    each expert's `w` [E, out, in] transposed -> [N, out].

    Uses `F.grouped_mm` when its 16-byte stride rule holds (or `grouped=True`), otherwise a
    per-expert loop; both give the same result. Experts with zero rows are fine."""
    aligned = (x.shape[1] * x.element_size()) % 16 == 0 and (
        w.shape[1] * w.element_size()
    ) % 16 == 0
    if grouped is None:
        # Verified on CPU (any dtype); elsewhere only bf16 is assumed to have a kernel.
        grouped = aligned and (x.device.type == "cpu" or x.dtype == torch.bfloat16)
    if grouped:
        offsets = counts.cumsum(0).to(torch.int32)
        return F.grouped_mm(x, w.transpose(-2, -1), offs=offsets)
    chunks = x.split(counts.tolist())
    return torch.cat([c @ w[e].T for e, c in enumerate(chunks)])


class Experts(nn.Module):
    """`n_experts` SwiGLU experts stacked as w1, w3 [E, ffn, dim] and w2 [E, dim, ffn]."""

    def __init__(self, n_experts: int, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(n_experts, hidden, dim) * dim**-0.5)
        self.w2 = nn.Parameter(torch.randn(n_experts, dim, hidden) * hidden**-0.5)
        self.w3 = nn.Parameter(torch.randn(n_experts, hidden, dim) * dim**-0.5)
        self.grouped_mm: bool | None = None  # None: F.grouped_mm when shapes allow

    def forward(self, x: Tensor, counts: Tensor) -> Tensor:
        """x [N, dim] sorted by (local) expert with counts [E_local] -> [N, dim]."""
        w1, w2, w3 = _local(self.w1), _local(self.w2), _local(self.w3)
        g = self.grouped_mm
        h = F.silu(expert_matmul(x, w1, counts, g)) * expert_matmul(x, w3, counts, g)
        return expert_matmul(h, w2, counts, g)


class LocalDispatch:
    """Every expert on this rank: sort token slots by expert, and unsort afterwards."""

    def __init__(self, n_experts: int):
        self.n_experts = n_experts

    def dispatch(self, x: Tensor, expert_ids: Tensor) -> tuple[Tensor, Tensor, Any]:
        """x [N, dim], expert_ids [N, k] -> (rows [N*k, dim] sorted by expert, counts [E],
        state for `combine`)."""
        flat = expert_ids.flatten()
        order = flat.argsort(stable=True)
        counts = torch.bincount(flat, minlength=self.n_experts)
        return x[order // expert_ids.shape[1]], counts, order

    def combine(self, y: Tensor, order: Tensor) -> Tensor:
        """Rows in expert order -> rows in slot order [N*k, dim] (a gather: deterministic)."""
        return y[order.argsort()]


def load_balancing_loss(
    probs: Tensor,
    expert_ids: Tensor,
    batch_sum: Callable[[Tensor], Tensor] | None = None,
) -> Tensor:
    """Switch-style balance loss E * sum_e f_e * P_e over the whole batch.

    probs [N, E] router probabilities, expert_ids [N, k] chosen experts; f_e is the fraction
    of routed slots that went to e, P_e the mean probability of e. `batch_sum` sums a tensor
    over every rank holding other tokens of the batch (autograd-aware); None: this rank
    holds the whole batch."""
    n_experts = probs.shape[1]
    counts = torch.bincount(expert_ids.flatten(), minlength=n_experts).to(probs.dtype)
    stats = torch.cat([probs.sum(0), counts.detach(), probs.new_tensor([probs.shape[0]])])
    if batch_sum is not None:
        stats = batch_sum(stats)
    prob_sum, count_sum, n_tokens = stats[:n_experts], stats[n_experts:-1], stats[-1]
    f = count_sum.detach() / (n_tokens.detach() * expert_ids.shape[1])
    return n_experts * (f * prob_sum / n_tokens.detach()).sum()


class MoE(nn.Module):
    """Top-k routed experts (`routing.route`: softmax or sigmoid rule) plus an optional
    shared expert applied to every token. `router_bias` (sigmoid rule only) takes part in
    choosing experts, not in weighing them, so it gets no gradient: `update_router_bias`
    balances it from `expert_load`, the slots routed to each expert by the training
    forwards (train mode, gradients on) since its last call."""

    def __init__(self, config: MoEConfig):
        super().__init__()
        self.config, self.top_k = config, config.top_k
        self.router = nn.Linear(config.dim, config.n_experts, bias=False)
        if config.router_bias:
            self.router_bias = nn.Parameter(torch.zeros(config.n_experts), requires_grad=False)
        self.experts = Experts(config.n_experts, config.dim, config.expert_ffn_dim)
        self.shared = (
            FeedForward(config.dim, config.expert_ffn_dim * config.n_shared_experts)
            if config.n_shared_experts
            else None
        )
        self.dispatch = LocalDispatch(config.n_experts)
        self.batch_sum: Callable[[Tensor], Tensor] | None = None
        self.expert_load: Tensor | None = None

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """x [B, T, dim] -> (output [B, T, dim], load-balancing loss)."""
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        weights, expert_ids, probs = route(
            self.router(x), self.config, getattr(self, "router_bias", None)
        )
        if hasattr(self, "router_bias") and self.training and torch.is_grad_enabled():
            load = torch.bincount(expert_ids.flatten(), minlength=self.config.n_experts)
            self.expert_load = load if self.expert_load is None else self.expert_load + load
        rows, counts, state = self.dispatch.dispatch(x, expert_ids)
        y = self.dispatch.combine(self.experts(rows, counts), state)
        out = (y.view(-1, self.top_k, shape[-1]) * weights.unsqueeze(-1).to(y.dtype)).sum(1)
        if self.shared is not None:
            out = out + self.shared(x)
        aux = load_balancing_loss(probs, expert_ids, self.batch_sum)
        return out.view(shape), aux

    @torch.no_grad()
    def update_router_bias(self, rate: float) -> None:
        """Move `router_bias` by `routing.bias_balancing_update` of `expert_load` summed
        over every rank holding other tokens of the batch (`batch_sum`: collective, so
        every rank applies the same change), then start counting again (`rate` 0: only
        that)."""
        load, self.expert_load = self.expert_load, None
        if rate == 0:
            return
        if load is None:
            load = torch.zeros(self.config.n_experts, dtype=torch.long)
        load = load.to(self.router.weight.device)
        if self.batch_sum is not None:
            load = self.batch_sum(load)
        delta = bias_balancing_update(load, rate).to(self.router_bias.dtype)
        if isinstance(self.router_bias, DTensor):  # sharded by FSDP: this rank's part only
            bias = self.router_bias
            delta = distribute_tensor(delta, bias.device_mesh, bias.placements, src_data_rank=None)
        self.router_bias.add_(delta)


class TransformerBlock(nn.Module):
    """Pre-norm block: attention, then a dense FFN (`feed_forward`) or routed experts (`moe`)."""

    def __init__(self, config: MoEConfig, layer: int):
        super().__init__()
        self.attention_norm = nn.RMSNorm(config.dim, eps=config.norm_eps)
        self.attention = Attention(config) if config.attention == "gqa" else LatentAttention(config)
        self.ffn_norm = nn.RMSNorm(config.dim, eps=config.norm_eps)
        if config.is_dense_layer(layer):
            self.feed_forward = FeedForward(config.dim, config.dense_ffn_dim)
        else:
            self.moe = MoE(config)

    def forward(
        self, x: Tensor, positions: Tensor, cache: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor | None]:
        """x [B, T, dim] -> (x [B, T, dim], balance loss or None for a dense layer)."""
        x = x + self.attention(self.attention_norm(x), positions, cache)
        if hasattr(self, "feed_forward"):
            return x + self.feed_forward(self.ffn_norm(x)), None
        out, aux = self.moe(self.ffn_norm(x))
        return x + out, aux


class MoETransformer(nn.Module):
    """Decoder-only MoE transformer; `named_parameters()` equals `config.parameter_shapes()`."""

    def __init__(self, config: MoEConfig):
        super().__init__()
        self.config = config
        self.tok_embeddings = nn.Embedding(config.vocab_size, config.dim)
        self.layers = nn.ModuleList(TransformerBlock(config, i) for i in range(config.n_layers))
        self.norm = nn.RMSNorm(config.dim, eps=config.norm_eps)
        if not config.tie_embeddings:
            self.output = nn.Linear(config.dim, config.vocab_size, bias=False)

    def update_router_biases(self, rate: float) -> None:
        """DeepSeek-V3's auxiliary-loss-free balancing after an optimizer step: every MoE
        layer's router bias moves by `rate` towards equal loads (`MoE.update_router_bias`;
        collective under parallelism). A no-op for models without a router bias."""
        for layer in self.layers:
            if hasattr(layer, "moe") and hasattr(layer.moe, "router_bias"):
                layer.moe.update_router_bias(rate)

    def forward(
        self,
        tokens: Tensor,
        cache: KVCache | None = None,
        start_pos: int | Tensor = 0,
        *,
        positions: Tensor | None = None,
        return_aux_loss: bool = False,
        logits_to_keep: Tensor | None = None,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """tokens [B, T] int64 -> logits [B, T, vocab] (and the summed load-balancing loss of
        the MoE layers, a scalar, zero for a dense model, if `return_aux_loss`).
        `logits_to_keep` [B, T] bool: logits [N, vocab] at the N kept positions only, in
        row-major order (as transformers' boolean `logits_to_keep`): the vocabulary
        projection of the other positions, a fifth of a small model's compute at a large
        vocabulary, is never made.

        Token t sits at position `start_pos + t`, or at `positions[t]` when given (context
        parallelism passes the global positions of its sequence chunks; not with a cache).
        With `cache`, keys/values are written at those positions and attention also sees the
        cached positions before `start_pos`. `start_pos` may be a [B] tensor with a cache:
        row b continues its own cached prefix from `start_pos[b]` (positions past a row's
        last token are never attended to, so shorter rows need no mask, only padding)."""
        t = tokens.shape[1]
        per_row = isinstance(start_pos, Tensor)
        if per_row and (cache is None or start_pos.shape != tokens.shape[:1]):
            raise ValueError(
                f"per-row start positions need a KV cache and one start per row: got "
                f"start_pos of shape {tuple(start_pos.shape)} for {tokens.shape[0]} rows"
            )
        if positions is None and per_row:
            positions = start_pos[:, None] + torch.arange(t, device=tokens.device)
        elif positions is None:
            positions = torch.arange(start_pos, start_pos + t, device=tokens.device)
        elif cache is not None:
            raise ValueError("pass either a KV cache or explicit positions, not both")
        end = int(positions.max()) + 1 if per_row else start_pos + t
        if cache is not None and end > cache.max_len:
            raise ValueError(f"positions up to {end} do not fit a KV cache of {cache.max_len}")
        h = self.tok_embeddings(tokens)
        aux = h.new_zeros((), dtype=torch.float32)
        for i, layer in enumerate(self.layers):
            layer_cache = None if cache is None else (cache.keys[i], cache.values[i])
            h, layer_aux = layer(h, positions, layer_cache)
            if layer_aux is not None:
                aux = aux + layer_aux
        if logits_to_keep is not None:
            h = h[logits_to_keep.to(h.device)]
        h = self.norm(h)
        if self.config.tie_embeddings:
            logits = F.linear(h, self.tok_embeddings.weight)
        else:
            logits = self.output(h)
        return (logits, aux) if return_aux_loss else logits
