"""The coding loop: reward screening and monitor hints (pure), a planted hack graded 1 by
the real grader and zeroed by the real monitor with a hint on its turn, the config's
errors, the policy update on SmolLM2 with Muon, and one full iteration with the local model
(`etude rl --config` dispatch included)."""

import ast
import json
from pathlib import Path

import pytest
import torch
from test_coding_env import ScriptedBackend, assistant, call, example_tasks

from etude.envs.coding import Budget, CodingEnv, EnvSettings, run_episode
from etude.envs.rollouts import Job
from etude.monitor import Finding
from etude.recipes.coding.config import CodingConfig, load_config, parse_config
from etude.recipes.coding.loop import (
    grade_episode,
    policy_step,
    reward_spread,
    screen_episode,
    trainable_parameters,
    update_settings,
)
from etude.recipes.coding.reward import (
    MONITOR_CATEGORY,
    finding_hint,
    hint_turn,
    monitor_hints,
    screen,
)
from etude.rl.feedback import DETECTORS
from etude.rl.feedback.hints import validate_hint
from etude.rl.trajectory import Trajectory

ROOT = Path(__file__).resolve().parents[1]


def finding(severity: str, index: int | None) -> Finding:
    return Finding(
        category="vcs_history",
        severity=severity,
        confidence=0.9,
        message_index=index,
        evidence="git log --all -p",
        detector="rules",
        rule="log_all_refs",
        explanation="walks every ref, not just the current branch",
    )


MESSAGES = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u"},
    {"role": "assistant", "content": "a"},
    {"role": "tool", "tool_call_id": "c", "content": "out"},
    {"role": "assistant", "content": "b"},
]


def test_screen_zeroes_at_or_above_the_severity():
    assert screen(0.75, [finding("high", 2)], "high").value == 0.0
    assert screen(0.75, [finding("critical", 2)], "high").value == 0.0
    kept = screen(0.75, [finding("medium", 2)], "high")
    assert kept.value == 0.75 and kept.graded == 0.75 and kept.zeroed_by == ()
    assert screen(0.75, [finding("medium", 2)], "medium").zeroed_by[0].rule == "log_all_refs"
    with pytest.raises(ValueError, match="unknown severity"):
        screen(1.0, [], "severe")


def test_finding_becomes_a_hint_on_its_turn():
    assert hint_turn(MESSAGES, 3) == 2  # a tool output: the call before it
    assert hint_turn(MESSAGES, 4) == 4
    assert hint_turn(MESSAGES, None) == 4  # the patch: the last turn
    assert hint_turn(MESSAGES[:2], None) is None
    hint = finding_hint(MESSAGES, finding("high", 3))
    assert hint.turn == 2 and hint.category == MONITOR_CATEGORY
    assert "vcs history" in hint.text and "walks every ref" in hint.text
    validate_hint(Trajectory(MESSAGES), hint)
    reward = screen(
        1.0, [finding("high", 3), finding("critical", 2), finding("high", None)], "high"
    )
    hints = monitor_hints(MESSAGES, reward)
    assert [h.turn for h in hints] == [2, 4]


def test_reward_spread_counts_the_groups_whose_rewards_differ():
    rewards = {0: [1.0, 1.0, 1.0], 1: [0.0, 0.5, 0.0], 2: [0.0, 0.0, 0.0], 3: [0.25]}
    records = [{"group": g, "reward": r} for g, rs in rewards.items() for r in rs]
    assert reward_spread(records) == {"groups": 4, "groups_with_spread": 1}
    assert reward_spread([]) == {"groups": 0, "groups_with_spread": 0}


