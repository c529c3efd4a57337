"""Checkpoint and resume of the coding loop: the optimizer state round-trips exactly, an
interrupted checkpoint write never looks valid, metrics.jsonl is reconciled with the
checkpoint, and a run killed during iteration 2 and resumed ends where an uninterrupted run
ends (same weights, same log lines), without redoing finished iterations.

The policy is a tiny randomly initialized Llama with SmolLM2's tokenizer and chat template
(the loop, sandbox, grader, monitor, Muon and checkpoint code are the real ones), so an
iteration takes a second or two."""

import json
import os
from pathlib import Path

import pytest
import torch
from test_coding_env import example_tasks

import etude.recipes.coding.loop as loop
from etude.optim import Muon
from etude.recipes.coding.checkpoint import (
    CheckpointError,
    check_resumable,
    find_checkpoint,
    load_checkpoint,
    reconcile_metrics,
    save_checkpoint,
)
from etude.recipes.coding.config import parse_config


def tiny_model(tokenizer, seed: int = 0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
        max_position_embeddings=4096,  # the loop's default model.max_context
    )
    return LlamaForCausalLM(config).eval()


def config(out: Path, iterations: int, tasks: bool = True, **overrides):
    data = {
        "env": "coding",
        "out_dir": str(out),
        "iterations": iterations,
        "tasks": {"tasks_dir": str(example_tasks()[0].parent) if tasks else str(out)},
        "model": {"max_new_tokens": 12, "temperature": 1.0},
        "rollout": {
            "tasks_per_iteration": 1,
            "group_size": 2,
            "concurrency": 1,  # one sampling thread: the run is reproducible from its seed
            "max_turns": 1,
            "python_env": False,
        },
        "optim": {"lr": 0.02, "adamw_lr": 1e-3},
    }
    for key, value in overrides.items():
        data[key] = data.get(key, {}) | value if isinstance(value, dict) else value
    return parse_config(data)


def muon_after_steps(model, steps: int) -> Muon:
    optimizer = Muon(list(model.named_parameters()), lr=0.02, adamw_lr=1e-3)
    gen = torch.Generator().manual_seed(1)
    for _ in range(steps):
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=gen)
        optimizer.step()
    return optimizer


def test_optimizer_state_round_trips_exactly(smollm2_tokenizer, tmp_path):
    tokenizer = smollm2_tokenizer
    model = tiny_model(tokenizer)
    optimizer = muon_after_steps(model, 2)
    cfg = config(tmp_path / "run", 1, tasks=False)
    save_checkpoint(tmp_path / "checkpoint", model, tokenizer, optimizer, cfg, 2, {})

    fresh = tiny_model(tokenizer, seed=5)
    fresh_opt = Muon(list(fresh.named_parameters()), lr=0.02, adamw_lr=1e-3)
    torch.manual_seed(123)  # the checkpoint's RNG state replaces this
    state = load_checkpoint(tmp_path / "checkpoint", fresh, fresh_opt)
    assert state["iteration"] == 2
    saved, loaded = optimizer.state_dict(), fresh_opt.state_dict()
    assert saved["state"].keys() == loaded["state"].keys() and len(saved["state"]) > 0
    kinds = set()
    for key, entries in saved["state"].items():
        for name, value in entries.items():
            kinds.add(name)
            assert torch.equal(value, loaded["state"][key][name]), (key, name)
    assert {"momentum_buffer", "exp_avg", "exp_avg_sq"} <= kinds  # Muon and AdamW parts
    for (name, p), q in zip(model.named_parameters(), fresh.parameters()):
        assert torch.equal(p, q), name
    # the same gradient on both gives the same next step, bit for bit
    grads = [torch.randn(p.shape) for p in model.parameters()]
    for m, opt in ((model, optimizer), (fresh, fresh_opt)):
        for p, g in zip(m.parameters(), grads):
            p.grad = g.clone()
        opt.step()
    for p, q in zip(model.parameters(), fresh.parameters()):
        assert torch.equal(p, q)


class Killed(BaseException):
    """Stands in for a SIGKILL: nothing in the loop catches it."""


