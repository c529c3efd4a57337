"""The gap check after the student's own mistake (`etude.recipes.toolgrid.hint_reading`):
its states, contexts and first-failure labels on hand-built episodes, and the whole check
on scripted players (one that reads the hint, one that ignores it) with a tiny byte policy
scoring the log-probs."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
import torch

from etude.envs.toolgrid import NAMES, Episode, call_message, sample_task, split_registries
from etude.recipes.toolgrid import hint_reading
from etude.recipes.toolgrid.hint_reading import (
    first_failure,
    gap_check,
    mistake_contexts,
    mistake_states,
    next_action,
    predicted_benefit,
    predicts_benefit,
    replay,
)
from etude.recipes.toolgrid.policy import BytePolicy
from etude.recipes.toolgrid.train import PLACEBO_TEXT, ModelSettings, RunConfig
from etude.rl.feedback import DETECTORS

DETECT = [DETECTORS["tool_not_found"](), DETECTORS["invalid_arguments"]()]


def _task(seed: int = 0):
    _, heldout = split_registries(0, 10, 5, 3)
    return sample_task(heldout[seed % 5], 2, random.Random(seed))


def _right_call(ep: Episode, args: dict | None = None):
    req = ep.task.requests[len(ep.answers)]
    reg = ep.task.registry
    name = reg.name_of(req.function)
    args = dict(zip("ab", req.args)) if args is None else args
    return call_message(name, args, "x", reg.binding(req.function))


def _wrong_name(ep: Episode) -> str:
    return next(n for n in NAMES if ep.task.registry.function_of(n) is None)


def _answer(ep: Episode, right: bool = True):
    answer = ep.task.requests[len(ep.answers)].answer()
    return {"role": "assistant", "content": str(answer if right else answer + 1)}


def _play(ep: Episode, turns) -> Episode:
    for make in turns:
        ep.step(make(ep))
    return ep


def test_first_failure_names_the_first_departure_from_the_plan():
    task = _task()
    right = [_right_call, _answer]
    clean = _play(Episode(task, 2), [*right, *right])
    assert clean.reward == 1 and first_failure(clean) is None

    def not_found(ep):
        return call_message(_wrong_name(ep), {"a": 1}, "x")

    def wrong_tool(ep):
        reg, req = ep.task.registry, ep.task.requests[len(ep.answers)]
        other = next(n for n, f in reg.tools if f != req.function)
        return call_message(other, {"a": 1, "b": 2}, "x")

    def bad_args(ep):
        return _right_call(ep, {"c": 1})

    def wrong_values(ep):
        req = ep.task.requests[len(ep.answers)]
        args = dict(zip("ab", req.args))
        # no ToolGrid function gives (a + 100, b + 1000) the value of (a, b) for digits
        return _right_call(ep, {k: v + (100 if k == "a" else 1000) for k, v in args.items()})

    cases = {
        "tool_not_found": [not_found, _right_call, _answer, *right],
        "wrong_tool": [wrong_tool, _answer],
        "invalid_arguments": [bad_args],
        "wrong_arguments": [wrong_values, _answer],
        "repeated_call": [_right_call, _right_call, _answer, *right],
        "wrong_answer": [*right, _right_call, lambda ep: _answer(ep, right=False)],
        "answer_without_call": [lambda ep: _answer(ep, right=False)],
        "unfinished": [_right_call, _answer, _right_call],
    }
    for label, turns in cases.items():
        assert first_failure(_play(Episode(task, 2), turns)) == label, label
    recovered = _play(Episode(task, 2), cases["tool_not_found"])
    assert recovered.reward == 1  # a departure the student recovered from still counts


def test_mistake_states_and_their_contexts_place_the_hint_before_and_after_the_failed_call():
    task = _task(1)
    ep = Episode(task, 2)
    ep.step(_right_call(ep))
    ep.step(_answer(ep))
    ep.step(call_message(_wrong_name(ep), {"a": 1, "b": 2}, "x"))  # fails on request 2
    ep.step(_right_call(ep, {}))  # the right tool, no arguments
    (nf, bad) = mistake_states([ep], DETECT)
    assert (nf.hint.category, bad.hint.category) == ("tool_not_found", "invalid_arguments")
    assert nf.turn == ep.messages[nf.hint.turn] and nf.before.messages == ep.messages[:6]
    assert nf.after.messages == ep.messages[:8] and nf.after.messages[-1]["role"] == "tool"
    assert len(nf.before.answers) == len(nf.after.answers) == 1 and not nf.after.done
    contexts = mistake_contexts(nf)
    correct, offset = next_action(nf.after)
    name = correct["tool_calls"][0]["function"]["name"]
    assert correct["content"][offset:] == name and name == task.registry.name_of(
        task.requests[1].function
    )
    after, before, own = (
        contexts["after/hint"][0],
        contexts["before/hint"][0],
        contexts["own/hint"][0],
    )
    assert after == [*nf.after.messages, {"role": "user", "content": nf.hint.text}, correct]
    assert before == [*nf.before.messages, {"role": "user", "content": nf.hint.text}, correct]
    assert own[-1] == nf.turn and own[-2]["content"] == nf.hint.text
    assert contexts["after/placebo"][0][-2]["content"] == PLACEBO_TEXT
    assert contexts["after/none"][0] == [*nf.after.messages, correct]
    assert set(contexts) == {
        *(f"{p}/{c}" for p in ("after", "before") for c in ("none", "hint", "placebo")),
        "own/none",
        "own/hint",
    }
    # once the right call has returned, the correct next action is the answer
    done_call = replay(task, 2, [m for m in ep.messages if m["role"] == "assistant"][:1])
    assert next_action(done_call) == (
        {"role": "assistant", "content": str(task.requests[0].answer())},
        0,
    )


def _note(m) -> bool:
    return m["role"] == "user" and m["content"].startswith("Note:")


def _scripted(reads_hints: bool):
    """A player for `play`: its first call goes to a name not offered; after that error it
    makes the right call only when a hint is in the context (and `reads_hints`), else answers
    "no"; every later request it does right."""

    def play(_policy, _tok, episodes, seeds, _cfg):
        assert len(seeds) == len(episodes)
        for ep in episodes:
            while not ep.done:
                hinted = any("does not exist" in (m.get("content") or "") for m in ep.messages)
                # the last message that is no note (a hint or the placebo)
                last = next(m for m in reversed(ep.messages) if not _note(m))
                if ep.assistant_turns() == 0 and not hinted:
                    ep.step(call_message(_wrong_name(ep), {"a": 1}, "x"))
                elif last["role"] == "tool" and last["content"].startswith("Tool not found"):
                    no = {"role": "assistant", "content": "no"}
                    ep.step(_right_call(ep) if hinted and reads_hints else no)
                elif last["role"] == "tool":
                    ep.step(_answer(ep))
                else:
                    ep.step(_right_call(ep))
        return episodes

    return play


@pytest.mark.parametrize("reads", [True, False])
def test_the_check_after_a_mistake_measures_what_the_hint_changes(monkeypatch, reads):
    """Scripted players make one tool-not-found mistake per episode: the continuation with
    the hint succeeds exactly when the player reads hints, never with none or the placebo;
    the gate follows the after-mistake figures, not the first-call ones."""
    monkeypatch.setattr(hint_reading, "play", _scripted(reads))
    torch.manual_seed(0)
    cfg = RunConfig(model=ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64))
    cfg = replace(cfg, toolgrid=replace(cfg.toolgrid, slack=2))
    policy = BytePolicy(cfg.model.config()).eval()
    check = gap_check(policy, cfg, tasks=1, episodes=1, mistakes=3)
    am = check["after_mistake"]
    assert am["episodes"] == 3 and am["success"] == 0 and am["episodes_with_a_state"] == 3
    assert am["first_failure_of_failed_episodes"] == am["states"] == {"tool_not_found": 3}
    row = am["by_category"]["all"]
    assert row["states"] == 3 and set(am["by_category"]) == {"all", "tool_not_found"}
    cont = row["continuation_success"]
    assert cont["states_played"] == 3 and cont["placebo_gap"]["mean"] == 0
    assert cont["none"]["mean"] == 0 and cont["hint"]["mean"] == float(reads)
    assert cont["hint_gap"] == {"median": float(reads), "mean": float(reads), "se": 0.0}
    for position in ("after", "before"):
        assert row[position]["median_logp_none"] < 0
        assert row[position]["hint_gain"]["mean"] is not None
    # a hint before the first call keeps either player from erring, so the first-call gap
    # is +1 for both and would pass the gate; the after-mistake figures decide instead
    assert check["success"]["gap"] == 1.0
    if reads:
        assert (
            predicts_benefit(check)
            and "after the student's own mistakes (3 states)" in (check["prediction"])
        )
    else:
        # the random scorer's log-prob gains are noise; set aside, the continuation decides
        row["before"]["hint_gain"]["median"] = row["after"]["hint_gain"]["median"] = 0.0
        assert not predicts_benefit(check) and "predicts no gain" in predicted_benefit(check)


def test_with_no_failed_call_the_targeted_gate_predicts_no_benefit():
    empty = {"states": 0, "continuation_success": {"hint_gap": {"mean": None}}}
    empty |= {p: {"hint_gain": {"median": None}} for p in ("after", "before")}
    check = {"success": {"gap": 0.3}, "after_mistake": {"by_category": {"all": empty}}}
    assert not predicts_benefit(check)  # even with a first-call gap: no hint would fire
    assert "(0 states)" in predicted_benefit(check) and "predicts no gain" in predicted_benefit(
        check
    )
