"""The experiment's statistics: paired bootstrap intervals, episodes to a success level, and
the per-arm summary."""

from __future__ import annotations

import json
import random
from dataclasses import asdict, replace

import pytest
import torch

from etude.envs.toolgrid import sample_task, split_registries
from etude.recipes.toolgrid.experiment import (
    WARM_START,
    GapCheckError,
    _read_log,
    arms,
    cached_warm_start,
    episodes_to_reach,
    paired_bootstrap,
    run_dir_name,
    run_experiment,
    same_experiment,
    select_arms,
    summarize,
    warm_start_key,
)
from etude.recipes.toolgrid.hint_reading import (
    first_call_contexts,
    predicted_benefit,
    predicts_benefit,
    reads_hints,
    turn_scores,
)
from etude.recipes.toolgrid.train import ModelSettings, RunConfig
from etude.rl.trajectory import ByteChat, tokenize


def test_paired_bootstrap_interval_contains_the_mean_and_shrinks_to_a_point():
    mean, lo, hi = paired_bootstrap([0.1, 0.2, 0.3, 0.0, 0.4])
    assert mean == pytest.approx(0.2) and lo < mean < hi and lo >= 0.0 and hi <= 0.4
    assert paired_bootstrap([0.5] * 5) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError):
        paired_bootstrap([])


def test_episodes_to_reach():
    evals = [{"episodes": 0, "heldout_success": 0.5}, {"episodes": 64, "heldout_success": 0.85}]
    assert episodes_to_reach(evals, 0.8) == 64
    assert episodes_to_reach(evals, 0.9) is None


SMALL_CHECK = {"gap_tasks": 30, "gap_episodes": 6, "gap_mistakes": 3}


def _records(success):
    return [
        {"episodes": 0, "heldout_success": 0.2, "heldout_error_rate": 0.3},
        {
            "step": 0,
            "episodes": 16,
            "error_rate": 0.1,
            "heldout_success": success,
            "heldout_error_rate": 0.1,
        },
    ]


def test_summary_pairs_arms_with_rl_by_seed():
    results = {
        "rl": {0: _records(0.4), 1: _records(0.6)},
        "targeted": {0: _records(0.5), 1: _records(0.8)},
    }
    s = summarize(results, [0, 1])["arms"]
    assert s["targeted"]["final_success_diff_vs_rl"]["mean"] == pytest.approx(0.15)
    assert s["targeted"]["mean_heldout_success"] == pytest.approx([0.2, 0.65])
    assert s["rl"]["episodes_to_80pct"] == {0: None, 1: None}
    assert s["targeted"]["episodes_to_80pct"] == {0: None, 1: 16}


def test_arms_share_everything_but_the_feedback():
    configs = arms(RunConfig(), 0.5)
    assert list(configs) == [
        "rl",
        "kl λ=0.5",
        "advantage_weight",
        "advantage_weight frozen",
        "gated λ=0.5",
        "gated λ=0.5 frozen",
        "advantage_weight next_turn frozen",
        "kl λ=0.5 forward next_turn frozen",
    ]
    assert {c.loss.scope for name, c in configs.items() if "next_turn" not in name} == {"turn"}
    assert configs["advantage_weight next_turn frozen"].loss == replace(
        configs["advantage_weight frozen"].loss, scope="next_turn"
    )
    assert configs["kl λ=0.5 forward next_turn frozen"].loss == replace(
        configs["kl λ=0.5"].loss, scope="next_turn", estimator="forward_kl"
    )
    targeted = ("tool_not_found", "invalid_arguments")
    assert configs["rl"].loss.weights == {} and configs["rl"].loss.modes == {}
    assert not any(configs["rl"].loss.uses(c) for c in targeted)
    for name, c in configs.items():
        if name != "rl":
            mode = name.split(" ")[0]
            assert all(c.loss.uses(k) and c.loss.mode(k) == mode for k in targeted), name
        assert c.teacher.kind == ("frozen" if name.endswith("frozen") else "live"), name
    assert configs["advantage_weight"].loss.weights == {}  # no λ: no distillation term
    assert configs["gated λ=0.5"].loss.weights == dict.fromkeys(targeted, 0.5)
    assert configs["gated λ=0.5"].loss.estimator == "forward_kl"
    assert configs["gated λ=0.5 frozen"].teacher.refresh == "no_reward_drop"
    same = {
        (c.rl, c.toolgrid, c.eval, c.model, c.warm_start, c.feedback)
        == (
            RunConfig().rl,
            RunConfig().toolgrid,
            RunConfig().eval,
            RunConfig().model,
            RunConfig().warm_start,
            RunConfig().feedback,
        )
        for c in configs.values()
    }
    assert same == {True}


def _check(hint_gain: float, placebo_gain: float, success_gap: float = 0.0) -> dict:
    return {
        "hint": {"median_logp_gain_vs_none": hint_gain},
        "placebo": {"median_logp_gain_vs_none": placebo_gain},
        "success": {"gap": success_gap},
    }


