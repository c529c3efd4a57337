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

Token in, token out: an assistant message a sampler produced carries its token view under
the key `"sample"` (`Sample`: the exact ids, their sampler log-probs, and why the turn
ended). `tokenize` takes those ids verbatim for policy turns and the chat template for
everything else: the template's header before a turn and its end-of-turn text after it are
context, never trainable; a turn that ended on its stop token keeps that token (the sampler
produced it) and only the template text after it is added; a turn cut by the token budget
gets no stop token. Samplers build their prompts with the same function
(`add_generation_prompt=True`), so the context a turn was sampled from is exactly the
context it trains in. The JSONL record (`Trajectory.to_dict`, `write_jsonl`, `read_jsonl`)
is the OpenAI Chat Completions view plus these `"sample"` keys.

A trajectory whose assistant turns no sampler produced (a scripted solver's, for the
supervised warm start) says so with `"source": "demonstration"` (`DEMONSTRATION`): its
assistant turns carry no `"sample"` and are re-tokenized from their text. Supervised
training takes them; the RL update refuses them.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import jinja2

if TYPE_CHECKING:
    from torch import Tensor

Message = dict[str, Any]


class TemplateError(ValueError):
    """A trajectory that does not fit a chat template, or a tokenizer without one."""


class TrajectoryFormatError(TemplateError):
    """A trajectory record that is not in etude's format (for example, no token ids)."""


class ChatTokenizer(Protocol):
    """What tokenizing a trajectory needs from a tokenizer and its chat template."""

    def render(self, messages: list[Message], add_generation_prompt: bool = False) -> str: ...

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[int]]:
        """Token ids and, per token, the index of its first character in `text`."""
        ...

    def decode(self, ids: list[int]) -> str: ...


FINISH_REASONS = ("stop", "length")
DEMONSTRATION = "demonstration"  # `Trajectory.source` of turns written by a scripted solver


@dataclass(frozen=True)
class Sample:
    """The token view of one sampled assistant turn. `ids`: the tokens the sampler produced,
    in order; `logprobs`: log π_sampler(id | context) of each, from the sampling model's
    logits at temperature 1 (the policy's own probability, before temperature or top-p);
    `finish`: "stop" (the last id is the stop token the sampler emitted) or "length" (cut
    by the token budget: no stop token). A log-prob is None where the sampler reported none
    (a server that does not return the stop token's); such tokens train with ratio 1."""

    ids: tuple[int, ...]
    logprobs: tuple[float | None, ...]
    finish: str

    def __post_init__(self):
        if self.finish not in FINISH_REASONS:
            raise TrajectoryFormatError(
                f"sample finish must be one of {FINISH_REASONS}, got {self.finish!r}"
            )
        if len(self.ids) != len(self.logprobs):
            raise TrajectoryFormatError(
                f"sample has {len(self.ids)} ids but {len(self.logprobs)} log-probs"
            )
        if not self.ids:
            raise TrajectoryFormatError("sample has no token ids")

    def to_dict(self) -> dict:
        return {"ids": list(self.ids), "logprobs": list(self.logprobs), "finish": self.finish}

    @classmethod
    def from_dict(cls, d: Any) -> Sample:
        if not isinstance(d, dict) or not {"ids", "logprobs", "finish"} <= d.keys():
            raise TrajectoryFormatError(
                f"a sample needs 'ids', 'logprobs' and 'finish', got {str(d)[:120]}"
            )
        ids, lps = d["ids"], d["logprobs"]
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise TrajectoryFormatError("sample ids must be integers")
        if not all(
            x is None or (isinstance(x, int | float) and not isinstance(x, bool)) for x in lps
        ):
            raise TrajectoryFormatError("sample log-probs must be numbers or null")
        return cls(tuple(ids), tuple(None if x is None else float(x) for x in lps), d["finish"])


def with_sample(message: Message, sample: Sample) -> Message:
    """`message` carrying the token view of the turn that produced it."""
    return {**message, "sample": sample.to_dict()}


def sample_of(message: Message) -> Sample | None:
    """The message's Sample, or None for a message no sampler produced."""
    raw = message.get("sample")
    return None if raw is None else Sample.from_dict(raw)


def without_samples(messages: list[Message]) -> list[Message]:
    """The plain Chat Completions view (what is sent to a server)."""
    return [{k: v for k, v in m.items() if k != "sample"} for m in messages]


