"""Multi-turn sampling from an `etude.models` policy with a KV cache: the policy writes
assistant turns, the environment answers, and only the new tokens of each turn run through
the model. `rollouts` plays many episodes at once in one cache, each row at its own length
(`start_pos` per row); `rollout` is the one-episode case.

Token in, token out: every prompt is `tokenize(messages, add_generation_prompt=True)`, the
same sequence the trainer builds, so earlier turns are fed as the ids that were sampled; each
turn is recorded as a `Sample` (ids, log-probs at temperature 1, finish reason).

Batched equals one at a time: every episode draws from its own generator, so its tokens do
not depend on which other episodes share the batch (up to the last bits of the logits, which
a different batch shape may change; `tests/test_toolgrid.py` checks the tokens are the
same)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

from etude.models import KVCache
from etude.rl.trajectory import (
    ByteChat,
    ChatTokenizer,
    HFChat,
    Message,
    Sample,
    TemplateError,
    tokenize,
    with_sample,
)
from etude.serving.backends import parse_assistant


class Environment(Protocol):
    messages: list[Message]
    done: bool

    def step(self, message: Message) -> None: ...


@dataclass(frozen=True)
class TurnFormat:
    """How a sampled assistant turn ends and reads as a message: sampling `stop_id` ends it
    (the id stays in the turn's `Sample`), and `parse` turns the turn's text without the stop
    token into a Chat Completions message."""

    stop_id: int
    parse: Callable[[str], Message]


def turn_format(tok: ChatTokenizer) -> TurnFormat:
    """How turns in `tok`'s template end and read: ByteChat's end the END byte and write
    calls as `<call>` lines; a Hugging Face chat template's (`HFChat`) end on the tokenizer's
    end-of-sequence token (SmolLM2's `<|im_end|>`) and write calls as Hermes `<tool_call>`
    blocks (`etude.serving.backends.parse_assistant`)."""
    if isinstance(tok, ByteChat):
        return TurnFormat(ord(tok.END), tok.parse_assistant)
    if isinstance(tok, HFChat):
        if tok.tokenizer.eos_token_id is None:
            raise TemplateError("the tokenizer has no end-of-sequence token to end a turn on")
        return TurnFormat(tok.tokenizer.eos_token_id, parse_assistant)
    raise TypeError(f"no turn format known for {type(tok).__name__}; pass `turns`")


def _keep_rows(cache: KVCache, rows: list[int]) -> KVCache:
    index = torch.tensor(rows, device=cache.keys[0].device)
    return KVCache(
        keys=[k.index_select(0, index) for k in cache.keys],
        values=[v.index_select(0, index) for v in cache.values],
    )


def _grown(cache: KVCache, length: int) -> KVCache:
    """`cache` with room for `length` positions (padding may reach past the episodes'
    limit; those positions are never attended to)."""
    if length <= cache.max_len:
        return cache

    def grow(t: Tensor) -> Tensor:
        return torch.cat([t, t.new_zeros(t.shape[0], length - t.shape[1], *t.shape[2:])], 1)

    return KVCache(keys=[grow(k) for k in cache.keys], values=[grow(v) for v in cache.values])


def _feed(policy, cache: KVCache, rows: list[list[int]], starts: list[int], pad: int):
    """Feed row b's tokens `rows[b]` at positions from `starts[b]` (right-padded with `pad`
    to the longest); returns (the logits [B, V] after each row's last token, the cache)."""
    width = max(map(len, rows))
    cache = _grown(cache, max(starts) + width)
    device = cache.keys[0].device
    tokens = torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=device)
    start_pos = torch.tensor(starts, device=device)
    # only each row's last position needs logits: at SmolLM2's vocabulary the projection of
    # a whole prompt is a fifth of its forward, and [B, T, V] floats
    last = torch.zeros(tokens.shape, dtype=torch.bool, device=device)
    last[torch.arange(len(rows), device=device), [len(r) - 1 for r in rows]] = True
    logits = policy(tokens, cache=cache, start_pos=start_pos, logits_to_keep=last)
    return logits.float(), cache


def _draw(logits: Tensor, temperature: float, generator: torch.Generator) -> int:
    """One id from logits [V]: the arg-max at temperature 0, else a sample at `temperature`
    from `generator`."""
    if temperature == 0:
        return int(logits.argmax())
    probs = torch.softmax(logits / temperature, dim=-1).to(generator.device)
    return int(torch.multinomial(probs, 1, generator=generator))


@torch.inference_mode()
def rollouts(
    policy,
    tok: ChatTokenizer,
    envs: list[Environment],
    generators: list[torch.Generator],
    *,
    temperature: float = 1.0,
    max_turn_tokens: int = 40,
    max_len: int = 512,
    turns: TurnFormat | None = None,
) -> None:
    """Play every env of `envs` to the end with `policy` (an `etude.models`-style model:
    `policy(tokens [B, T], cache=, start_pos=[B], logits_to_keep=[B, T] bool) -> logits
    [N, V]` at the kept positions, with a `config`),
    episode i drawing from `generators[i]`; temperature 0 is greedy.

    Turn by turn, all unfinished episodes at once: each feeds the prompt tokens not yet in
    its cache row, then every row samples until `turns.stop_id` (kept: finish "stop") or
    `max_turn_tokens` (finish "length"); a row whose turn ended rides along until the
    longest turn of the batch ends, its output unused. An episode also ends when its next
    turn could overflow `max_len` positions. `turns` defaults to `turn_format(tok)`."""
    if len(generators) != len(envs):
        raise ValueError(f"one generator per episode: {len(envs)} episodes, {len(generators)}")
    turns = turns or turn_format(tok)
    param = next(policy.parameters())
    cache = KVCache.empty(policy.config, len(envs), max_len, param.dtype, param.device)
    playing = list(range(len(envs)))  # cache row r holds episode playing[r]
    cached: list[list[int]] = [[] for _ in envs]  # ids whose keys and values are cached
    while True:
        prompts: dict[int, list[int]] = {}
        for i in playing:
            if envs[i].done:
                continue
            prompt = tokenize(envs[i].messages, tok, add_generation_prompt=True).tokens.tolist()
            if len(prompt) <= len(cached[i]) or prompt[: len(cached[i])] != cached[i]:
                raise TemplateError("the prompt does not extend the tokens already sampled")
            if len(prompt) + max_turn_tokens + 1 <= max_len:
                prompts[i] = prompt
        if not prompts:
            return
        if len(prompts) < len(playing):
            cache = _keep_rows(cache, [r for r, i in enumerate(playing) if i in prompts])
            playing = [i for i in playing if i in prompts]
        logits, cache = _feed(
            policy,
            cache,
            [prompts[i][len(cached[i]) :] for i in playing],
            [len(cached[i]) for i in playing],
            turns.stop_id,
        )
        ids: list[list[int]] = [[] for _ in playing]
        logprobs: list[list[float]] = [[] for _ in playing]
        finish = ["length"] * len(playing)
        sampling = [True] * len(playing)
        while True:
            logp = torch.log_softmax(logits, dim=-1)
            for r, i in enumerate(playing):
                if not sampling[r]:
                    continue
                nxt = _draw(logits[r], temperature, generators[i])
                ids[r].append(nxt)
                logprobs[r].append(float(logp[r, nxt]))
                if nxt == turns.stop_id:
                    finish[r], sampling[r] = "stop", False
                elif len(ids[r]) == max_turn_tokens:
                    sampling[r] = False
            if not any(sampling):
                break
            # every row feeds its last id at its next position; a finished row's is
            # overwritten by its next prompt (the last sampled id is fed with it)
            logits, cache = _feed(
                policy,
                cache,
                [[row[-1]] for row in ids],
                [len(prompts[i]) + len(ids[r]) - 1 for r, i in enumerate(playing)],
                turns.stop_id,
            )
        for r, i in enumerate(playing):
            cached[i] = prompts[i] + ids[r][:-1]
            text = tok.decode(ids[r][:-1] if finish[r] == "stop" else ids[r])
            sample = Sample(tuple(ids[r]), tuple(logprobs[r]), finish[r])
            envs[i].step(with_sample(turns.parse(text), sample))


def rollout(
    policy,
    tok: ChatTokenizer,
    env: Environment,
    generator: torch.Generator,
    *,
    temperature: float = 1.0,
    max_turn_tokens: int = 40,
    max_len: int = 512,
    turns: TurnFormat | None = None,
) -> None:
    """Play one `env` to the end: `rollouts` of a single episode."""
    rollouts(
        policy,
        tok,
        [env],
        [generator],
        temperature=temperature,
        max_turn_tokens=max_turn_tokens,
        max_len=max_len,
        turns=turns,
    )