def test_the_gap_check_predicts_a_benefit_only_when_the_gap_is_not_about_zero():
    assert not predicts_benefit(_check(0.04, -0.4, success_gap=0.01))
    assert predicts_benefit(_check(0.04, -0.4, success_gap=0.2))  # the continuation wins
    assert predicts_benefit(_check(2.0, 0.5, success_gap=0.0))  # the call is far likelier
    assert "predicts no gain" in predicted_benefit(_check(0.0, 0.0, success_gap=-0.02))
    assert "proportional to +0.200" in predicted_benefit(_check(0.0, 0.0, success_gap=0.2))


def test_reads_hints_needs_a_clear_gain_above_zero_and_above_the_placebo():
    assert reads_hints(_check(2.0, 0.5))
    assert not reads_hints(_check(-1.0, -3.0))  # less harm than the placebo is not reading
    assert not reads_hints(_check(0.5, 1.0))
    assert not reads_hints(_check(0.04, -0.4))  # a gain too small to teach anything


def test_contexts_differ_only_in_the_message_before_the_correct_call():
    _, heldout = split_registries(0, 10, 5, 3)
    rng = random.Random(0)
    task = sample_task(heldout[0], 2, rng)
    contexts, offset = first_call_contexts(task, rng)
    none, hint, placebo = (contexts[c] for c in ("none", "hint", "placebo"))
    assert hint[:2] == none[:2] == placebo[:2] and hint[-1] == none[-1] == placebo[-1]
    assert len(none) == 3 and len(hint) == len(placebo) == 4
    assert hint[2]["content"].startswith("Note: ") and "Available tools" in hint[2]["content"]
    call = none[-1]
    name = call["tool_calls"][0]["function"]["name"]
    assert hint[2]["content"].endswith(f"Did you mean {task.requests[0].function}={name}?")
    assert task.registry.function_of(name) == task.requests[0].function
    assert call["content"][offset:] == name


def test_turn_scores_in_one_batch_equal_a_full_forward_per_context():
    """The three contexts scored in one right-padded forward, projected at the scored
    positions only, give each context's log-prob and name-byte arg-max of a full forward."""
    from etude.recipes.toolgrid.policy import BytePolicy

    torch.manual_seed(0)
    policy = BytePolicy(ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64).config()).eval()
    _, heldout = split_registries(0, 10, 5, 3)
    rng = random.Random(0)
    contexts, offset = first_call_contexts(sample_task(heldout[0], 2, rng), rng)
    lists = list(contexts.values())
    got = turn_scores(policy, lists, offset)
    assert turn_scores(policy, lists, [offset] * len(lists)) == got  # one offset per list
    for messages, (logp, right) in zip(lists, got):
        t = tokenize(messages, ByteChat())
        with torch.no_grad():
            full = torch.log_softmax(policy(t.tokens[None, :-1])[0], -1)
        scored = (t.trainable[1:] & (t.turn[1:] == len(messages) - 1)).nonzero()[:, 0]
        target = t.tokens[1:]
        want = full[scored, target[scored]].sum()
        assert abs(logp - float(want)) < 1e-3
        name_pos = scored[offset]  # one byte per character
        assert right == bool(full[name_pos].argmax() == target[name_pos])


def test_experiment_refuses_to_start_when_the_gap_is_about_zero(tmp_path, capsys):
    base = _tiny(tmp_path)  # two warm-start steps: nothing to read a hint with
    with pytest.raises(GapCheckError, match="--ignore-hint-check") as err:
        run_experiment(base, [0], 0.5, tmp_path / "out", tmp_path / "runs", **SMALL_CHECK)
    assert "no better than the student" in str(err.value)
    assert "placebo after the mistakes" in str(err.value)  # where the gate decided
    check = json.loads((tmp_path / "out" / "gap_check.json").read_text())
    assert not predicts_benefit(check) and check["tasks"] == 30
    assert check["success"]["episodes"] == 6 and abs(check["success"]["gap"]) < 0.05
    assert check["after_mistake"]["episodes"] == 3
    assert "after the student's own mistakes" in check["prediction"]
    assert "predicts no gain" in capsys.readouterr().out  # printed before refusing
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "experiment.json",
        "gap_check.json",
        "warm_start.pt",
    ]
    assert not (tmp_path / "out" / "textual_feedback_modes.json").exists()


def _tiny(tmp_path) -> RunConfig:
    base = RunConfig(out_dir=str(tmp_path / "runs"))
    return replace(
        base,
        model=replace(base.model, dim=32, n_layers=1, dense_ffn_dim=64),
        warm_start=replace(base.warm_start, steps=2, batch=2),
        rl=replace(base.rl, steps=1, tasks_per_step=1, group_size=2, max_turn_tokens=8),
        eval=replace(base.eval, every=1, episodes=1),
        toolgrid=replace(base.toolgrid, train_registries=20, heldout_registries=5),
    )


