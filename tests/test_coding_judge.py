"""The LLM judge in the coding loop: its hints take the detectors' path (record, category,
λ-weighted KL in the update), a judge that fails is recorded and the episode goes on, and a
real llama.cpp judge (the session's `llama_server`) answers and is parsed, and one that
times out or does not answer is recorded while the loop iteration trains anyway."""

import json

import pytest
import torch
from test_coding_env import example_tasks
from test_coding_resume import config, tiny_model

from etude.envs.coding import Episode
from etude.envs.rollouts import Job
from etude.optim import Muon
from etude.recipes.coding.config import JudgeSettings
from etude.recipes.coding.judge import judge_trajectory, make_judge
from etude.recipes.coding.loop import screen_episode, train
from etude.rl.feedback import DETECTORS, JudgeDetector
from etude.rl.policy import HFPolicy
from etude.rl.trajectory import HFChat, Trajectory
from etude.rl.update import StepSettings, rl_update
from etude.serving.backends import BackendError
from etude.serving.llama_server import free_port

MESSAGES = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Implement slugify in src/textkit/slug.py."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "open_file", "arguments": '{"path": "slug.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Tool not found: open_file"},
    {"role": "assistant", "content": "Done."},
]


def episode() -> Episode:
    return Episode("e1", "t1", [dict(m) for m in MESSAGES], end="answer", turns=2, tokens=20)


def screen(judge, tmp_path):
    job = Job(tmp_path / "no-task", tmp_path / "ep", 0)
    graded = {"reward": 0.0, "skipped": "workspace unchanged"}
    detectors = [DETECTORS["tool_not_found"]()]
    return screen_episode(job, episode(), graded, "high", detectors, judge)


@pytest.mark.filterwarnings("ignore:.*re-tokenized:UserWarning")  # hand-written turns
def test_judge_hints_take_the_detector_path_into_the_loss(smollm2_tokenizer, tmp_path):
    tokenizer = smollm2_tokenizer
    replies = []

    def chat(messages):
        replies.append(messages)
        return '{"turn": 4, "hint": "Check the tool output before you say you are done."}\nnot json'

    record, traj, hints = screen(JudgeDetector(chat), tmp_path)
    assert len(replies) == 1 and "[3] tool: Tool not found" in replies[0][-1]["content"]
    assert record["judge"]["hints"] == 1 and isinstance(record["judge"]["rejected"], list)
    assert {(h["turn"], h["category"]) for h in record["hints"]} == {
        (2, "tool_not_found"),
        (4, "judge"),
    }
    # the update weighs the judge's hint with λ_judge like any detector's
    model = tiny_model(tokenizer)
    optimizer = Muon(list(model.named_parameters()), lr=0.02, adamw_lr=1e-3)
    settings = StepSettings(
        weights={"judge": 1.0, "tool_not_found": 0.5},
        modes={"judge": "kl", "tool_not_found": "kl"},
    )
    other = Trajectory([*MESSAGES[:2], {"role": "assistant", "content": "Hi."}], reward=1.0)
    metrics = rl_update(
        HFPolicy(model),
        optimizer,
        HFChat(tokenizer),
        [traj, other],
        [0, 0],
        [hints, []],
        settings,
        retokenize=True,  # hand-written turns: no token ids
    )
    assert metrics["hints_used"] == 2, metrics["errors"]
    assert metrics["kl/judge"] > 0 and metrics["kl/tool_not_found"] > 0
    zero = StepSettings(weights={"judge": 0.0, "tool_not_found": 0.0})
    again = rl_update(
        HFPolicy(model),
        optimizer,
        HFChat(tokenizer),
        [traj, other],
        [0, 0],
        [hints, []],
        zero,
        retokenize=True,
    )
    assert again["hints_used"] == 0 and "kl/judge" not in again  # λ = 0: no teacher term


def test_failing_judge_is_recorded_and_the_episode_goes_on(tmp_path):
    def down(messages):
        raise BackendError("http://127.0.0.1:9/v1/chat/completions did not answer: refused")

    record, traj, hints = screen(JudgeDetector(down), tmp_path)
    assert "did not answer" in record["judge"]["error"]
    assert [h.category for h in hints] == ["tool_not_found"] and traj is not None


@pytest.mark.slow
def test_judge_against_a_real_server(llama_server):
    """SmolLM2 on llama.cpp as the judge: it answers (what it says is parsed: hints or
    rejected lines); a timeout is recorded. (The first judge call of a session pays the
    judge prompt's processing, about 20 s here: this llama.cpp build does ~10 prompt
    tokens/s on the shared 2 cores.)"""
    judge = make_judge(JudgeSettings(base_url=llama_server, max_tokens=24, timeout_s=180))
    hints, note = judge_trajectory(judge, Trajectory(MESSAGES))
    assert "error" not in note and note["hints"] == len(hints)
    assert hints or note["rejected"]  # a 135M judge's reply is parsed one way or the other
    assert all(h.category == "judge" and MESSAGES[h.turn]["role"] == "assistant" for h in hints)
    slow = make_judge(JudgeSettings(base_url=llama_server, max_tokens=16, timeout_s=0.001))
    hints, note = judge_trajectory(slow, Trajectory(MESSAGES))
    assert hints == [] and "did not answer" in note["error"]
    assert make_judge(JudgeSettings()) is None  # off by default


@pytest.mark.slow
def test_loop_iteration_goes_on_without_its_judge(smollm2_tokenizer, tmp_path, monkeypatch):
    """A judge endpoint that does not answer: every call is recorded as failed in the
    summary and the iteration trains anyway (`has_signal` patched, so that the update runs
    although a random policy earns no reward to compare)."""
    from etude.recipes.coding import loop

    monkeypatch.setattr(loop, "has_signal", lambda *args: True)
    tokenizer = smollm2_tokenizer
    assert example_tasks()
    judge = {"base_url": f"http://127.0.0.1:{free_port()}/v1", "timeout_s": 5.0}
    cfg = config(tmp_path / "run", 1, judge=judge)
    (summary,) = train(cfg, policy=(tiny_model(tokenizer), tokenizer))
    assert summary["judge"]["calls"] == 2 and len(summary["judge"]["errors"]) == 2
    assert all("did not answer" in e for e in summary["judge"]["errors"])
    graded = (tmp_path / "run" / "iter_0001" / "graded.jsonl").read_text().splitlines()
    assert all("did not answer" in json.loads(line)["judge"]["error"] for line in graded)
    assert summary["trained_trajectories"] == 2 and "judge" not in summary["hints_by_category"]
    assert torch.isfinite(torch.tensor(summary["rl_loss"]))
