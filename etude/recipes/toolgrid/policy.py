"""The tiny policy: an `etude.models` transformer over ByteChat's byte vocabulary, restricted
to the bytes a trajectory may contain (printable ASCII, newline, end of message), and its
Muon optimizer with per-head groups for the attention projections."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from etude.models import KVCache, MoEConfig, MoETransformer
from etude.optim import Muon
from etude.rl.trajectory import ByteChat

NEG = -1e4  # finite, so that 0·log 0 terms in KL sums stay 0 rather than nan


def allowed_bytes() -> Tensor:
    """[256] bool: bytes the policy may emit."""
    ok = torch.zeros(256, dtype=torch.bool)
    ok[32:127] = True
    ok[ord("\n")] = True
    ok[ord(ByteChat.END)] = True
    return ok


class BytePolicy(nn.Module):
    """`MoETransformer` whose logits of disallowed bytes are pinned to a large negative value;
    same call signature (`tokens [B, T]`, `cache`, `start_pos`: an int or one per row [B],
    `logits_to_keep`) and `config`."""

    def __init__(self, config: MoEConfig):
        super().__init__()
        if config.vocab_size != 256:
            raise ValueError(f"a byte policy needs vocab_size 256, got {config.vocab_size}")
        self.model = MoETransformer(config)
        self.config = config
        self.register_buffer("bias", torch.where(allowed_bytes(), 0.0, NEG), persistent=False)

    def forward(
        self,
        tokens: Tensor,
        cache: KVCache | None = None,
        start_pos: int | Tensor = 0,
        *,
        logits_to_keep: Tensor | None = None,
    ) -> Tensor:
        logits = self.model(tokens, cache=cache, start_pos=start_pos, logits_to_keep=logits_to_keep)
        return logits + self.bias


def muon_optimizer(policy: BytePolicy, lr: float, weight_decay: float = 0.0) -> Muon:
    """Muon with per-head Newton–Schulz on attention projections, whole matrices for the FFN,
    AdamW for embeddings, norms and the output head; frozen parameters are left out."""
    heads, kv_heads = policy.config.n_heads, policy.config.n_kv_heads
    groups: dict[str, list] = {"q_o": [], "kv": [], "rest": []}
    for name, p in policy.named_parameters():
        if not p.requires_grad:  # frozen by `freeze_all_but_last_layers`
            continue
        if name.endswith(("wq.weight", "wo.weight")):
            groups["q_o"].append((name, p))
        elif name.endswith(("wk.weight", "wv.weight")):
            groups["kv"].append((name, p))
        else:
            groups["rest"].append((name, p))
    wo = [(n, p) for n, p in groups["q_o"] if n.endswith("wo.weight")]
    wq = [(n, p) for n, p in groups["q_o"] if n.endswith("wq.weight")]
    return Muon(
        [
            {"params": wq, "heads": heads, "head_dim": 0},
            {"params": wo, "heads": heads, "head_dim": 1},
            {"params": groups["kv"], "heads": kv_heads, "head_dim": 0},
            {"params": groups["rest"]},
        ],
        lr=lr,
        weight_decay=weight_decay,
        adjust_lr_fn="match_rms_adamw",
        ns_dtype=torch.float32,
    )


def freeze_all_but_last_layers(policy: nn.Module, train_layers: int) -> None:
    """Freeze every parameter except the last `train_layers` decoder layers and the final
    norm (0: train everything), so that an update's backward stops at the first trained
    layer: on a CPU most of a 30-layer model's update cost. The embeddings (and the output
    head tied to them) stay frozen. `policy`: a `BytePolicy` or an `MoETransformer`."""
    core = policy.model if isinstance(policy, BytePolicy) else policy
    n_layers = len(core.layers)
    if train_layers == 0:
        return
    if not 0 < train_layers <= n_layers:
        raise ValueError(f"[rl] train_layers is {train_layers}; the policy has {n_layers} layers")
    policy.requires_grad_(False)
    for layer in core.layers[n_layers - train_layers :]:
        layer.requires_grad_(True)
    core.norm.requires_grad_(True)
