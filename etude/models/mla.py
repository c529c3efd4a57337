"""Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2).

Queries: `wq` [H*(nope+rope), dim] directly, or through a rank-`q_lora_rank` bottleneck
(`wq_a`, RMSNorm `q_a_norm`, `wq_b`). Keys and values: `wkv_a` projects each token to a
compressed latent of `kv_lora_rank` (RMSNorm `kv_a_norm`) plus one RoPE key of
`qk_rope_head_dim` shared by all heads; `wkv_b` expands the latent into per-head no-RoPE
keys and values. Head h's key is [nope_h, rope], its query [nope_h, rope_h]; the softmax
scale is (nope+rope)^-1/2, times `rope.yarn_softmax_scale` with YaRN (DeepSeek-V3).

The KV cache and context parallelism hold the *compressed* pair (normed latent, RoPE key)
per position, [B, S, 1, kv_lora_rank] and [B, S, 1, qk_rope_head_dim]: `gather_kv`
all-gathers those, and the expansion runs after, on every key position.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from etude.models.attend import attend
from etude.models.config import MoEConfig
from etude.models.rope import rope, yarn_softmax_scale

# transformers builds both latent norms with its RMSNorm's default eps, not rms_norm_eps.
LATENT_NORM_EPS = 1e-6


class LatentAttention(nn.Module):
    """Causal MLA, masked by position like `moe.Attention` (cache or CP peers alike)."""

    def __init__(self, config: MoEConfig):
        super().__init__()
        h, d = config.n_heads, config.dim
        self.n_heads, self.config = h, config
        self.nope, self.rope_dim, self.v_dim = (
            config.qk_nope_head_dim,
            config.qk_rope_head_dim,
            config.v_head_dim,
        )
        self.rank = config.kv_lora_rank
        self.scale = config.qk_head_dim**-0.5 * yarn_softmax_scale(config.yarn)
        qk = config.qk_head_dim
        if config.q_lora_rank is None:
            self.wq = nn.Linear(d, h * qk, bias=False)
        else:
            self.wq_a = nn.Linear(d, config.q_lora_rank, bias=False)
            self.q_a_norm = nn.RMSNorm(config.q_lora_rank, eps=LATENT_NORM_EPS)
            self.wq_b = nn.Linear(config.q_lora_rank, h * qk, bias=False)
        self.wkv_a = nn.Linear(d, self.rank + self.rope_dim, bias=False)
        self.kv_a_norm = nn.RMSNorm(self.rank, eps=LATENT_NORM_EPS)
        self.wkv_b = nn.Linear(self.rank, h * (self.nope + self.v_dim), bias=False)
        self.wo = nn.Linear(h * self.v_dim, d, bias=False)
        self.gather_kv = None

    def _queries(self, x: Tensor) -> Tensor:
        if self.config.q_lora_rank is None:
            return self.wq(x)
        return self.wq_b(self.q_a_norm(self.wq_a(x)))

    def forward(
        self, x: Tensor, positions: Tensor, cache: tuple[Tensor, Tensor] | None = None
    ) -> Tensor:
        """x [B, T, dim], positions [T] or [B, T] (per row, only with a cache) -> [B, T, dim].
        `cache`: one layer's (latents [B, L, 1, rank], rope keys [B, L, 1, rope])."""
        b, t, _ = x.shape
        theta, inter, yarn = self.config.rope_theta, self.config.rope_interleave, self.config.yarn
        q = self._queries(x).view(b, t, self.n_heads, self.nope + self.rope_dim)
        q_nope, q_rot = q.split([self.nope, self.rope_dim], dim=-1)
        q = torch.cat([q_nope, rope(q_rot, positions, theta, inter, yarn)], dim=-1)
        latent, k_rot = self.wkv_a(x).split([self.rank, self.rope_dim], dim=-1)
        latent = self.kv_a_norm(latent)[:, :, None]  # [B, T, 1, rank]
        k_rot = rope(k_rot[:, :, None], positions, theta, inter, yarn)  # [B, T, 1, rope]
        key_positions = positions
        if cache is not None:
            end = int(positions.max()) + 1
            if positions.dim() == 1:
                cache[0][:, int(positions[0]) : end] = latent
                cache[1][:, int(positions[0]) : end] = k_rot
            else:
                rows = torch.arange(b, device=x.device)[:, None]
                cache[0][rows, positions] = latent
                cache[1][rows, positions] = k_rot
            latent, k_rot = cache[0][:, :end], cache[1][:, :end]
            key_positions = torch.arange(end, device=x.device)
        if self.gather_kv is not None:
            latent, k_rot, key_positions = self.gather_kv(latent, k_rot, key_positions)
        s = latent.shape[1]
        kv = self.wkv_b(latent[:, :, 0]).view(b, s, self.n_heads, self.nope + self.v_dim)
        k_nope, v = kv.split([self.nope, self.v_dim], dim=-1)
        k = torch.cat([k_nope, k_rot.expand(b, s, self.n_heads, self.rope_dim)], dim=-1)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))  # [B, H, T|S, dim]
        out = attend(q, k, v, positions, key_positions, self.scale)
        return self.wo(out.transpose(1, 2).reshape(b, t, self.n_heads * self.v_dim))
