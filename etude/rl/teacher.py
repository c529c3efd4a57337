"""The teacher pass: the same model reading a hint, on the student's own turn.

For a hint before turn t, the teacher's context is the student's tokens up to turn t, the
hint rendered as a message by the chat template, then the tokens the student sampled from
turn t on. The prefix is identical to the student's, so its keys and values are taken from
the student's forward (detached: the teacher is a fixed target) and only hint + turn tokens
run. `full_teacher_logits` runs the whole teacher context and is the reference the cached
pass must equal.

`TeacherQuery` positions are token indices into the student's sequence. The returned logits
for a query are [L, V]: row j predicts continuation token j (the teacher's counterpart of the
student's logits at `insert_at - 1 + j`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from etude.rl.feedback.hints import Hint, hint_message
from etude.rl.trajectory import ChatTokenizer, Message, TokenizedTrajectory

# Where a hint goes and which turn its teacher pass covers (`build_query`).
SCOPES = ("turn", "next_turn", "trajectory")


@dataclass
class TeacherQuery:
    """One hint applied to one trajectory. `insert_at`: student token index where the hint
    message goes (the start of the hinted turn's span); `hint_tokens` [Lh]: the rendered hint
    message; `continuation` [L]: student tokens from `insert_at` to the end of the distilled
    range; `distill_mask` [L] bool: which continuation tokens the KL covers."""

    hint: Hint
    insert_at: int
    hint_tokens: Tensor
    continuation: Tensor
    distill_mask: Tensor


def build_query(
    messages: list[Message],
    tokenized: TokenizedTrajectory,
    tok: ChatTokenizer,
    hint: Hint,
    *,
    scope: str = "turn",
    hint_role: str = "user",
) -> TeacherQuery:
    """The teacher query for `hint`. scope "turn": the hint goes right before `hint.turn` and
    the KL covers that turn's trainable tokens; "next_turn": the hint goes right before the
    assistant turn after `hint.turn` (after the failed call's replies, where the student
    recovers or not) and covers that turn's tokens (ValueError if there is none);
    "trajectory": the hint goes before the first assistant turn and the KL covers every
    trainable token (the untargeted baseline)."""
    if scope == "turn":
        at_message, end = hint.turn, tokenized.spans[hint.turn][1]
    elif scope == "next_turn":
        later = [i for i, m in enumerate(messages) if i > hint.turn and m["role"] == "assistant"]
        if not later:
            raise ValueError(f"no assistant turn after the hinted turn {hint.turn}")
        at_message, end = later[0], tokenized.spans[later[0]][1]
    elif scope == "trajectory":
        at_message = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
        end = len(tokenized.tokens)
    else:
        raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
    before = tok.render(messages[:at_message])
    with_hint = tok.render([*messages[:at_message], hint_message(hint, hint_role)])
    if not with_hint.startswith(before):
        raise ValueError("the chat template re-renders earlier messages when a hint is added")
    hint_ids, _ = tok.encode_with_offsets(with_hint[len(before) :])
    start = tokenized.spans[at_message][0]
    mask = tokenized.trainable[start:end].clone()
    if scope != "trajectory":
        mask &= tokenized.turn[start:end] == at_message
    return TeacherQuery(
        hint=hint,
        insert_at=start,
        hint_tokens=torch.tensor(hint_ids, dtype=torch.long),
        continuation=tokenized.tokens[start:end],
        distill_mask=mask,
    )


def _continuation_logits(logits: Tensor, q: TeacherQuery) -> Tensor:
    """logits [Lh + L, V] over hint + continuation -> [L, V] predicting the continuation."""
    lh = len(q.hint_tokens)
    return logits[lh - 1 : lh - 1 + len(q.continuation)]


def full_teacher_logits(model, student_tokens: Tensor, q: TeacherQuery) -> Tensor:
    """Reference: one forward over prefix + hint + continuation. `model(tokens [1, T])` must
    return logits [1, T, V] (wrap HF models with `hf_logits`). -> [L, V]"""
    seq = torch.cat([student_tokens[: q.insert_at], q.hint_tokens, q.continuation])
    logits = model(seq[None])[0]
    return _continuation_logits(logits[q.insert_at :], q)


def cached_teacher_logits_moe(
    model, cache, row: int | list[int], queries: list[TeacherQuery]
) -> list[Tensor]:
    """Teacher logits for every query with an `etude.models` transformer, all queries in one
    batch.

    `cache` is the KVCache the student's forward filled; `row` is the cache row of every
    query's trajectory (one int), or of each query (a list). Each
    query becomes a batch row of a private cache holding the student's detached prefix; the
    row runs its hint + continuation from its own `insert_at` (per-row start positions, or
    one start when all rows share it), overwriting the prefix past that point, so it attends
    to exactly the prefix up to its insertion point and its own tokens. Shorter rows are
    padded at the end, where no real token attends. -> list of [L_q, V] in the order of
    `queries`."""
    from etude.models import KVCache

    if not queries:
        return []
    device, dtype = cache.keys[0].device, cache.keys[0].dtype
    news = [torch.cat([q.hint_tokens, q.continuation]) for q in queries]
    length = max(len(n) for n in news)
    inserts = [q.insert_at for q in queries]
    prefix = max(inserts)
    own = KVCache.empty(model.config, len(queries), prefix + length, dtype, device)
    rows = [row] * len(queries) if isinstance(row, int) else row
    for mine, theirs in zip(own.keys + own.values, cache.keys + cache.values):
        mine[:, :prefix] = theirs[rows, :prefix].detach()
    ids = torch.zeros(len(queries), length, dtype=torch.long, device=device)
    for i, new in enumerate(news):
        ids[i, : len(new)] = new
    # one shared insertion point (a single hint, or scope "trajectory") takes the model's
    # single-start path, measurably cheaper than per-row positions (benchmarks/teacher_cache.py)
    starts = prefix if len(set(inserts)) == 1 else torch.tensor(inserts, device=device)
    logits = model(ids, cache=own, start_pos=starts)
    return [_continuation_logits(logits[i], q) for i, q in enumerate(queries)]


def cached_teacher_logits_hf(
    model, past, row: int | list[int], queries: list[TeacherQuery]
) -> list[Tensor]:
    """Teacher logits for every query with a Hugging Face causal LM, all queries in one
    batch.

    `past` is the student forward's cache (`DynamicCache`, keys [B, kv_heads, T, d]); `row`
    is the cache row of every query's trajectory (one int), or of each query (a list).
    Each query becomes a batch row whose cache holds the student's
    detached prefix keys up to the largest insertion point; a 4-D mask hides, per row, the
    prefix past its own `insert_at` and the padding of shorter rows, and RoPE positions are
    given explicitly. -> list of [L_q, V] in the order of `queries`."""
    from transformers import DynamicCache

    if not queries:
        return []
    h = len(queries)
    prefix = max(q.insert_at for q in queries)
    news = [torch.cat([q.hint_tokens, q.continuation]) for q in queries]
    length = max(len(n) for n in news)
    rows = [row] * h if isinstance(row, int) else row
    layers = []
    for layer in past.layers:
        k = layer.keys[rows, :, :prefix].detach()
        v = layer.values[rows, :, :prefix].detach()
        layers.append((k.contiguous(), v.contiguous()))
    cache = DynamicCache(layers)
    device = layers[0][0].device
    ids = torch.zeros(h, length, dtype=torch.long, device=device)
    positions = torch.zeros(h, length, dtype=torch.long, device=device)
    allowed = torch.zeros(h, length, prefix + length, dtype=torch.bool, device=device)
    causal = torch.ones(length, length, dtype=torch.bool, device=device).tril()
    for i, (q, new) in enumerate(zip(queries, news)):
        ids[i, : len(new)] = new
        positions[i] = q.insert_at + torch.arange(length, device=device)
        allowed[i, :, : q.insert_at] = True
        allowed[i, :, prefix:] = causal
    dtype = next(model.parameters()).dtype
    mask = torch.zeros(h, 1, length, prefix + length, dtype=dtype, device=device)
    mask.masked_fill_(~allowed[:, None], torch.finfo(dtype).min)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache).logits
    return [_continuation_logits(logits[i], q) for i, q in enumerate(queries)]


def hf_logits(model):
    """`tokens [B, T] -> logits [B, T, V]` for a Hugging Face causal LM."""
    return lambda tokens: model(input_ids=tokens).logits
