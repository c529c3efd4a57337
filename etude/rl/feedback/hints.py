"""A hint: short text inserted before one assistant turn of a trajectory, where the teacher
(the same model) reads it and the student (the policy) does not."""

from __future__ import annotations

from dataclasses import dataclass

from etude.rl.trajectory import Message, Trajectory

CATEGORIES = (
    "tool_not_found",
    "invalid_arguments",
    "repeated_call",
    "style",
    "communication",
    "effort",
    "judge",
    "placebo",
)


class HintError(ValueError):
    """A hint that cannot apply to its trajectory (for example, not at a policy turn)."""


@dataclass(frozen=True)
class Hint:
    """`turn` is the index in `messages` of the assistant message the hint is about; `text` is
    inserted as a message right before it; `category` picks the loss weight
    λ_category; `source` names the detector (or judge) that produced it."""

    turn: int
    text: str
    category: str
    source: str


def hint_message(hint: Hint, role: str = "user") -> Message:
    """The message the teacher's context gets right before `hint.turn`."""
    return {"role": role, "content": hint.text}


def validate_hint(traj: Trajectory, hint: Hint) -> None:
    """Raise HintError unless `hint.turn` is an assistant message of `traj` with content or
    calls, and the hint has text."""
    n = len(traj.messages)
    if not 0 <= hint.turn < n:
        raise HintError(f"hint from {hint.source} points at turn {hint.turn}; trajectory has {n}")
    role = traj.messages[hint.turn].get("role")
    if role != "assistant":
        raise HintError(
            f"hint from {hint.source} points at turn {hint.turn}, a {role!r} message; "
            "hints must point at the policy's (assistant) turns"
        )
    if not hint.text.strip():
        raise HintError(f"hint from {hint.source} at turn {hint.turn} has no text")
