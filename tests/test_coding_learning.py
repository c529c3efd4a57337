"""The coding loop as a learner: a run started from a checkpoint's weights (`model.init`,
fresh optimizer, iteration 0; refused with a clear message when the directory is not such a
checkpoint), held-out tasks evaluated before the first update and after each, the
per-iteration figures (tool-call rate, tool errors by kind, turns, tokens, ratio
statistics, time split, episodes per minute) and the run's HTML report with its curves.

The policy is the tiny randomly initialized Llama of test_coding_resume (SmolLM2's
tokenizer and chat template; the loop, sandbox, grader and monitor are the real ones)."""

import base64
import json
import re

import pytest
import torch
from test_coding_resume import config, muon_after_steps, tiny_model, weights

import etude.recipes.coding.loop as loop
from etude.envs.coding import TOOLS
from etude.recipes.coding.checkpoint import CheckpointError, reconcile_metrics, save_checkpoint
from etude.recipes.coding.config import parse_config
from etude.recipes.coding.report import write_report
from etude.recipes.coding.tool_use import call_error, first_turn_calls_a_tool, tool_use


def sft_checkpoint(tokenizer, run, seed: int = 3):
    """A checkpoint in the loop's format of a tiny model after two optimizer steps (what
    `etude sft` leaves); returns (its directory, the model)."""
    model = tiny_model(tokenizer, seed=seed)
    optimizer = muon_after_steps(model, 2)
    path = run / "checkpoint"
    save_checkpoint(path, model, tokenizer, optimizer, config(run, 1, tasks=False), 7, {})
    return path, model


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_warm_start_and_heldout_evaluation(smollm2_tokenizer, tmp_path, monkeypatch):
    """From a checkpoint's weights with a fresh optimizer: held-out tasks are evaluated on
    those weights as iteration 0, then iteration 1 trains and evaluates them again on the
    updated weights; the summaries carry the held-out, tool-use, ratio and time figures,
    report.html draws them, and a resume keeps iteration 0 and adds iteration 2."""
    tok = smollm2_tokenizer
    path, source = sft_checkpoint(tok, tmp_path / "sft")
    policy = tiny_model(tok, seed=0)
    seen = {"evaluate": []}
    real_iteration, real_evaluate = loop.run_iteration, loop.evaluate

    def spy_iteration(it, cfg, tasks, model, tokenizer, optimizer, *args, **kwargs):
        seen[it] = (weights(model), len(optimizer.state))
        return real_iteration(it, cfg, tasks, model, tokenizer, optimizer, *args, **kwargs)

    def spy_evaluate(it_dir, *args):
        seen["evaluate"].append((it_dir.name, weights(policy)))
        return real_evaluate(it_dir, *args)

    def moving_update(*args, **kwargs):  # all rewards 0 here: make the update visible
        metrics = real_update(*args, **kwargs)
        with torch.no_grad():
            policy.model.norm.weight.add_(1.0)
        return metrics

    real_update = loop.rl_update
    monkeypatch.setattr(loop, "run_iteration", spy_iteration)
    monkeypatch.setattr(loop, "evaluate", spy_evaluate)
    monkeypatch.setattr(loop, "rl_update", moving_update)
    monkeypatch.setattr(loop, "has_signal", lambda *args: True)  # the update runs
    run = tmp_path / "run"

    def cfg(iterations: int):
        made = config(run, iterations, model={"init": str(path)})
        made.tasks.heldout_dir = made.tasks.tasks_dir  # the mechanism; the split is elsewhere
        made.rollout.group_size = 1
        return made

    summaries = loop.train(cfg(1), policy=(policy, tok))

    start, optimizer_entries = seen[1]
    for name, value in weights(source).items():
        assert torch.equal(start[name], value), name  # the checkpoint's, not seed 0's
    assert optimizer_entries == 0
    assert [name for name, _ in seen["evaluate"]] == ["iter_0000", "iter_0001"]
    after_update = weights(policy)
    for name, value in seen["evaluate"][0][1].items():
        assert torch.equal(value, start[name]), name  # iteration 0: the warm start
    for name, value in seen["evaluate"][1][1].items():
        assert torch.equal(value, after_update[name]), name  # iteration 1: after its update
    assert not torch.equal(after_update["model.norm.weight"], start["model.norm.weight"])

    zero, first = lines(run / "metrics.jsonl")
    assert summaries == [zero, first]
    assert zero["iteration"] == 0 and zero["policy_version"] == 0 and "episodes" not in zero
    assert first["iteration"] == 1 and first["policy_version"] == 0
    for summary, it_dir in ((zero, "iter_0000"), (first, "iter_0001")):
        graded = lines(run / it_dir / "heldout" / "graded.jsonl")
        assert summary["heldout_episodes"] == len(graded) == 1
        assert summary["heldout_rewards"] == [r["reward"] for r in graded]
        assert summary["heldout_reward"] == graded[0]["reward"]
        assert summary["heldout_tool_call_rate"] == first_turn_calls_a_tool(graded[0])
        assert set(summary["heldout_tool_errors"]) == set(tool_use([])["tool_errors"])
        assert all(h["category"] == "monitor" for r in graded for h in r["hints"])
        assert summary["seconds"]["heldout"] > 0
    graded = lines(run / "iter_0001" / "graded.jsonl")
    assert first["tool_call_rate"] == tool_use(graded)["tool_call_rate"]
    assert first["turns_mean"] == sum(r["turns"] for r in graded) / len(graded)
    assert first["tokens_mean"] == sum(r["tokens"] for r in graded) / len(graded) > 0
    ratios = first["ratios"]  # on-policy, one pass: π/π_sampler is 1 up to rounding
    assert ratios["sampled_tokens"] > 0
    assert ratios["ratio_min"] <= ratios["ratio_mean"] <= ratios["ratio_max"]
    assert abs(ratios["ratio_mean"] - 1) < 1e-3 and ratios["clip_frac"] == 0.0
    s = first["seconds"]
    assert {"rollout", "grading", "monitoring", "training", "heldout", "checkpoint"} == set(s)
    busy = s["rollout"] + s["grading"] + s["monitoring"] + s["training"]
    assert first["episodes_per_minute"] == pytest.approx(60 / busy, rel=0.05)

    report = (run / "report.html").read_text()
    images = re.findall(r"src='data:image/png;base64,([^']+)'", report)
    assert len(images) >= 5
    assert all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    assert "<h2>iteration 0</h2>" in report and "<h2>iteration 1</h2>" in report
    assert not (run / "report.html.tmp").exists()

    more = loop.train(cfg(2), policy=(tiny_model(tok), tok), resume=True)
    assert [m["iteration"] for m in more] == [2] and "heldout_reward" in more[0]
    assert [m["iteration"] for m in lines(run / "metrics.jsonl")] == [0, 1, 2]
    assert "<h2>iteration 2</h2>" in (run / "report.html").read_text()


