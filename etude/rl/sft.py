"""Supervised fine-tuning on trajectories: next-token cross-entropy on the policy's turns.

The targets are the trainer's token masks (`etude.rl.trajectory.tokenize`: the assistant
turns after their generation prompt; system, user and tool text and the template's headers
are context). A turn the environment rejected (its tool reply starts with one of the
environment's rejection prefixes, e.g. `etude.envs.coding.REJECTED_PREFIXES`: a
demonstration's deliberate slip) stays context: the demonstration teaches the recovery,
not the slip.

Which trajectories may train: demonstrations (`source = "demonstration"`, re-tokenized
from their text) and sampled rollouts (every assistant turn with its sampled ids, used
verbatim). An assistant turn with neither is refused: nothing says where its text came
from.

Data parallel as in `etude.rl.update`: every rank passes the whole batch, rank r trains on
every `dp_size`-th sequence, each loss is divided by the batch's global number of targets
and scaled by `dp_size` (FSDP2 averages gradients over ranks), and a rank with no sequence
left still runs the forward and backward so that FSDP2's collectives match.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor

from etude.rl.batch import pad_batch
from etude.rl.trajectory import (
    DEMONSTRATION,
    ChatTokenizer,
    Trajectory,
    TrajectoryFormatError,
    tokenize,
)

Logits = Callable[[Tensor], Tensor]  # tokens [B, T] -> logits [B, T, V]
TargetLogits = Callable[[Tensor, Tensor], Tensor]
"""(tokens [B, T], keep [B, T] bool) -> logits [N, V] at the N positions where `keep` is
true, in row-major order."""


def target_logits(model) -> TargetLogits:
    """The vocabulary projection at the kept positions only, for a transformers causal LM:
    its `logits_to_keep` takes a boolean [B, T] mask and applies `lm_head` to those hidden
    states alone (a first turn trains ~50 of ~700 positions: the [T, V] logits of the others,
    V = 49152 for SmolLM2, are never made). Through the model's own forward, so FSDP2's hooks
    run as usual. Inputs move to the model's device."""

    def logits(tokens: Tensor, keep: Tensor) -> Tensor:
        device = model.get_input_embeddings().weight.device
        return model(input_ids=tokens.to(device), logits_to_keep=keep.to(device)).logits

    return logits


def all_logits(logits: Logits) -> TargetLogits:
    """The reference: every position's logits (`logits`: tokens [B, T] -> [B, T, V]), then
    the kept ones selected. Same loss and gradients as `target_logits`, more compute."""

    def kept(tokens: Tensor, keep: Tensor) -> Tensor:
        out = logits(tokens)
        return out[keep.to(out.device)]

    return kept


class FrozenLayersCache:
    """`target_logits` for a model whose first `num_hidden_layers - train_layers` decoder
    layers and embeddings are frozen: their output on a sequence never changes during
    training, so it is computed once per distinct sequence (no grad) and kept; each later
    step runs only the trained layers, the final norm and the kept positions' projection
    (the model's own forward, its `layers` swapped for the trained ones while it runs).
    Same loss and gradients as `target_logits`; checked on a probe sequence when made,
    since an architecture that rescales `inputs_embeds` would break the shortcut. One
    process: under FSDP2 use `target_logits`. Memory: [T, hidden] floats per sequence."""

    def __init__(self, model, train_layers: int) -> None:
        n = model.config.num_hidden_layers
        if not 0 < train_layers < n:
            raise ValueError(f"train_layers must be in 1..{n - 1} to cache frozen layers")
        self.model, self.split = model, n - train_layers
        frozen = {id(p) for p in model.get_input_embeddings().parameters()}
        frozen |= {id(p) for layer in model.model.layers[: self.split] for p in layer.parameters()}
        trained = [n for n, p in model.named_parameters() if id(p) in frozen and p.requires_grad]
        if trained:
            raise ValueError(f"the layers to cache are not frozen: {trained[0]} trains")
        self._hidden: dict[bytes, Tensor] = {}
        probe = torch.arange(1, 9)[None] % model.config.vocab_size
        keep = torch.ones_like(probe, dtype=torch.bool)
        with torch.no_grad():
            want, got = target_logits(model)(probe, keep), self(probe, keep)
        self._hidden.clear()
        if not torch.allclose(want, got, rtol=1e-4, atol=1e-4):
            raise ValueError(f"{type(model).__name__}: the frozen-layer shortcut is not exact")

    def _boundary(self, row: Tensor) -> Tensor:
        """The input of the first trained layer for one sequence, row [T] -> [T, hidden]."""
        key = row.cpu().numpy().tobytes()
        if key not in self._hidden:
            device = self.model.get_input_embeddings().weight.device
            with torch.no_grad():
                out = self.model(
                    input_ids=row[None].to(device), output_hidden_states=True, logits_to_keep=1
                )
            self._hidden[key] = out.hidden_states[self.split][0]
        return self._hidden[key]

    def __call__(self, tokens: Tensor, keep: Tensor) -> Tensor:
        hidden = torch.stack([self._boundary(row) for row in tokens])
        inner = self.model.model
        layers = inner.layers
        inner.layers = layers[self.split :]
        try:
            return self.model(inputs_embeds=hidden, logits_to_keep=keep.to(hidden.device)).logits
        finally:
            inner.layers = layers


