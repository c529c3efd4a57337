"""The embedded corpus (the Python standard library's own sources) and how a global batch
is split over data-parallel groups and context-parallel ranks.

Every machine with Python has the corpus, so a training run needs no download. etude's own
model reads bytes (vocabulary 256); a model loaded from an open checkpoint reads the
corpus, or the user's text / JSONL files, through its own tokenizer (`token_corpus`):
documents are packed into one token stream separated by the tokenizer's EOS token, and
training windows may span document boundaries (sequence packing). Batches are drawn from a
generator seeded by (seed, step), so any rank, any layout and a resumed run all see the
same global batch at the same step.
"""

from __future__ import annotations

import json
import sysconfig
from functools import cache
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from etude.parallel.context import chunk_positions
from etude.parallel.layout import Layout


def stdlib_files(max_bytes: int = 8 << 20) -> list[bytes]:
    """The standard library's .py files (sorted by path, tests left out), up to about
    `max_bytes` in all."""
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
    return chunks


@cache
def stdlib_corpus(max_bytes: int = 8 << 20) -> Tensor:
    """Up to `max_bytes` of the standard library's .py files (sorted by path), as uint8."""
    data = b"".join(stdlib_files(max_bytes))[:max_bytes]
    return torch.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def read_documents(paths: list[str | Path]) -> list[str]:
    """Documents of text files (one per file) and JSONL files (`.jsonl`: one per line, its
    "text" field); a clear error for a missing file or a JSONL line without "text"."""
    docs = []
    for name in paths:
        path = Path(name)
        if not path.is_file():
            raise FileNotFoundError(f"training data {path} does not exist")
        if path.suffix != ".jsonl":
            docs.append(path.read_text(errors="replace"))
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            record = json.loads(line)
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise ValueError(f"{path}:{i}: a JSONL record needs a string field 'text'")
            docs.append(record["text"])
    if not docs:
        raise ValueError(f"no documents in {', '.join(map(str, paths))}")
    return docs


def token_corpus(
    tokenizer, paths: list[str | Path] | None = None, max_bytes: int = 2 << 20
) -> Tensor:
    """One int64 token stream: the documents of `paths` (default: the stdlib corpus, about
    `max_bytes` of it) tokenized with `tokenizer`, each followed by its EOS token."""
    docs = (
        read_documents(paths)
        if paths
        else [b.decode("utf-8", errors="replace") for b in stdlib_files(max_bytes)]
    )
    eos = tokenizer.eos_token_id
    ids = tokenizer(docs, add_special_tokens=False)["input_ids"]
    stream = [t for doc in ids for t in ([*doc, eos] if eos is not None else doc)]
    return torch.tensor(stream, dtype=torch.int64)


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
