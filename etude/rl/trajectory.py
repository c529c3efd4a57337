"""Trajectories (OpenAI Chat Completions messages) as one token sequence with, per token, the
index of the message it belongs to and whether the policy generated it.

A chat template renders messages to text; the span of message i is the text that rendering
`messages[:i + 1]` adds to rendering `messages[:i]`, and for an assistant message the
trainable part starts after the generation prompt (`<|im_start|>assistant\\n`). Tokens are
assigned to spans by their character offsets, so any tokenizer that reports offsets works:
Hugging Face fast tokenizers (`HFChat`) and the project's byte-level tokenizer
(`ByteChat`, for the tiny policy).

Templates that ignore `tool_calls` (SmolLM2's, for example) would drop the calls; `HFChat`
detects this once and renders calls into the content as `<tool_call>{json}</tool_call>`
(the Hermes convention), so a trajectory always reads the same as what the policy produced.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

import jinja2
import torch
from torch import Tensor

Message = dict[str, Any]


class TemplateError(ValueError):
    """A trajectory that does not fit a chat template, or a tokenizer without one."""


class ChatTokenizer(Protocol):
    """What tokenizing a trajectory needs from a tokenizer and its chat template."""

    def render(self, messages: list[Message], add_generation_prompt: bool = False) -> str: ...

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[int]]:
        """Token ids and, per token, the index of its first character in `text`."""
        ...

    def decode(self, ids: list[int]) -> str: ...


@dataclass
class TokenizedTrajectory:
    """One trajectory as tokens. All tensors are [T].

    `turn[i]` is the index of the message token i belongs to; `trainable[i]` is True for
    tokens the policy generated (assistant content and calls, and the end-of-turn token),
    False for context (system, user, tool outputs, role headers). `spans[m]` is message m's
    token range `(start, end)`, header included."""

    tokens: Tensor
    turn: Tensor
    trainable: Tensor
    spans: list[tuple[int, int]]

    def turn_mask(self, message_index: int) -> Tensor:
        """[T] bool: the trainable tokens of one message."""
        return self.trainable & (self.turn == message_index)


def render_tool_calls(message: Message) -> Message:
    """The message with its `tool_calls` written into the content as Hermes-style
    `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` lines."""
    calls = message.get("tool_calls") or []
    if not calls:
        return message
    lines = [message.get("content") or ""] if message.get("content") else []
    for call in calls:
        fn = call["function"]
        args = fn.get("arguments", "{}")
        try:
            parsed = json.loads(args) if isinstance(args, str) else args
        except json.JSONDecodeError:
            parsed = args  # a malformed call is kept verbatim: it is what the policy wrote
        lines.append(
            "<tool_call>" + json.dumps({"name": fn["name"], "arguments": parsed}) + "</tool_call>"
        )
    out = {k: v for k, v in message.items() if k != "tool_calls"}
    out["content"] = "\n".join(lines)
    return out


def validate_messages(messages: list[Message]) -> None:
    """Raise TemplateError naming the first message that is not a Chat Completions message."""
    if not messages:
        raise TemplateError("trajectory has no messages")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
            raise TemplateError(
                f"message {i} has no valid role (system/user/assistant/tool): {m!r}"
            )
        content = m.get("content")
        if content is not None and not isinstance(content, str):
            raise TemplateError(f"message {i}: content must be a string or null")
        for call in m.get("tool_calls") or []:
            if "function" not in call or "name" not in call["function"]:
                raise TemplateError(f"message {i}: tool call without function.name: {call!r}")


def tokenize(messages: list[Message], tok: ChatTokenizer) -> TokenizedTrajectory:
    """Render `messages` with `tok`'s chat template and label every token (see module doc).

    Raises TemplateError when the template does not render the trajectory as a sequence of
    extensions (each prefix's rendering a prefix of the next), which every
    append-only chat template satisfies."""
    validate_messages(messages)
    bounds = [0]  # character offset where each message starts, then the total length
    starts = []  # character offset where each assistant message's generated text starts
    previous = ""
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            prompt = tok.render(messages[:i], add_generation_prompt=True)
            if not prompt.startswith(previous):
                raise TemplateError(f"template re-renders earlier messages at message {i}")
            starts.append(len(prompt))
        else:
            starts.append(None)
        text = tok.render(messages[: i + 1])
        if not text.startswith(previous):
            raise TemplateError(
                f"message {i} ({m['role']}) changes how earlier messages render; "
                "the trajectory does not fit this chat template"
            )
        bounds.append(len(text))
        previous = text
    ids, offsets = tok.encode_with_offsets(previous)
    turn, trainable = [], []
    m = 0
    for off in offsets:
        while m + 1 < len(messages) and off >= bounds[m + 1]:
            m += 1
        turn.append(m)
        trainable.append(starts[m] is not None and off >= starts[m])
    spans = []
    for i in range(len(messages)):
        idx = [j for j, t in enumerate(turn) if t == i]
        spans.append((idx[0], idx[-1] + 1) if idx else (0, 0))
    return TokenizedTrajectory(
        tokens=torch.tensor(ids, dtype=torch.long),
        turn=torch.tensor(turn, dtype=torch.long),
        trainable=torch.tensor(trainable, dtype=torch.bool),
        spans=spans,
    )


class HFChat:
    """A Hugging Face (fast) tokenizer and its chat template as a `ChatTokenizer`."""

    def __init__(self, tokenizer: Any, tools: list[dict] | None = None):
        if not getattr(tokenizer, "chat_template", None):
            raise TemplateError(
                f"tokenizer {type(tokenizer).__name__} has no chat template; "
                "set tokenizer.chat_template or use a chat model's tokenizer"
            )
        if not getattr(tokenizer, "is_fast", False):
            raise TemplateError("a fast tokenizer (with offset mapping) is needed")
        self.tokenizer = tokenizer
        self.tools = tools
        probe = [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "probe_fn_q", "arguments": "{}"},
                    }
                ],
            },
        ]
        try:
            self.native_tool_calls = "probe_fn_q" in self._apply(probe, False)
        except Exception:  # templates that cannot render a call (content None) lack support
            self.native_tool_calls = False

    def _apply(self, messages: list[Message], add_generation_prompt: bool) -> str:
        try:
            return self.tokenizer.apply_chat_template(
                messages,
                tools=self.tools,
                tokenize=False,
                add_generation_prompt=add_generation_prompt,
            )
        except jinja2.TemplateError as err:  # the template's own raise_exception(...)
            raise TemplateError(f"the chat template refused the trajectory: {err}") from err

    def render(self, messages: list[Message], add_generation_prompt: bool = False) -> str:
        if not self.native_tool_calls:
            messages = [render_tool_calls(m) for m in messages]
        if not messages:
            return self._apply([], add_generation_prompt) if add_generation_prompt else ""
        return self._apply(messages, add_generation_prompt)

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[int]]:
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return list(enc["input_ids"]), [s for s, _ in enc["offset_mapping"]]

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids)


class ByteChat:
    """Byte-level tokenizer (vocabulary 256) with a ChatML-like template for tiny models:
    `\\x02role\\ncontent\\x03` per message, tool calls as `<call>name {json}` lines.
    Control bytes \\x02 / \\x03 start and end a message; text must be ASCII."""

    vocab_size = 256
    START, END = "\x02", "\x03"

    def render(self, messages: list[Message], add_generation_prompt: bool = False) -> str:
        out = []
        for m in messages:
            content = m.get("content") or ""
            for call in m.get("tool_calls") or []:
                fn = call["function"]
                content += ("\n" if content else "") + f"<call>{fn['name']} {fn['arguments']}"
            out.append(f"{self.START}{m['role']}\n{content}{self.END}")
        if add_generation_prompt:
            out.append(f"{self.START}assistant\n")
        return "".join(out)

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[int]]:
        try:
            data = text.encode("ascii")
        except UnicodeEncodeError as err:
            raise TemplateError(f"the byte tokenizer takes ascii text only: {err}") from err
        return list(data), list(range(len(data)))

    def encode(self, text: str) -> list[int]:
        return list(text.encode("ascii"))

    def decode(self, ids: list[int]) -> str:
        return bytes(ids).decode("ascii", errors="replace")

    def parse_assistant(self, text: str) -> Message:
        """Generated assistant text (up to the END byte) -> a Chat Completions message."""
        text = text.split(self.END)[0]
        calls, content = [], []
        for i, line in enumerate(text.split("\n")):
            if line.startswith("<call>"):
                name, _, args = line[len("<call>") :].partition(" ")
                fn = {"name": name, "arguments": args}
                calls.append({"id": f"call_{i}", "type": "function", "function": fn})
            elif line:
                content.append(line)
        msg: Message = {"role": "assistant", "content": "\n".join(content) or None}
        if calls:
            msg["tool_calls"] = calls
        return msg


@dataclass
class Trajectory:
    """One rollout: Chat Completions `messages`, the OpenAI tool specs the agent was offered
    (`tools`), and metadata (`task_id`, `reward`, anything else in `metadata`)."""

    messages: list[Message]
    tools: list[dict] | None = None
    task_id: str | None = None
    reward: float | None = None
    metadata: dict | None = None

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools or []]

    @classmethod
    def from_dict(cls, d: dict) -> Trajectory:
        """Read one JSONL record (`messages` required; `tools`, `task_id`, `reward` optional;
        other keys go to `metadata`)."""
        if "messages" not in d:
            raise TemplateError("trajectory record has no 'messages'")
        known = {"messages", "tools", "task_id", "reward"}
        extra = {k: v for k, v in d.items() if k not in known}
        return cls(d["messages"], d.get("tools"), d.get("task_id"), d.get("reward"), extra or None)

    def to_dict(self) -> dict:
        out: dict = {"messages": self.messages}
        for key in ("tools", "task_id", "reward"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out.update(self.metadata or {})
        return out
