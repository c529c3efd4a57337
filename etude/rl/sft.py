"""Supervised fine-tuning on trajectories: next-token cross-entropy on the policy's turns.

The targets are the trainer's token masks (`etude.rl.trajectory.tokenize`: the assistant
turns after their generation prompt; system, user and tool text and the template's headers
are context). A turn the environment rejected (its tool output starts with "Tool not
found" or "Invalid arguments": a demonstration's deliberate slip) stays context: the
demonstration teaches the recovery, not the slip.

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

REJECTED_PREFIXES = ("Tool not found", "Invalid arguments")
Logits = Callable[[Tensor], Tensor]  # tokens [B, T] -> logits [B, T, V]


def _ce_sum(policy: Logits, tokens: Tensor, mask: Tensor) -> tuple[Tensor, int]:
    """(sum of next-token cross-entropy over positions whose target is trainable, their
    number). tokens, mask [B, T]."""
    logits = policy(tokens[:, :-1])
    tokens, mask = tokens.to(logits.device), mask.to(logits.device)  # a policy on a GPU
    target_mask = mask[:, 1:].flatten()
    ce = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten(), reduction="none")
    return (ce * target_mask).sum(), int(target_mask.sum())


def sft_loss(policy: Logits, tokens: Tensor, mask: Tensor) -> Tensor:
    """Mean next-token cross-entropy over positions whose target is trainable. tokens, mask
    [B, T]."""
    total, n = _ce_sum(policy, tokens, mask)
    return total / max(n, 1)


def sft_example(traj: Trajectory, tok: ChatTokenizer) -> tuple[Tensor, Tensor]:
    """(tokens [T], trainable [T]) of one trajectory for supervised training (see module
    doc); raises TrajectoryFormatError for a turn of unknown origin."""
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
        rejected = after["role"] == "tool" and (after.get("content") or "").startswith(
            REJECTED_PREFIXES
        )
        if m["role"] == "assistant" and rejected:
            trainable &= tt.turn != i
    if not trainable.any():
        raise TrajectoryFormatError("the trajectory has no policy tokens to train on")
    return tt.tokens, trainable


def sft_step(
    policy: Logits,
    optimizer: torch.optim.Optimizer,
    batch: list[tuple[Tensor, Tensor]],
    micro_batch: int = 1,
    dp_rank: int = 0,
    dp_size: int = 1,
) -> dict:
    """One optimizer step on `batch` ((tokens [T_i], trainable [T_i]) pairs) in
    micro-batches of `micro_batch` sequences; returns {"loss": mean cross-entropy per
    target over the whole batch, "targets": their number, "tokens": tokens forwarded}
    (sums over ranks)."""
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
            policy(torch.zeros(1, 1, dtype=torch.long)).sum().mul(0.0).backward()
            continue
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