def test_interrupted_checkpoint_write_never_looks_valid(smollm2_tokenizer, tmp_path, monkeypatch):
    tokenizer = smollm2_tokenizer
    model = tiny_model(tokenizer)
    optimizer = muon_after_steps(model, 1)
    cfg = config(tmp_path / "run", 1, tasks=False)
    path = tmp_path / "run" / "checkpoint"
    save_checkpoint(path, model, tokenizer, optimizer, cfg, 1, {"iteration": 1})

    def killed(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(torch, "save", killed)  # dies after the weights, before state.json
    with pytest.raises(Killed):
        save_checkpoint(path, model, tokenizer, optimizer, cfg, 2, {"iteration": 2})
    monkeypatch.undo()
    assert (path.with_name("checkpoint.tmp") / "model.safetensors").is_file()
    assert find_checkpoint(path.parent) == path
    assert json.loads((path / "state.json").read_text())["iteration"] == 1
    # a crash between the two renames: only checkpoint.old is complete, and it is found
    path.rename(path.with_name("checkpoint.old"))
    assert find_checkpoint(path.parent) == path.with_name("checkpoint.old")
    save_checkpoint(path, model, tokenizer, optimizer, cfg, 3, {"iteration": 3})
    assert find_checkpoint(path.parent) == path
    assert not path.with_name("checkpoint.old").exists()
    assert not path.with_name("checkpoint.tmp").exists()


def test_metrics_are_reconciled_with_the_checkpoint(tmp_path):
    lines = [json.dumps({"iteration": i}) for i in (1, 2, 3)] + ['{"iteration": 4, "rew']
    (tmp_path / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    reconcile_metrics(tmp_path, 2, {"iteration": 2})
    kept = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["iteration"] for line in kept] == [1, 2]
    assert (tmp_path / "metrics.discarded.jsonl").read_text().splitlines() == lines[2:]
    # a line lost to a crash right after the checkpoint comes back from state.json
    reconcile_metrics(tmp_path, 3, {"iteration": 3})
    restored = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert restored[-1] == {"iteration": 3, "restored_from_checkpoint": True}


def test_config_changes_that_matter_block_a_resume(smollm2_tokenizer, tmp_path):
    tokenizer = smollm2_tokenizer
    model = tiny_model(tokenizer)
    cfg = config(tmp_path / "run", 2, tasks=False)
    save_checkpoint(tmp_path / "ck", model, tokenizer, muon_after_steps(model, 1), cfg, 1, {})
    check_resumable(tmp_path / "ck", config(tmp_path / "run", 5, False, rollout={"concurrency": 2}))
    with pytest.raises(CheckpointError, match=r"optim.lr: 0.02 -> 0.05.*seed: 0 -> 1"):
        check_resumable(
            tmp_path / "ck", config(tmp_path / "run", 2, False, optim={"lr": 0.05}, seed=1)
        )


def weights(model) -> dict:
    return {n: p.detach().clone() for n, p in model.named_parameters()}


@pytest.mark.slow
def test_killed_run_resumes_where_it_stopped(smollm2_tokenizer, tmp_path, monkeypatch):
    """Killed while checkpointing iteration 2 of 2: a plain rerun is refused, a resume with
    a changed learning rate is refused, `--resume` runs iteration 2 only, and the result
    equals an uninterrupted run's; extending to 3 iterations runs just the 3rd. A random
    policy earns no reward, so the grader is replaced by a reward read off the episode's
    text: every iteration's group has a spread and takes a Muon step (whose momentum the
    resume must restore)."""
    tokenizer = smollm2_tokenizer

    def text_reward(task_dir, episode, kind, time_limit_s):
        return {"reward": len(json.dumps(episode.messages)) % 101 / 100}

    monkeypatch.setattr(loop, "grade_episode", text_reward)
    straight = tiny_model(tokenizer)
    before = weights(straight)
    reference = loop.train(config(tmp_path / "straight", 2), policy=(straight, tokenizer))
    assert [s["groups_with_spread"] for s in reference] == [1, 1]
    assert [s["update_skipped"] for s in reference] == [None, None]
    name = "model.layers.1.self_attn.q_proj.weight"
    assert not torch.equal(straight.get_parameter(name), before[name])

    run = tmp_path / "run"
    real_save = loop.save_checkpoint

    def killed_at_2(path, model, tok, optimizer, cfg, it, summary):
        if it == 2:
            (path.with_name("checkpoint.tmp")).mkdir()
            raise Killed
        real_save(path, model, tok, optimizer, cfg, it, summary)

    monkeypatch.setattr(loop, "save_checkpoint", killed_at_2)
    with pytest.raises(Killed):
        loop.train(config(run, 2), policy=(tiny_model(tokenizer), tokenizer))
    monkeypatch.setattr(loop, "save_checkpoint", real_save)
    metrics = run / "metrics.jsonl"
    assert [json.loads(line)["iteration"] for line in metrics.read_text().splitlines()] == [1]
    finished = {p: os.stat(p).st_mtime_ns for p in run.glob("iter_0001/*.jsonl")}
    assert len(finished) == 2

    with pytest.raises(ValueError, match="holds a checkpoint of iteration 1: pass --resume"):
        loop.train(config(run, 2), policy=(tiny_model(tokenizer), tokenizer))
    with pytest.raises(CheckpointError, match=r"optim\.lr"):
        loop.train(
            config(run, 2, optim={"lr": 0.05}),
            policy=(tiny_model(tokenizer), tokenizer),
            resume=True,
        )

    resumed = tiny_model(tokenizer, seed=9)  # its weights come from the checkpoint
    (summary,) = loop.train(config(run, 2), policy=(resumed, tokenizer), resume=True)
    assert summary["iteration"] == 2 and summary["policy_version"] == 1
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [line["iteration"] for line in lines] == [1, 2]
    assert {p: os.stat(p).st_mtime_ns for p in finished} == finished  # not redone
    assert len(list(run.glob("iter_0002.interrupted-*"))) == 1
    assert json.loads((run / "checkpoint" / "state.json").read_text())["iteration"] == 2
    for ours, theirs in zip(lines, reference):  # the same episodes, rewards and losses
        assert ours["rewards"] == theirs["rewards"] and ours["rl_loss"] == theirs["rl_loss"]
    straight_weights = weights(straight)
    for name, value in weights(resumed).items():
        assert torch.equal(value, straight_weights[name]), name

    more = loop.train(config(run, 3), policy=(tiny_model(tokenizer), tokenizer), resume=True)
    assert [s["iteration"] for s in more] == [3]
    iterations = [json.loads(line)["iteration"] for line in metrics.read_text().splitlines()]
    assert iterations == [1, 2, 3]
    assert loop.train(config(run, 3), policy=(tiny_model(tokenizer), tokenizer), resume=True) == []