@pytest.mark.slow
def test_experiment_runs_every_arm_and_resumes_from_its_logs(tmp_path):
    base, out, runs = _tiny(tmp_path), tmp_path / "out", tmp_path / "runs"
    first = run_experiment(
        base, [0], 0.5, out, runs, require_hint_reading=False, final_episodes=2, **SMALL_CHECK
    )
    assert list(first["arms"]) == list(arms(base, 0.5))
    # the final evaluation extends the in-run one: its first episode is the in-run final
    # evaluation's (same task, same sampling seed), and the warm start's is episode 0's
    final = first["final_evaluation"]
    assert final["episodes"] == 2 and list(final["arms"]) == [WARM_START, *arms(base, 0.5)]
    one = run_experiment(
        base, [0], 0.5, out, runs, require_hint_reading=False, final_episodes=1, **SMALL_CHECK
    )["final_evaluation"]["arms"]
    logs = {name: _read_log(runs / run_dir_name(name, 0) / "log.jsonl") for name in arms(base, 0.5)}
    for name, log in logs.items():
        for key in ("success", "error_rate", "calls_per_episode"):
            assert one[name][key][0] == log[-1][f"heldout_{key}"], (name, key)
            assert one[WARM_START][key][0] == log[0][f"heldout_{key}"], (name, key)
    assert (runs / run_dir_name("rl", 0) / "final_eval_2.json").is_file()
    assert first["budget"]["runs_loaded_from_logs"] == 0
    assert not first["budget"]["warm_start_reused"]
    warm = (runs / "warm_start.pt").read_bytes()

    redo = runs / run_dir_name("gated λ=0.5 frozen", 0)
    (redo / "log.jsonl").unlink()  # as if the run had been interrupted
    again = run_experiment(
        base, [0], 0.5, out, runs, require_hint_reading=False, final_episodes=0, **SMALL_CHECK
    )
    assert again["budget"]["warm_start_reused"] and (runs / "warm_start.pt").read_bytes() == warm
    assert again["budget"]["runs_loaded_from_logs"] == len(first["arms"]) - 1
    assert (redo / "log.jsonl").is_file()
    for name, arm in first["arms"].items():
        if name != "gated λ=0.5 frozen":
            assert again["arms"][name]["final_success"] == arm["final_success"]

    with pytest.raises(ValueError, match="different experiment"):
        run_experiment(base, [0], 2.0, out, runs, require_hint_reading=False, **SMALL_CHECK)


def test_an_experiment_record_from_before_a_new_field_or_arm_still_matches():
    identity = {
        "config": json.loads(json.dumps(asdict(RunConfig()))),
        "lambda": 0.5,
        "arms": ["rl", "kl λ=0.5"],
        "gap_check": [8, 4],
    }
    older = json.loads(json.dumps(identity))
    del older["config"]["loss"]["scope"]  # a field etude added later, at its default
    older["arms"] = ["rl"]  # arms added later run beside the old ones
    assert same_experiment(older, identity)
    changed = json.loads(json.dumps(identity))
    changed["config"]["loss"]["scope"] = "next_turn"  # a new field away from its default
    assert not same_experiment(older, changed)
    assert not same_experiment({**older, "lambda": 2.0}, identity)
    assert not same_experiment({**older, "gap_check": [8, 4, 100]}, identity)


def test_select_arms_keeps_rl_and_refuses_unknown_names():
    all_arms = arms(RunConfig(), 0.5)
    chosen = select_arms(all_arms, ["advantage_weight frozen", "kl λ=0.5"])
    assert list(chosen) == ["rl", "kl λ=0.5", "advantage_weight frozen"]  # in the arms' order
    assert chosen["kl λ=0.5"] is all_arms["kl λ=0.5"]
    assert select_arms(all_arms, None) is all_arms
    with pytest.raises(ValueError, match=r"unknown arm\(s\) \['kl'\]; the arms are: rl, kl"):
        select_arms(all_arms, ["kl"])


def test_a_cached_warm_start_is_trained_once_and_keyed_by_its_own_settings(tmp_path):
    base = _tiny(tmp_path)
    first, loaded = cached_warm_start(base, tmp_path / "ws")
    assert not loaded and len(list((tmp_path / "ws").iterdir())) == 1
    # RL, loss and evaluation settings do not change the warm start: the same file
    other_rl = replace(base, rl=replace(base.rl, lr=1e-5, optimizer="adamw"))
    assert warm_start_key(other_rl) == warm_start_key(base)
    again, loaded = cached_warm_start(other_rl, tmp_path / "ws")
    assert loaded
    assert all(
        torch.equal(a, b) for a, b in zip(first.state_dict().values(), again.state_dict().values())
    )
    longer = replace(base, warm_start=replace(base.warm_start, steps=3))
    assert warm_start_key(longer) != warm_start_key(base)
    assert warm_start_key(replace(base, seed=1)) != warm_start_key(base)
