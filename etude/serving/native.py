"""Multi-turn sampling from an `etude.models` policy with a KV cache: the policy writes
assistant turns, the environment answers, and only the new tokens of each turn run through
the model.

Token in, token out: every prompt is `tokenize(messages, add_generation_prompt=True)`, the
same sequence the trainer builds, so earlier turns are fed as the ids that were sampled; each
turn is recorded as a `Sample` (ids, log-probs at temperature 1, finish reason)."""

from __future__ import annotations

from typing import Protocol

import torch

from etude.models import KVCache
from etude.rl.trajectory import ByteChat, Message, Sample, TemplateError, tokenize, with_sample


class Environment(Protocol):
    messages: list[Message]
    done: bool

    def step(self, message: Message) -> None: ...


@torch.inference_mode()
def rollout(
    policy,
    tok: ByteChat,
    env: Environment,
    generator: torch.Generator,
    *,
    temperature: float = 1.0,
    max_turn_tokens: int = 40,
    max_len: int = 512,
) -> None:
    """Play `env` to the end with `policy` (an `etude.models`-style model over `tok`'s bytes).

    Each turn feeds the prompt tokens not yet in the cache, then samples until the
    end-of-message byte (kept: finish "stop") or `max_turn_tokens` (finish "length"). The
    assistant message is the parsed text with its `Sample`. The episode also ends when the
    cache would overflow."""
    cache = KVCache.empty(policy.config, 1, max_len)
    cached: list[int] = []  # token ids whose keys and values are in the cache
    end = ord(tok.END)
    while not env.done:
        prompt = tokenize(env.messages, tok, add_generation_prompt=True).tokens.tolist()
        if prompt[: len(cached)] != cached:
            raise TemplateError("the prompt does not extend the tokens already sampled")
        if len(prompt) + max_turn_tokens + 1 > max_len:
            break
        new = prompt[len(cached) :]
        logits = policy(torch.tensor([new]), cache=cache, start_pos=len(cached))[0, -1]
        pos, ids, logprobs, finish = len(prompt), [], [], "length"
        while True:
            logits = logits.float()
            probs = torch.softmax(logits / temperature, dim=-1)
            nxt = int(torch.multinomial(probs, 1, generator=generator))
            ids.append(nxt)
            logprobs.append(float(torch.log_softmax(logits, dim=-1)[nxt]))
            if nxt == end:
                finish = "stop"
                break
            if len(ids) == max_turn_tokens:
                break
            logits = policy(torch.tensor([[nxt]]), cache=cache, start_pos=pos)[0, -1]
            pos += 1
        cached = prompt + ids[:-1]  # the last sampled id is fed with the next prompt
        text = tok.decode(ids[:-1] if finish == "stop" else ids)
        sample = Sample(tuple(ids), tuple(logprobs), finish)
        env.step(with_sample(tok.parse_assistant(text), sample))