def rewrite(source: str) -> str:
    """The reference in other words: docstrings and comments dropped, private names
    renamed (writing the reference verbatim is itself a finding: verbatim recovery)."""
    tree = ast.parse(source)
    private = {
        n.id if isinstance(n, ast.Name) else n.name
        for n in ast.walk(tree)
        if (isinstance(n, ast.Name) and n.id.startswith("_") and not n.id.startswith("__"))
        or (isinstance(n, ast.FunctionDef) and n.name.startswith("_") and "__" not in n.name)
    }
    names = {old: f"_h{i}" for i, old in enumerate(sorted(private))}
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body[0].value.value = "."
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
        if isinstance(node, ast.FunctionDef) and node.name in names:
            node.name = names[node.name]
    return ast.unparse(tree) + "\n"


@pytest.mark.slow
def test_planted_hack_is_graded_then_zeroed_with_a_hint(tmp_path):
    """The policy mines git history, then writes the reference solution: the grader gives
    it full reward, the monitor zeroes it and hints at the git call's turn. The same
    solution without the git call keeps its reward."""
    task_dir = example_tasks()[0]
    reference = task_dir / "hidden" / "reference"
    writes = [
        call("write_file", path=p.relative_to(reference).as_posix(), content=rewrite(p.read_text()))
        for p in sorted(reference.rglob("*.py"))
    ]
    detectors = [DETECTORS[d]() for d in ("tool_not_found", "invalid_arguments")]
    results = {}
    for name, turns in {
        "hack": [assistant(call("run_command", command="git log --all -p | head -50"))],
        "clean": [],
    }.items():
        turns = [*turns, assistant(*writes), assistant(content="Implemented.")]
        settings = EnvSettings(python_env=False)
        env = CodingEnv.for_task(task_dir, tmp_path / name, settings)
        episode = run_episode(env, ScriptedBackend(turns), Budget(max_turns=5))
        graded = grade_episode(task_dir, episode, "fraction", 300)
        job = Job(task_dir, tmp_path / name, 0)
        results[name] = (graded, *screen_episode(job, episode, graded, "high", detectors))
    graded, record, traj, hints = results["hack"]
    assert graded["reward"] == 1.0 and graded["binary"] == 1
    assert record["graded_reward"] == 1.0 and record["reward"] == 0.0 and traj.reward == 0.0
    assert "log_all_refs" in record["zeroed_by"]
    (hint,) = [h for h in hints if h.source == "monitor:log_all_refs"]
    assert hint.turn == 2 and hint.category == MONITOR_CATEGORY
    assert traj.messages[2]["tool_calls"][0]["function"]["name"] == "run_command"
    assert record["hints"][0]["source"] == "monitor:log_all_refs"
    graded, record, traj, hints = results["clean"]
    assert graded["reward"] == 1.0 and record["reward"] == 1.0 and record["zeroed_by"] == []
    assert not [h for h in hints if h.category == MONITOR_CATEGORY]


def test_config_is_parsed_strictly(tmp_path):
    cfg = load_config(ROOT / "configs" / "coding-smol.toml")
    assert isinstance(cfg, CodingConfig) and cfg.reward.hack_severity == "medium"
    with pytest.raises(ValueError, match="unknown key"):
        parse_config({"env": "coding", "rollout": {"concurrency": 2, "turbo": True}})
    with pytest.raises(ValueError, match="hack_severity"):
        parse_config({"env": "coding", "reward": {"hack_severity": "severe"}})
    with pytest.raises(ValueError, match="must be int"):
        parse_config({"env": "coding", "iterations": "two"})
    with pytest.raises(ValueError, match="unknown detector"):
        parse_config({"env": "coding", "feedback": {"detectors": ["vibes"]}})
    with pytest.raises(ValueError, match=r"model\.device must be 'cpu' or 'cuda'"):
        parse_config({"env": "coding", "model": {"device": "gpu"}})
    with pytest.raises(ValueError, match="off_policy = true to accept off-policy"):
        parse_config({"env": "coding", "model": {"backend": "openai"}})
    synced = parse_config({"env": "coding", "model": {"backend": "openai", "serve": "llama_cpp"}})
    assert synced.model.serve == "llama_cpp"
    assert parse_config({"env": "coding", "model": {"backend": "openai", "off_policy": True}})
    with pytest.raises(ValueError, match=r"loss\.ref_kl must be >= 0"):
        parse_config({"env": "coding", "loss": {"ref_kl": -0.1}})
    with pytest.raises(ValueError, match=r"loss\.passes must be at least 1"):
        parse_config({"env": "coding", "loss": {"passes": 0}})
    with pytest.raises(ValueError, match=r"loss\.negative_weight must be >= 0"):
        parse_config({"env": "coding", "loss": {"negative_weight": -1}})
    with pytest.raises(
        ValueError, match=r"loss\.aggregation must be one of \('token', 'sequence'\)"
    ):
        parse_config({"env": "coding", "loss": {"aggregation": "mean"}})


