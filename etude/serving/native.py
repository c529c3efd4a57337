"""Multi-turn sampling with a KV cache: the policy writes assistant turns, the environment
answers, and only the new tokens of each turn run through the model."""

from __future__ import annotations

from typing import Protocol

import torch

from etude.models import KVCache
from etude.rl.trajectory import ByteChat, Message


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

    Each turn feeds the tokens the template adds since the last turn, then samples until the
    end-of-message byte (or `max_turn_tokens`). A turn whose text does not read back into the
    same message (parse, then render) is kept verbatim as content, so the trajectory's tokens
    are exactly the sampled ones. The episode also ends when the cache would overflow."""
    cache = KVCache.empty(policy.config, 1, max_len)
    fed = ""  # text whose tokens are in the cache
    end = ord(tok.END)
    while not env.done:
        prompt = tok.render(env.messages, add_generation_prompt=True)
        new = tok.encode(prompt[len(fed) :])
        if len(prompt) + max_turn_tokens + 1 > max_len:
            break
        logits = policy(torch.tensor([new]), cache=cache, start_pos=len(fed))[0, -1]
        pos, out = len(prompt), []
        for _ in range(max_turn_tokens):
            probs = torch.softmax(logits.float() / temperature, dim=-1)
            nxt = int(torch.multinomial(probs, 1, generator=generator))
            if nxt == end:
                break
            out.append(nxt)
            logits = policy(torch.tensor([[nxt]]), cache=cache, start_pos=pos)[0, -1]
            pos += 1
        text = tok.decode(out)
        message = tok.parse_assistant(text)
        if tok.render([message]) != tok.render([{"role": "assistant", "content": text}]):
            message = {"role": "assistant", "content": text}
        # the END byte is not in the cache; it and the next prompt are fed next turn
        fed = prompt + text
        env.step(message)
