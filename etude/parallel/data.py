"""The embedded corpus (the Python standard library's own sources, as bytes) and how a
global batch is split over data-parallel groups and context-parallel ranks.

Every machine with Python has the corpus, so a training run needs no download. Tokens are
bytes (vocabulary 256). Batches are drawn from a generator seeded by (seed, step), so any
rank, any layout and a resumed run all see the same global batch at the same step.
"""

from __future__ import annotations

import sysconfig
from functools import cache
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from etude.parallel.context import chunk_positions
from etude.parallel.layout import Layout


@cache
def stdlib_corpus(max_bytes: int = 8 << 20) -> Tensor:
    """Up to `max_bytes` of the standard library's .py files (sorted by path), as uint8."""
    root = Path(sysconfig.get_paths()["stdlib"])
    chunks, total = [], 0
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts or "test" in path.parts:
            continue
        data = path.read_bytes()
        chunks.append(data)
        total += len(data)
        if total >= max_bytes:
            break
    if not chunks:
        raise FileNotFoundError(f"no Python sources under {root} to train on")
    return torch.from_numpy(np.frombuffer(b"".join(chunks)[:max_bytes], dtype=np.uint8).copy())


def global_batch(corpus: Tensor, step: int, batch_size: int, seq_len: int, seed: int) -> Tensor:
    """[batch_size, seq_len + 1] int64 windows of `corpus` at offsets drawn from (seed, step)."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + step)
    starts = torch.randint(0, corpus.numel() - seq_len - 1, (batch_size,), generator=g)
    return torch.stack([corpus[s : s + seq_len + 1] for s in starts.tolist()]).long()


def local_batch(
    batch: Tensor, layout: Layout, data_rank: int, cp_rank: int
) -> tuple[Tensor, Tensor, Tensor]:
    """This rank's (inputs [b, T/CP], targets [b, T/CP], positions [T/CP]) of a global batch
    [B, T+1]: sequences of data-parallel group `data_rank`, the CP chunks of `cp_rank`."""
    rows = batch.shape[0] // layout.data_parallel
    mine = batch[data_rank * rows : (data_rank + 1) * rows]
    inputs, targets = mine[:, :-1], mine[:, 1:]
    positions = chunk_positions(inputs.shape[1], layout.cp, cp_rank)
    return inputs[:, positions], targets[:, positions], positions