@dataclass
class TokenizedTrajectory:
    """One trajectory as tokens. All tensors are [T].

    `turn[i]` is the index of the message token i belongs to; `trainable[i]` is True for
    tokens the policy generated (a sampled turn's ids; for an assistant message without a
    sample, its re-tokenized text), False for context (system, user, tool outputs, the
    template's role headers and end-of-turn text). `sampled[i]` is True for tokens with a
    sampler log-prob, `sampler_logprobs[i]` (0 elsewhere): log π_sampler(token i | < i).
    `spans[m]` is message m's token range `(start, end)`, header included."""

    tokens: Tensor
    turn: Tensor
    trainable: Tensor
    spans: list[tuple[int, int]]
    sampled: Tensor
    sampler_logprobs: Tensor

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


class _Sequence:
    """Builds a token sequence from context text runs and sampled ids (see `tokenize`)."""

    def __init__(self, tok: ChatTokenizer):
        self.tok = tok
        self.ids: list[int] = []
        self.turn: list[int] = []
        self.trainable: list[bool] = []
        self.logprobs: list[float | None] = []
        self.run = ""  # context text not yet encoded
        self.labels: list[tuple[int, int, bool]] = []  # (char start in run, message, trainable)

    def text(self, text: str, message: int, trainable: bool = False) -> None:
        if text:
            self.labels.append((len(self.run), message, trainable))
            self.run += text

    def flush(self) -> None:
        if not self.run:
            return
        ids, offsets = self.tok.encode_with_offsets(self.run)
        k = 0
        for tid, off in zip(ids, offsets):
            while k + 1 < len(self.labels) and off >= self.labels[k + 1][0]:
                k += 1
            _, message, trainable = self.labels[k]
            self.ids.append(tid)
            self.turn.append(message)
            self.trainable.append(trainable)
            self.logprobs.append(None)
        self.run, self.labels = "", []

    def sampled(self, sample: Sample, message: int) -> None:
        self.flush()
        self.ids += sample.ids
        self.turn += [message] * len(sample.ids)
        self.trainable += [True] * len(sample.ids)
        self.logprobs += sample.logprobs


_PROBE = "\x01etude-turn-body\x01"


def _end_of_turn(tok: ChatTokenizer, messages: list[Message], i: int, prompt: str) -> str:
    """The text the template writes after assistant message i's body (e.g. `<|im_end|>\\n`),
    found by rendering a probe body in its place."""
    probe = tok.render([*messages[:i], {"role": "assistant", "content": _PROBE}])
    at = probe.find(_PROBE, len(prompt))
    if at < 0:
        raise TemplateError(f"message {i}: the chat template does not render an assistant body")
    return probe[at + len(_PROBE) :]


