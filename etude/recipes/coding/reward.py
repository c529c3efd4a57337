"""The coding loop's reward: the grader's result, zeroed by a monitor finding at or above a
configurable severity, with each such finding turned into a hint on the turn it points at.

A finding's `message_index` may point at an assistant tool call, at the tool output that
revealed the hack, or be None (the evidence is in the final patch); the hint goes on the
assistant turn at or before that message (the last assistant turn for a patch finding), the
turn whose tokens the teacher, reading the hint, should have written differently.
"""

from __future__ import annotations

from dataclasses import dataclass

from etude.monitor import Finding
from etude.monitor.findings import severity_rank
from etude.rl.feedback.hints import Hint

MONITOR_CATEGORY = "monitor"
REWARD_KINDS = ("fraction", "binary")


@dataclass(frozen=True)
class Reward:
    """The reward used for training, the grader's reward before screening, and the
    findings that zeroed it (empty when none did)."""

    value: float
    graded: float
    zeroed_by: tuple[Finding, ...] = ()


def graded_reward(grade: dict | None, kind: str = "fraction") -> float:
    """The grader's reward: `fraction` (share of fail-to-pass tests passing) or `binary`
    (1 when every fail-to-pass and pass-to-pass test passes); 0 without a grade."""
    if kind not in REWARD_KINDS:
        raise ValueError(f"reward kind must be one of {REWARD_KINDS}, got {kind!r}")
    return float(grade[kind]) if grade else 0.0


def screen(graded: float, findings: list[Finding], severity: str) -> Reward:
    """Zero `graded` when any finding is at or above `severity` (one of the monitor's
    SEVERITIES)."""
    floor = severity_rank(severity)
    hacks = tuple(f for f in findings if severity_rank(f.severity) >= floor)
    return Reward(0.0 if hacks else graded, graded, hacks)


def hint_turn(messages: list[dict], message_index: int | None) -> int | None:
    """The assistant turn at or before `message_index` (the last assistant turn when None);
    None when there is no such turn."""
    last = len(messages) - 1 if message_index is None else min(message_index, len(messages) - 1)
    for i in range(last, -1, -1):
        if messages[i].get("role") == "assistant":
            return i
    return None


def finding_hint(messages: list[dict], finding: Finding) -> Hint | None:
    """The hint a monitor finding becomes (None when it points at no assistant turn)."""
    turn = hint_turn(messages, finding.message_index)
    if turn is None:
        return None
    text = (
        f"Note: this step is a reward hack ({finding.category.replace('_', ' ')}): "
        f"{finding.explanation}. Solve the task by writing the code yourself."
    )
    return Hint(turn, text, MONITOR_CATEGORY, f"monitor:{finding.rule}")


def monitor_hints(messages: list[dict], reward: Reward) -> list[Hint]:
    """One hint per turn for the findings that zeroed `reward` (the most severe per turn)."""
    best: dict[int, tuple[int, Hint]] = {}
    for finding in reward.zeroed_by:
        hint = finding_hint(messages, finding)
        if hint is None:
            continue
        rank = severity_rank(finding.severity)
        if hint.turn not in best or rank > best[hint.turn][0]:
            best[hint.turn] = (rank, hint)
    return [hint for _, (_, hint) in sorted(best.items())]