def test_the_loss_section_reaches_the_update():
    """`loss.passes` (PPO epochs), `loss.aggregation`, `loss.negative_weight` and
    `loss.ref_kl` are the update's, as set."""
    default = update_settings(load_config(ROOT / "configs" / "coding-smol.toml"))
    assert (default.passes, default.aggregation, default.negative_weight, default.ref_kl) == (
        1,
        "token",
        1.0,
        0.0,
    )
    assert default.micro_batch == 1
    loss = {"passes": 3, "aggregation": "sequence", "negative_weight": 0.25, "ref_kl": 0.05}
    got = update_settings(parse_config({"env": "coding", "loss": loss}))
    assert (got.passes, got.aggregation, got.negative_weight, got.ref_kl) == (
        3,
        "sequence",
        0.25,
        0.05,
    )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*re-tokenized:UserWarning")  # hand-written turns
def test_policy_update_moves_smollm2_with_muon(smollm2):
    """Rewards that differ within a group and a monitor hint: the step reports the hint's KL
    and changes the weights; then a batch with no signal: the loop's `policy_step` leaves
    the weights as they are, where a Muon step would still move them."""
    from etude.optim import Muon
    from etude.recipes.device import newton_schulz_dtype
    from etude.rl.feedback.hints import Hint
    from etude.rl.policy import HFPolicy
    from etude.rl.trajectory import HFChat
    from etude.rl.update import StepSettings, rl_update

    model, tok = smollm2
    msgs = [
        {"role": "user", "content": "Fix slug.py"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("run_command", command="git log --all -p")],
        },
        {"role": "tool", "tool_call_id": "x", "content": "commit abc"},
        {"role": "assistant", "content": "Done."},
    ]
    good = [msgs[0], {"role": "assistant", "content": "I wrote slugify."}]
    trajs = [Trajectory(msgs, reward=0.0), Trajectory(good, reward=1.0)]
    hint = Hint(1, "Note: do not mine git history.", MONITOR_CATEGORY, "monitor:log_all_refs")
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    params = trainable_parameters(model, 2)  # a full-model Muon step takes a minute here
    optimizer = Muon(
        params, lr=1e-3, adamw_lr=1e-5, weight_decay=0.0, ns_dtype=newton_schulz_dtype("cpu")
    )
    metrics = rl_update(
        HFPolicy(model),
        optimizer,
        HFChat(tok),
        trajs,
        [0, 0],
        [[hint], []],
        StepSettings(
            weights={MONITOR_CATEGORY: 1.0}, modes={MONITOR_CATEGORY: "kl"}, micro_batch=1
        ),
        retokenize=True,  # hand-written turns: no token ids
    )
    assert metrics["trajectories"] == 2 and metrics["hints_used"] == 1, metrics["errors"]
    assert metrics[f"kl/{MONITOR_CATEGORY}"] > 0 and metrics["rl_loss"] != 0
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert "model.layers.29.self_attn.q_proj.weight" in changed
    assert "model.layers.28.mlp.down_proj.weight" in changed
    assert not any(n.startswith("model.layers.0.") for n in changed)

    # Equal rewards and no hint: no signal. The loop takes no step; the update itself would
    # still move the weights, at full size along the momentum of the step above.
    equal = [(Trajectory(good, reward=1.0), 0, []), (Trajectory(good, reward=1.0), 0, [])]
    plain = StepSettings(micro_batch=1)
    after_first = {n: p.detach().clone() for n, p in model.named_parameters()}
    skipped = policy_step(model, optimizer, tok, equal, plain)
    assert skipped == {"skipped": "no signal", "errors": [], "trajectories": 0}
    assert all(torch.equal(p, after_first[n]) for n, p in model.named_parameters())
    trajs, groups, hints = map(list, zip(*equal))
    rl_update(HFPolicy(model), optimizer, HFChat(tok), trajs, groups, hints, plain, retokenize=True)
    assert not torch.equal(
        model.get_parameter("model.layers.29.self_attn.q_proj.weight"),
        after_first["model.layers.29.self_attn.q_proj.weight"],
    )
    with torch.no_grad():  # restore: the module fixture is shared
        for n, p in model.named_parameters():
            p.copy_(before[n])
            p.requires_grad_(True)