def _ce_sum(policy: TargetLogits, tokens: Tensor, mask: Tensor) -> tuple[Tensor, int]:
    """(sum of next-token cross-entropy over positions whose target is trainable, their
    number). tokens, mask [B, T]."""
    keep = mask[:, 1:].bool()  # position t predicts token t + 1
    logits = policy(tokens[:, :-1], keep)
    targets = tokens[:, 1:][keep].to(logits.device)
    ce = F.cross_entropy(logits.float(), targets, reduction="sum")
    return ce, int(keep.sum())


def sft_loss(policy: Logits, tokens: Tensor, mask: Tensor) -> Tensor:
    """Mean next-token cross-entropy over positions whose target is trainable, for a policy
    that returns every position's logits (the ToolGrid byte model). tokens, mask [B, T]."""
    total, n = _ce_sum(all_logits(policy), tokens, mask)
    return total / max(n, 1)


def sft_example(
    traj: Trajectory, tok: ChatTokenizer, rejected: tuple[str, ...]
) -> tuple[Tensor, Tensor]:
    """(tokens [T], trainable [T]) of one trajectory for supervised training (see module
    doc); an assistant turn whose tool reply starts with one of `rejected` (the
    environment's prefixes for a call it refused) is context. Raises
    TrajectoryFormatError for a turn of unknown origin."""
    unsampled = traj.unsampled_turns()
    if unsampled and traj.source != DEMONSTRATION:
        raise TrajectoryFormatError(
            f"assistant message {unsampled[0]} has no sampled token ids and the trajectory "
            f'is not marked as a demonstration ("source": "{DEMONSTRATION}"): its tokens '
            "are neither the sampler's nor a demonstrator's"
        )
    tt = tokenize(traj.messages, tok)
    trainable = tt.trainable.clone()
    for i, (m, after) in enumerate(zip(traj.messages, traj.messages[1:])):
        refused = after["role"] == "tool" and (after.get("content") or "").startswith(rejected)
        if m["role"] == "assistant" and refused:
            trainable &= tt.turn != i
    if not trainable.any():
        raise TrajectoryFormatError("the trajectory has no policy tokens to train on")
    return tt.tokens, trainable


def _through_last_target(tokens: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """The sequence cut after its last trainable token: a causal model's logits at the
    earlier positions do not depend on what follows, so the loss is the same."""
    last = int(mask.nonzero().max()) if mask.any() else 0
    return tokens[: last + 1], mask[: last + 1]


def sft_step(
    policy: TargetLogits,
    optimizer: torch.optim.Optimizer,
    batch: list[tuple[Tensor, Tensor]],
    micro_batch: int = 1,
    dp_rank: int = 0,
    dp_size: int = 1,
) -> dict:
    """One optimizer step on `batch` ((tokens [T_i], trainable [T_i]) pairs) in
    micro-batches of `micro_batch` sequences, each cut after its last trainable token;
    `policy` as `target_logits(model)` (or `FrozenLayersCache`, or the reference
    `all_logits`). Returns {"loss": mean cross-entropy per target over the whole batch,
    "targets": their number, "tokens": tokens forwarded} (sums over ranks)."""
    n_targets = sum(int(mask[1:].sum()) for _, mask in batch)
    if n_targets == 0:
        raise ValueError("the batch has no trainable target token")
    mine = batch[dp_rank::dp_size]
    per_rank = -(-len(batch) // dp_size)
    optimizer.zero_grad(set_to_none=True)
    total, tokens = torch.zeros(()), torch.zeros(())
    for start in range(0, per_rank, micro_batch):
        chunk = mine[start : start + micro_batch]
        if not chunk:  # nothing left on this rank: FSDP2 still needs the forward/backward
            one = torch.ones(1, 1, dtype=torch.bool)
            policy(torch.zeros(1, 1, dtype=torch.long), one).sum().mul(0.0).backward()
            continue
        chunk = [_through_last_target(t, m) for t, m in chunk]
        padded, mask = pad_batch([t for t, _ in chunk], [m for _, m in chunk])
        ce, _ = _ce_sum(policy, padded, mask)
        (ce * dp_size / n_targets).backward()
        total += ce.detach().cpu()
        tokens += sum(len(t) for t, _ in chunk)
    optimizer.step()
    if dp_size > 1:
        both = torch.stack([total, tokens])
        dist.all_reduce(both)
        total, tokens = both[0], both[1]
    return {"loss": float(total) / n_targets, "targets": n_targets, "tokens": int(tokens)}
