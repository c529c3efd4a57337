"""The experiment's statistics: paired bootstrap intervals, episodes to a success level, and
the per-arm summary."""

from __future__ import annotations

import pytest

from etude.rl.experiment import arms, episodes_to_reach, paired_bootstrap, summarize
from etude.rl.toolgrid_run import RunConfig


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
    configs = arms(RunConfig(), (0.5, 2.0))
    assert list(configs) == [
        "rl",
        "targeted λ=0.5",
        "targeted λ=2.0",
        "whole-trajectory λ=0.5",
        "placebo λ=0.5",
    ]
    assert configs["rl"].loss.weights == {}
    assert configs["whole-trajectory λ=0.5"].loss.scope == "trajectory"
    assert configs["placebo λ=0.5"].feedback.placebo
    assert (
        len(
            {
                (c.rl, c.toolgrid, c.eval, c.model)
                == (RunConfig().rl, RunConfig().toolgrid, RunConfig().eval, RunConfig().model)
                for c in configs.values()
            }
        )
        == 1
    )
