"""The LLM judge in the coding loop: `etude.rl.feedback.JudgeDetector` over an
OpenAI-compatible chat endpoint (`[judge]` in the config). Its hints (category "judge") take
the detectors' path into the loss; a judge that fails, times out or answers garbage is
recorded on the episode and in the iteration summary, and never stops the loop."""

from __future__ import annotations

from etude.recipes.coding.config import JudgeSettings
from etude.rl.feedback import Hint, JudgeDetector
from etude.rl.trajectory import Trajectory
from etude.serving.backends import OpenAIBackend


def make_judge(settings: JudgeSettings) -> JudgeDetector | None:
    """The configured judge, or None when `settings.base_url` is empty (judge off)."""
    if not settings.base_url:
        return None
    client = OpenAIBackend(
        settings.base_url,
        settings.served_model,
        max_tokens=settings.max_tokens,
        temperature=0.0,
        timeout_s=settings.timeout_s,
    )
    return JudgeDetector(client.chat)


def judge_trajectory(judge: JudgeDetector, traj: Trajectory) -> tuple[list[Hint], dict]:
    """(the judge's hints for `traj`, a note for the episode's record): the note holds
    `hints` and the reply lines the judge's parser `rejected`, or the `error` that stopped
    the judge (then there are no hints)."""
    before = len(judge.rejected)
    try:
        hints = judge(traj)
    except Exception as err:  # a judge failure is data, never a stop
        return [], {"error": f"{type(err).__name__}: {err}"}
    return hints, {"hints": len(hints), "rejected": judge.rejected[before:]}


def judge_summary(notes: list[dict]) -> dict:
    """The iteration's judge figures from its episodes' notes."""
    return {
        "calls": len(notes),
        "hints": sum(n.get("hints", 0) for n in notes),
        "rejected_lines": sum(len(n.get("rejected", [])) for n in notes),
        "errors": [n["error"] for n in notes if "error" in n],
    }