@pytest.mark.slow
def test_heldout_every_evaluates_every_kth_iteration_and_the_last(
    smollm2_tokenizer, tmp_path, monkeypatch
):
    """With tasks.heldout_every = 2 over 3 iterations: the warm start, iteration 2 and the
    last (3) are evaluated; iteration 1's summary has no held-out figures and the report
    still draws; a resume may change the setting (it trains nothing differently)."""
    tok = smollm2_tokenizer
    evaluated = []
    real_evaluate = loop.evaluate

    def spy_evaluate(it_dir, *args):
        evaluated.append(it_dir.name)
        return real_evaluate(it_dir, *args)

    monkeypatch.setattr(loop, "evaluate", spy_evaluate)
    run = tmp_path / "run"

    def cfg(iterations: int, every: int):
        made = config(run, iterations, rollout={"group_size": 1})
        made.tasks.heldout_dir = made.tasks.tasks_dir
        made.tasks.heldout_every = every
        return made

    loop.train(cfg(3, 2), policy=(tiny_model(tok), tok))
    assert evaluated == ["iter_0000", "iter_0002", "iter_0003"]
    summaries = lines(run / "metrics.jsonl")
    assert [s["iteration"] for s in summaries] == [0, 1, 2, 3]
    assert [("heldout_reward" in s) for s in summaries] == [True, False, True, True]
    assert "heldout" not in summaries[1]["seconds"]
    assert not (run / "iter_0001" / "heldout").exists()
    assert "<h2>iteration 3</h2>" in (run / "report.html").read_text()

    # evaluating every iteration from here on is a resumable change
    loop.train(cfg(4, 1), policy=(tiny_model(tok), tok), resume=True)
    assert evaluated[-1] == "iter_0004"
    with pytest.raises(ValueError, match="heldout_every must be at least 1"):
        parse_config({"env": "coding", "tasks": {"heldout_every": 0}})