def tokenize(
    messages: list[Message], tok: ChatTokenizer, *, add_generation_prompt: bool = False
) -> TokenizedTrajectory:
    """Render `messages` with `tok`'s chat template and label every token (see module doc).

    An assistant message with a `"sample"` contributes its sampled ids verbatim (trainable,
    with their sampler log-probs); one without (a demonstration) contributes its
    re-tokenized text, trainable after the generation prompt. `add_generation_prompt`
    appends the header of the next assistant turn: the prompt a sampler continues.

    Raises TemplateError when the template does not render the trajectory as a sequence of
    extensions (each prefix's rendering a prefix of the next), which every
    append-only chat template satisfies."""
    validate_messages(messages)
    seq = _Sequence(tok)
    previous = ""
    for i, m in enumerate(messages):
        text = tok.render(messages[: i + 1])
        if not text.startswith(previous):
            raise TemplateError(
                f"message {i} ({m['role']}) changes how earlier messages render; "
                "the trajectory does not fit this chat template"
            )
        if m["role"] != "assistant":
            seq.text(text[len(previous) :], i)
            previous = text
            continue
        prompt = tok.render(messages[:i], add_generation_prompt=True)
        if not prompt.startswith(previous) or not text.startswith(prompt):
            raise TemplateError(f"template re-renders earlier messages at message {i}")
        seq.text(prompt[len(previous) :], i)
        sample = sample_of(m)
        if sample is None:
            seq.text(text[len(prompt) :], i, trainable=True)
        else:
            seq.sampled(sample, i)
            after = _end_of_turn(tok, messages, i, prompt)
            stop = tok.decode([sample.ids[-1]]) if sample.finish == "stop" else ""
            if stop and after.startswith(stop):
                after = after[len(stop) :]  # the sampler already produced the stop token
            seq.text(after, i)
        previous = text
    if add_generation_prompt:
        prompt = tok.render(messages, add_generation_prompt=True)
        if not prompt.startswith(previous):
            raise TemplateError("the generation prompt re-renders earlier messages")
        seq.text(prompt[len(previous) :], len(messages) - 1)
    seq.flush()
    spans = []
    import torch  # here, so that readers of the format alone (the monitor) never load torch

    turn = torch.tensor(seq.turn, dtype=torch.long)
    for i in range(len(messages)):
        idx = (turn == i).nonzero().squeeze(-1)
        spans.append((int(idx[0]), int(idx[-1]) + 1) if len(idx) else (0, 0))
    sampled = [lp is not None for lp in seq.logprobs]
    return TokenizedTrajectory(
        tokens=torch.tensor(seq.ids, dtype=torch.long),
        turn=turn,
        trainable=torch.tensor(seq.trainable, dtype=torch.bool),
        spans=spans,
        sampled=torch.tensor(sampled, dtype=torch.bool),
        sampler_logprobs=torch.tensor(
            [0.0 if lp is None else lp for lp in seq.logprobs], dtype=torch.float32
        ),
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
    (`tools`), and metadata (`task_id`, `reward`, anything else in `metadata`). `source` is
    None for sampled rollouts and `DEMONSTRATION` for a scripted solver's."""

    messages: list[Message]
    tools: list[dict] | None = None
    task_id: str | None = None
    reward: float | None = None
    metadata: dict | None = None
    source: str | None = None

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools or []]

    def unsampled_turns(self) -> list[int]:
        """Indices of assistant messages without a token view (the old format)."""
        return [
            i for i, m in enumerate(self.messages) if m["role"] == "assistant" and "sample" not in m
        ]

    @classmethod
    def from_dict(cls, d: dict, for_training: bool = True) -> Trajectory:
        """Read one JSONL record (a `messages` list required; `tools`, `task_id`, `reward`
        optional; other keys go to `metadata`). Raises TrajectoryFormatError for a malformed
        record or sample. `for_training=False` reads the message view alone, for readers that
        never train (the monitor): samples are not checked, and the messages are left to
        the reader, which reports each bad one itself instead of refusing the record."""
        if not isinstance(d, dict) or not isinstance(d.get("messages"), list):
            raise TrajectoryFormatError("trajectory record has no 'messages' list")
        if for_training:
            validate_messages(d["messages"])
            for i, m in enumerate(d["messages"]):
                try:
                    sample_of(m)
                except TrajectoryFormatError as err:
                    raise TrajectoryFormatError(f"message {i}: {err}") from err
        known = {"messages", "tools", "task_id", "reward", "source"}
        extra = {k: v for k, v in d.items() if k not in known}
        source = d.get("source")
        if source not in (None, DEMONSTRATION):
            raise TrajectoryFormatError(
                f"trajectory source must be absent or {DEMONSTRATION!r}, got {source!r}"
            )
        return cls(
            d["messages"], d.get("tools"), d.get("task_id"), d.get("reward"), extra or None, source
        )

    def to_dict(self) -> dict:
        out: dict = {"messages": self.messages}
        for key in ("tools", "task_id", "reward", "source"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out.update(self.metadata or {})
        return out


def read_jsonl(path: str | Path) -> Iterator[Trajectory]:
    """Trajectories from a JSONL file, one record per line (blank lines skipped). Raises
    TrajectoryFormatError naming the line of the first bad record."""
    with Path(path).open() as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield Trajectory.from_dict(json.loads(line))
            except (json.JSONDecodeError, TemplateError) as err:
                raise TrajectoryFormatError(f"{path}, line {number}: {err}") from err


class JsonlWriter:
    """Appends one JSON object per line, flushed and fsynced per line, from many threads, so
    an interrupted run leaves only whole records."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def write(self, record: dict | Trajectory) -> None:
        if isinstance(record, Trajectory):
            record = record.to_dict()
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock, self.path.open("a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
