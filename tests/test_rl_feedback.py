"""Hint detectors find the planted mistakes in hand-written trajectories and nothing in clean
ones; the judge detector reads any chat callable; bad hints give clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from etude.rl.feedback import (
    DETECTORS,
    CommunicationDetector,
    EffortDetector,
    Hint,
    HintError,
    JudgeDetector,
    detect_all,
    validate_hint,
)
from etude.rl.trajectory import Trajectory

DATA = Path(__file__).parent / "data" / "rl"


def _load(name):
    return Trajectory.from_dict(json.loads((DATA / f"{name}.json").read_text()))


def _all():
    return [d() for d in DETECTORS.values()]


def test_clean_trajectory_gets_no_hints():
    assert detect_all(_load("clean"), _all()) == []


def test_tool_not_found_hint_at_the_failing_turn():
    (hint,) = detect_all(_load("tool_not_found"), _all())
    assert (hint.turn, hint.category, hint.source) == (2, "tool_not_found", "tool_not_found")
    assert "qix does not exist" in hint.text and "add=zop" in hint.text and "mul=kav" in hint.text


def test_each_planted_mistake_is_found_at_its_turn():
    found = {(h.turn, h.category) for h in detect_all(_load("planted_many"), _all())}
    assert found == {
        (2, "invalid_arguments"),  # zop called without b
        (6, "repeated_call"),  # zop(3, 4) again
        (8, "style"),  # unused import in the written file (ruff F401)
        (10, "communication"),  # empty answer
    }
    style = [h for h in detect_all(_load("planted_many"), _all()) if h.category == "style"]
    assert "F401" in style[0].text


def test_effort_detector_flags_far_too_many_turns_and_giving_up_early():
    traj = _load("clean")
    many = Trajectory(
        traj.messages[:2]
        + [{"role": "assistant", "content": "thinking"}, {"role": "user", "content": "go on"}] * 7,
        traj.tools,
        metadata={"expected_turns": 3},
    )
    (hint,) = EffortDetector()(many)
    assert hint.category == "effort" and hint.turn == 2 + 2 * 6  # the 7th assistant turn
    early = Trajectory(traj.messages[:3], traj.tools, reward=0.0, metadata={"expected_turns": 6})
    assert [h.turn for h in EffortDetector()(early)] == [2]
    assert EffortDetector()(traj) == []  # 3 turns for 3 expected


def test_communication_detector_flags_rambling():
    traj = _load("clean")
    ramble = Trajectory(
        [*traj.messages[:-1], {"role": "assistant", "content": "I will do it.\n" * 5}]
    )
    (hint,) = CommunicationDetector()(ramble)
    assert hint.turn == len(ramble.messages) - 1


def test_judge_detector_takes_any_chat_callable_and_skips_malformed_lines():
    traj = _load("tool_not_found")
    seen = {}

    def chat(messages):
        seen["prompt"] = messages[-1]["content"]
        return (
            '{"turn": 2, "hint": "Use zop, the add tool."}\n'
            "not json\n"
            '{"turn": 1, "hint": "a user turn"}\n'
            '{"turn": 99, "hint": "out of range"}\n'
            '{"hint": "no turn"}\n'
        )

    judge = JudgeDetector(chat)
    assert judge(traj) == [Hint(2, "Use zop, the add tool.", "judge", "judge")]
    assert "[2] assistant:  call qix" in seen["prompt"]
    assert len(judge.rejected) == 3  # user turn, out of range, missing turn


def test_hint_validation_names_the_problem():
    traj = _load("tool_not_found")
    with pytest.raises(HintError, match="points at turn 1, a 'user' message"):
        validate_hint(traj, Hint(1, "x", "judge", "judge"))
    with pytest.raises(HintError, match="trajectory has 7"):
        validate_hint(traj, Hint(7, "x", "judge", "judge"))
    with pytest.raises(HintError, match="no text"):
        validate_hint(traj, Hint(2, "  ", "judge", "judge"))