def test_warm_start_from_what_is_not_a_checkpoint_is_refused(smollm2_tokenizer, tmp_path, capsys):
    """A missing directory, a run's out_dir (naming the checkpoint inside it) and weights of
    another architecture, and model.device = "cuda" where torch sees none, are each a clear
    error before anything is written."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from etude.cli import main

    tok = smollm2_tokenizer
    path, _ = sft_checkpoint(tok, tmp_path / "sft")
    run = tmp_path / "run"
    cases = {
        str(tmp_path / "nowhere"): "is not a directory",
        str(tmp_path / "sft"): f"not a checkpoint .*no state.json or model.safetensors.*{path}",
        str(path): "weights do not fit the policy",
    }
    other = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
        )
    )
    for init, message in cases.items():
        with pytest.raises(CheckpointError, match=message):
            loop.train(config(run, 1, model={"init": init}), policy=(other, tok))
        assert not run.exists()
    toml = tmp_path / "bad-init.toml"
    toml.write_text(f'env = "coding"\nout_dir = "{run}"\n[model]\ninit = "{tmp_path / "sft"}"\n')
    assert main(["rl", "--config", str(toml)]) == 2
    assert "its checkpoint is" in capsys.readouterr().err
    assert not run.exists()
    if not torch.cuda.is_available():  # the CPU side of model.device = "cuda"
        with pytest.raises(ValueError, match=r"model\.device = 'cuda' but torch sees no CUDA"):
            loop.train(config(run, 1, model={"device": "cuda"}), policy=(other, tok))
        assert not run.exists()


TOOL_NAMES = [t["function"]["name"] for t in TOOLS]


def episode(*turns) -> dict:
    """A trajectory record from (assistant message, tool replies) pairs."""
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    for k, (calls, replies) in enumerate(turns):
        tool_calls = [
            {"id": f"c{k}-{j}", "type": "function", "function": {"name": n, "arguments": a}}
            for j, (n, a) in enumerate(calls)
        ]
        messages.append({"role": "assistant", "content": "", "tool_calls": tool_calls or None})
        for j, reply in enumerate(replies):
            messages.append({"role": "tool", "tool_call_id": f"c{k}-{j}", "content": reply})
    return {"messages": messages, "tools": TOOLS}


def test_tool_errors_by_kind_and_first_turn_rate():
    """Each reply wording of the environment maps to its kind; the rate counts first turns
    whose every call names an offered tool with arguments it takes."""
    cases = {
        ("grep_repo", "Tool not found: grep_repo"): "tool_not_found",
        ("unparsed_tool_call", "Invalid arguments: the tool call is not valid JSON: '{'"): (
            "invalid_arguments"
        ),
        ("read_file", "Invalid arguments for read_file: missing argument 'path'"): (
            "invalid_arguments"
        ),
        ("run_command", "FAILED test_x\n[exit code 1]"): "command_failed",
        ("run_command", "\n[killed: the command ran past the 30 s limit]"): "command_timeout",
        ("run_command", "lots\n[killed: the command printed more than the output limit]"): (
            "command_failed"
        ),
        ("read_file", "Error: no such file: nope.py"): "tool_failed",
        ("run_command", "1 passed\n[exit code 0]"): None,
        ("list_files", "src/a.py"): None,
    }
    for (name, reply), kind in cases.items():
        assert call_error(name, reply, TOOL_NAMES) == kind, (name, reply)

    good = episode(
        ([("list_files", "{}")], ["src/a.py"]),
        ([("run_command", '{"command": "pytest"}')], ["F\n[exit code 1]"]),
    )
    wrong_name = episode(([("grep_repo", "{}"), ("list_files", "{}")], ["Tool not found", "a"]))
    bad_args = episode(([("read_file", "{}")], ["Invalid arguments for read_file: missing"]))
    prose = episode(([], []), ([("list_files", "{}")], ["a"]))
    silent = {"messages": [{"role": "system", "content": "s"}], "tools": TOOLS}
    assert [first_turn_calls_a_tool(r) for r in (good, wrong_name, bad_args, prose, silent)] == [
        True,
        False,
        False,
        False,
        None,
    ]
    figures = tool_use([good, wrong_name, bad_args, prose, silent])
    assert figures["tool_call_rate"] == 1 / 4
    assert figures["tool_errors"] == {
        "tool_not_found": 1,
        "invalid_arguments": 1,
        "command_failed": 1,
        "command_timeout": 0,
        "tool_failed": 0,
    }
    assert tool_use([silent])["tool_call_rate"] is None


def test_report_is_written_atomically_with_curves(tmp_path):
    """From metrics.jsonl alone: a PNG per chart with data, a table per iteration; a
    leftover temporary file of an interrupted write is replaced, never read."""
    summaries = [
        {"iteration": 0, "heldout_reward": 0.1, "heldout_tool_call_rate": 0.5, "seconds": {}},
        {
            "iteration": 1,
            "reward_mean": 0.25,
            "heldout_reward": 0.3,
            "tool_call_rate": 0.75,
            "heldout_tool_call_rate": 1.0,
            "tool_errors": {"tool_not_found": 2, "invalid_arguments": 1},
            "turns_mean": 3.0,
            "tokens_mean": 120.0,
            "ratios": {"ratio_mean": 1.0, "ratio_min": 0.9, "ratio_max": 1.2, "clip_frac": 0.1},
            "seconds": {"rollout": 60.0, "training": 40.0},
        },
    ]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(s) + "\n" for s in summaries))
    (tmp_path / "report.html.tmp").write_text("half a report")
    path = write_report(tmp_path)
    text = path.read_text()
    alts = re.findall(r"<img alt='([^']+)' src='data:image/png;base64,", text)
    assert alts == [
        "reward",
        "first turns calling a tool",
        "tool errors (train)",
        "turns and tokens (train, per episode)",
        "importance ratio π/π_sampler",
        "seconds per phase",
    ]
    assert text.count("<table>") == 2 and "tool_not_found 2" in text
    assert not (tmp_path / "report.html.tmp").exists()


def test_a_new_run_keeps_no_metrics_line(tmp_path):
    """A run started afresh (no checkpoint) runs iteration 0 again: every earlier line,
    iteration 0's included, moves to metrics.discarded.jsonl."""
    old = [json.dumps({"iteration": i}) for i in (0, 1)]
    (tmp_path / "metrics.jsonl").write_text("\n".join(old) + "\n")
    reconcile_metrics(tmp_path, None, None)
    assert (tmp_path / "metrics.jsonl").read_text() == ""
    assert (tmp_path / "metrics.discarded.jsonl").read_text().splitlines() == old
    (tmp_path / "metrics.jsonl").write_text("\n".join(old) + "\n")
    reconcile_metrics(tmp_path, 1, {"iteration": 1})  # a resume keeps iteration 0
    assert [line["iteration"] for line in lines(tmp_path / "metrics.jsonl")] == [0, 1]
