"""The LLM-judge detector against a real model: SmolLM2-135M-Instruct served by llama.cpp
(the session's `llama_server` fixture in conftest.py) through the OpenAI-compatible client,
on hand-written trajectories, one with a planted mistake (a call to a tool that does not
exist) and one clean. SmolLM2-135M is a weak judge: what it says is not asserted, only what
must hold whatever it says — the judge does not crash, every hint points at a real policy
turn with its category and source, and every non-empty reply that yields no hint is
recorded in `rejected` with a reason and logged. (benchmarks/judge_real.py records what it
actually says.)"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from etude.rl.feedback import JudgeDetector, validate_hint
from etude.rl.trajectory import Trajectory
from etude.serving.backends import OpenAIBackend

pytestmark = pytest.mark.slow
DATA = Path(__file__).parent / "data" / "rl"


def _load(name):
    return Trajectory.from_dict(json.loads((DATA / f"{name}.json").read_text()))


def test_judge_on_smollm2_never_crashes_and_accounts_for_every_reply(llama_server, caplog):
    caplog.set_level(logging.INFO, logger="etude.rl.feedback.judge")
    seen = []
    client = OpenAIBackend(llama_server, max_tokens=64, temperature=0.0)
    for name in ("tool_not_found", "clean"):
        replies: list[str] = []

        def chat(messages, replies=replies):
            replies.append(client.chat(messages))
            return replies[-1]

        traj = _load(name)
        judge = JudgeDetector(chat, name="smollm2")
        t0 = time.perf_counter()
        hints = judge(traj)
        seconds = time.perf_counter() - t0
        (reply,) = replies
        for hint in hints:
            validate_hint(traj, hint)  # an assistant turn of this trajectory, with text
            assert (hint.category, hint.source) == ("judge", "smollm2")
            assert str(hint.turn) in reply  # the turn came from the model's reply
        if reply.strip() and not hints:
            assert judge.rejected, f"reply {reply!r} gave no hint and no reason"
        assert all(": " in r for r in judge.rejected)  # "<text>: <reason>"
        seen.append((name, len(hints), len(judge.rejected), seconds, reply))
    logged = [r for r in caplog.records if "rejected" in r.getMessage()]
    assert len(logged) == sum(s[2] for s in seen)
    for name, n_hints, n_rejected, seconds, reply in seen:
        print(f"{name}: {n_hints} hints, {n_rejected} rejected, {seconds:.1f} s")
        print(f"  reply: {reply[:200]!r}")
