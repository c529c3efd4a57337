"""An LLM judge as a hint detector: any chat model, given as a callable from messages to the
reply text, reads the numbered trajectory and names the turns that went wrong."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from etude.rl.feedback.hints import Hint, HintError, validate_hint
from etude.rl.trajectory import Message, Trajectory

ChatFn = Callable[[list[Message]], str]

INSTRUCTIONS = (
    "You review an AI agent's tool-using conversation. For each assistant turn that went "
    "wrong, reply with one JSON object per line: "
    '{"turn": <number>, "hint": "<one short sentence the agent should have known>"}. '
    "Reply with nothing if no turn went wrong."
)


def render_for_judge(traj: Trajectory) -> str:
    """The trajectory as numbered lines `[i] role: content (calls)`."""
    lines = []
    for i, m in enumerate(traj.messages):
        calls = " ".join(
            f"call {c['function']['name']}({c['function'].get('arguments', '')})"
            for c in m.get("tool_calls") or []
        )
        lines.append(f"[{i}] {m['role']}: {m.get('content') or ''} {calls}".rstrip())
    return "\n".join(lines)


@dataclass
class JudgeDetector:
    """Asks `chat` for hints. Lines of the reply that are not JSON objects with an integer
    `turn` at an assistant message and a non-empty `hint` are skipped and kept in `rejected`
    (a judge's malformed output must not stop training)."""

    chat: ChatFn
    name: str = "judge"
    rejected: list[str] = field(default_factory=list)

    def __call__(self, traj: Trajectory) -> list[Hint]:
        reply = self.chat(
            [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": render_for_judge(traj)},
            ]
        )
        hints = []
        for line in reply.splitlines():
            line = line.strip().strip(",")
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
                hint = Hint(int(obj["turn"]), str(obj["hint"]), "judge", self.name)
                validate_hint(traj, hint)
            except (json.JSONDecodeError, KeyError, TypeError, ValueError, HintError) as err:
                self.rejected.append(f"{line!r}: {err}")
                continue
            hints.append(hint)
        return hints
