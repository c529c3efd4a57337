"""Hints for the turns that went wrong: the `Hint` record, rule-based detectors, an
LLM-judge detector, and the message a hint is rendered as in the teacher's context."""

from etude.rl.feedback.detectors import (
    DETECTORS,
    CommunicationDetector,
    EffortDetector,
    InvalidArgumentsDetector,
    RepeatedCallDetector,
    StyleDetector,
    ToolNotFoundDetector,
    detect_all,
)
from etude.rl.feedback.hints import Hint, HintError, hint_message, validate_hint
from etude.rl.feedback.judge import JudgeDetector

__all__ = [
    "DETECTORS",
    "CommunicationDetector",
    "EffortDetector",
    "Hint",
    "HintError",
    "InvalidArgumentsDetector",
    "JudgeDetector",
    "RepeatedCallDetector",
    "StyleDetector",
    "ToolNotFoundDetector",
    "detect_all",
    "hint_message",
    "validate_hint",
]
