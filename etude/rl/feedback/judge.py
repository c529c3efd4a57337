"""An LLM judge as a hint detector: any chat model, given as a callable from messages to the
reply text, reads the numbered trajectory and names the turns that went wrong.

Models, small ones especially, wrap their JSON in prose or code fences, spread it over lines,
or answer something else entirely, so the reply is parsed leniently: every JSON object in it
is a candidate (prose around them is ignored), and whatever cannot become a hint is kept with
the reason in `JudgeDetector.rejected` rather than dropped silently."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from etude.rl.feedback.hints import Hint, HintError, validate_hint
from etude.rl.trajectory import Message, Trajectory

ChatFn = Callable[[list[Message]], str]
log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "You review an AI agent's tool-using conversation. For each assistant turn that went "
    "wrong, reply with one JSON object per line: "
    '{"turn": <number>, "hint": "<one short sentence the agent should have known>"}. '
    "Reply with nothing if no turn went wrong."
)
# One worked example before the real trajectory: small models follow the reply format far
# more often after one (benchmarks/judge_real.py measures both prompts side by side).
EXAMPLE: list[Message] = [
    {"role": "system", "content": "tools: get_time(city)"},
    {"role": "user", "content": "What time is it in Oslo?"},
    {"role": "assistant", "content": "Let me check."},
    {"role": "user", "content": "Go on."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {"name": "get_time", "arguments": '{"town": "Oslo"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "a", "content": "Invalid arguments: missing city"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "b",
                "type": "function",
                "function": {"name": "get_time", "arguments": '{"city": "Oslo"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "b", "content": "14:05"},
    {"role": "assistant", "content": "It is 14:05 in Oslo."},
]
EXAMPLE_REPLY = '{"turn": 4, "hint": "get_time takes the argument city, not town."}'


def render_for_judge(traj: Trajectory) -> str:
    """The trajectory as numbered lines `[i] role: content (calls)`, then the numbers of the
    assistant turns (the only turns a hint may name)."""
    lines = []
    for i, m in enumerate(traj.messages):
        calls = " ".join(
            f"call {c['function']['name']}({c['function'].get('arguments', '')})"
            for c in m.get("tool_calls") or []
        )
        lines.append(f"[{i}] {m['role']}: {m.get('content') or ''} {calls}".rstrip())
    turns = [str(i) for i, m in enumerate(traj.messages) if m.get("role") == "assistant"]
    lines.append(f"\nAssistant turns: {', '.join(turns)}.")
    return "\n".join(lines)


def judge_messages(traj: Trajectory) -> list[Message]:
    """The chat the judge model gets: instructions, the worked example, then `traj`."""
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": render_for_judge(Trajectory(EXAMPLE))},
        {"role": "assistant", "content": EXAMPLE_REPLY},
        {"role": "user", "content": render_for_judge(traj)},
    ]


def json_objects(text: str) -> tuple[list[tuple[str, object]], list[str]]:
    """Every top-level JSON object in `text`, wherever it stands (prose, code fences, arrays
    and line breaks around or inside it are fine) -> ([(its source text, the value)], [a
    reason for each `{` that starts no valid JSON, with the text from there])."""
    decoder = json.JSONDecoder()
    found, broken = [], []
    at = text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as err:
            broken.append(f"{_snippet(text[at:])}: not valid JSON ({err.msg})")
            end = text.find("\n", at) + 1 or len(text)  # resume on the next line
        else:
            found.append((text[at:end], value))
        at = text.find("{", end)
    return found, broken


def _snippet(text: str, limit: int = 160) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


@dataclass
class JudgeDetector:
    """Asks `chat` for hints. Each JSON object of the reply whose `turn` (4, "4" or 4.0) is
    an assistant message and whose `hint` is non-empty text becomes a
    `Hint(turn, hint, "judge", name)` (the first per turn). Everything else — an object
    without those, a turn that is not the policy's, a second hint for one turn, a `{` that
    starts no valid JSON, a non-empty reply with no JSON object at all — is appended to
    `rejected` as `"<text>: <reason>"` and logged (a judge's malformed output must not stop
    training, nor vanish unnoticed)."""

    chat: ChatFn
    name: str = "judge"
    rejected: list[str] = field(default_factory=list)

    def __call__(self, traj: Trajectory) -> list[Hint]:
        reply = self.chat(judge_messages(traj))
        hints, problems = parse_reply(reply or "", traj, self.name)
        for problem in problems:
            log.info("judge %s: reply part rejected: %s", self.name, problem)
        self.rejected.extend(problems)
        return hints


def parse_reply(reply: str, traj: Trajectory, source: str) -> tuple[list[Hint], list[str]]:
    """A judge's reply -> (its valid hints for `traj`, one rejection reason for each part
    that could not become a hint). See `JudgeDetector`."""
    found, problems = json_objects(reply)
    if not found and not problems and reply.strip():
        problems.append(f"{_snippet(reply.strip())}: no JSON object in the reply")
    hints: list[Hint] = []
    for text, obj in found:
        try:
            if not isinstance(obj, dict) or "turn" not in obj or "hint" not in obj:
                raise ValueError('not an object with "turn" and "hint"')
            if not isinstance(obj["hint"], str):
                raise ValueError(f"hint {obj['hint']!r} is not text")
            hint = Hint(_turn_number(obj["turn"]), obj["hint"].strip(), "judge", source)
            validate_hint(traj, hint)
            if any(h.turn == hint.turn for h in hints):
                raise ValueError(f"a second hint for turn {hint.turn}")
        except (ValueError, HintError) as err:
            problems.append(f"{_snippet(text)}: {err}")
            continue
        hints.append(hint)
    return hints, problems


def _turn_number(value: object) -> int:
    """A turn as the judge may write it: 4, "4" or 4.0."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError(f"turn {value!r} is not a message number")