def test_rl_config_dispatch_reaches_the_coding_loop(tmp_path, capsys):
    """`etude rl --config` with env = "coding" parses the coding config: a bad one, or an
    out_dir with a checkpoint but no --resume, is a clear error and exit status 2, before
    any model is loaded or file written."""
    from etude.cli import main

    config = tmp_path / "bad.toml"
    config.write_text(f'env = "coding"\nout_dir = "{tmp_path / "run"}"\n[rollout]\nturbo = 1\n')
    assert main(["rl", "--config", str(config)]) == 2
    assert "unknown key(s) rollout.turbo" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()

    # a run whose out_dir holds a checkpoint needs --resume; --resume is for env = "coding"
    run = tmp_path / "ckpt-run"
    (run / "checkpoint").mkdir(parents=True)
    (run / "checkpoint" / "state.json").write_text('{"iteration": 3}')
    config.write_text(f'env = "coding"\nout_dir = "{run}"\n')
    assert main(["rl", "--config", str(config)]) == 2
    assert "holds a checkpoint of iteration 3: pass --resume" in capsys.readouterr().err
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint"]  # nothing written
    config.write_text('env = "toolgrid"\n')
    assert main(["rl", "--config", str(config), "--resume"]) == 2
    assert "--resume is supported for env = 'coding' only" in capsys.readouterr().err


def _one_iteration(smollm2, run, model: dict, rollout: dict, loss: dict | None = None) -> dict:
    """Train one loop iteration of the shared SmolLM2 on the first example task, writing to
    `run`; the shared model's weights and flags are restored afterwards. Returns the
    iteration's summary."""
    from etude.recipes.coding.loop import train

    cfg = parse_config(
        {
            "env": "coding",
            "out_dir": str(run),
            "iterations": 1,
            "tasks": {"tasks_dir": str(example_tasks()[0].parent)},
            "model": model,
            "rollout": {"tasks_per_iteration": 1, "python_env": False, **rollout},
            "loss": loss or {},
            "optim": {"train_layers": 1},
        }
    )
    weights, _ = smollm2
    before = {n: p.detach().clone() for n, p in weights.named_parameters()}
    try:
        (summary,) = train(cfg, policy=smollm2)
    finally:  # the session's model is shared: restore it
        with torch.no_grad():
            for n, p in weights.named_parameters():
                p.copy_(before[n])
                p.requires_grad_(True)
    return summary


@pytest.mark.slow
def test_one_loop_iteration_with_the_local_model(smollm2, tmp_path, monkeypatch):
    """One iteration: rollouts of SmolLM2 in the sandbox, grading, monitor, hints, update
    (with `loss.ref_kl`: its one pass sees the policy equal to its start, so the term is 0;
    `has_signal` patched, so that it runs although every episode may score 0)
    and checkpoint; every file the iteration writes."""
    from etude.recipes.coding import loop

    monkeypatch.setattr(loop, "has_signal", lambda *args: True)
    run = tmp_path / "run"
    returned = _one_iteration(
        smollm2,
        run,
        {"max_new_tokens": 48},
        {"group_size": 2, "max_turns": 2, "max_tokens": 96},
        {"ref_kl": 0.1},
    )
    (summary,) = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert summary == returned
    assert summary["iteration"] == 1 and summary["episodes"] == 2
    assert set(summary["seconds"]) == {"rollout", "grading", "monitoring", "training", "checkpoint"}
    assert summary["trained_trajectories"] + len(summary["train_errors"]) >= 1
    if summary["trained_trajectories"]:
        assert summary["ref_kl"] == pytest.approx(0.0, abs=1e-6)
    rollouts = (run / "iter_0001" / "rollouts.jsonl").read_text().splitlines()
    graded = [
        json.loads(line) for line in (run / "iter_0001" / "graded.jsonl").read_text().splitlines()
    ]
    assert len(rollouts) == 2 and len(graded) == 2
    for record in graded:
        assert record["end"] in ("answer", "turn_budget", "token_budget"), record["error"]
        assert record["messages"][2]["role"] == "assistant" and record["tokens"] > 0
        assert {"reward", "graded_reward", "findings", "hints", "grade"} <= set(record)
    assert all(record["policy_version"] == 0 for record in graded)
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert state["iteration"] == 1 and state["metrics"]["iteration"] == 1
    assert (run / "checkpoint" / "optimizer.pt").is_file()
    from transformers import AutoModelForCausalLM

    reloaded = AutoModelForCausalLM.from_pretrained(run / "checkpoint")
    assert reloaded.config.num_hidden_layers == 30
    assert not (run / "iter_0001" / "episodes" / "0-0").exists()  # workspaces cleaned up


@pytest.mark.slow
def test_one_loop_iteration_served_by_llama_cpp_stays_on_policy(smollm2, tmp_path):
    """With `serve = "llama_cpp"` the loop exports the policy, serves it, rolls out through
    the OpenAI-compatible backend, and after the update serves the new weights: rollouts
    record version 0, the checkpoint's iteration is 1 and the server was re-synced to it."""
    summary = _one_iteration(
        smollm2,
        tmp_path / "run",
        {"backend": "openai", "serve": "llama_cpp", "max_new_tokens": 16},
        {"group_size": 1, "max_turns": 1, "max_tokens": 64},
    )
    run = tmp_path / "run"
    graded = [
        json.loads(line) for line in (run / "iter_0001" / "graded.jsonl").read_text().splitlines()
    ]
    assert len(graded) == 1 and graded[0]["error"] is None, graded[0].get("error")
    assert graded[0]["policy_version"] == 0 and graded[0]["tokens"] > 0
    assert "sync" in summary["seconds"]
    # The server now holds the export of iteration 1's update; version 0's file is gone.
    assert sorted(p.name for p in (run / "served").glob("*.gguf")) == ["policy-0001.gguf"]


def test_the_reference_of_ref_kl_is_the_weights_the_run_started_from(tmp_path):
    """`loss.ref_kl`'s frozen model: none when off; a copy of the policy on a new run (the
    policy's later steps leave it); on a resume, `model.init`'s weights, not the policy's
    (which at that point are the pretrained ones, about to be replaced by the checkpoint)."""
    from hf_tiny import build_hf
    from safetensors.torch import save_model

    from etude.recipes.coding.loop import start_reference

    model, init = build_hf("llama", seed=0), build_hf("llama", seed=1)
    save_model(init, str(tmp_path / "model.safetensors"))
    on = {"env": "coding", "loss": {"ref_kl": 0.1}, "model": {"init": str(tmp_path)}}
    assert start_reference(parse_config({"env": "coding"}), model, resumed=False) is None

    fresh = start_reference(parse_config(on), model, resumed=False)
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)  # the policy moves on; the reference stays at the start
    for n, p in fresh.named_parameters():
        assert not p.requires_grad and torch.equal(p, start[n]), n

    resumed = start_reference(parse_config(on), model, resumed=True)
    for (n, p), q in zip(resumed.named_parameters(), init.parameters(), strict=True):
        assert torch.equal(p, q), n
