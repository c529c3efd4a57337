"""The coding loop as a learner: a run started from a checkpoint's weights (`model.init`,
fresh optimizer, iteration 0) and refused with a clear message when the directory is not
such a checkpoint.

The policy is the tiny randomly initialized Llama of test_coding_resume (SmolLM2's
tokenizer and chat template; the loop, sandbox, grader and monitor are the real ones)."""

import pytest
import torch
from test_coding_resume import config, muon_after_steps, tiny_model, weights

import etude.recipes.coding.loop as loop
from etude.recipes.coding.checkpoint import CheckpointError, save_checkpoint


def sft_checkpoint(tokenizer, run, seed: int = 3):
    """A checkpoint in the loop's format of a tiny model after two optimizer steps (what
    `etude sft` leaves); returns (its directory, the model)."""
    model = tiny_model(tokenizer, seed=seed)
    optimizer = muon_after_steps(model, 2)
    path = run / "checkpoint"
    save_checkpoint(path, model, tokenizer, optimizer, config(run, 1, tasks=False), 7, {})
    return path, model


@pytest.mark.slow
def test_warm_start_takes_the_checkpoints_weights_only(smollm2_tokenizer, tmp_path, monkeypatch):
    """Iteration 1 starts from the checkpoint's weights (not the policy passed in) with an
    empty optimizer state, and the run's own checkpoint counts from iteration 1."""
    tok = smollm2_tokenizer
    path, source = sft_checkpoint(tok, tmp_path / "sft")
    seen = {}
    real = loop.run_iteration

    def spy(it, cfg, tasks, model, tokenizer, optimizer, *args, **kwargs):
        seen[it] = (weights(model), len(optimizer.state))
        return real(it, cfg, tasks, model, tokenizer, optimizer, *args, **kwargs)

    monkeypatch.setattr(loop, "run_iteration", spy)
    cfg = config(tmp_path / "run", 1, model={"init": str(path)})
    summaries = loop.train(cfg, policy=(tiny_model(tok, seed=0), tok))
    start, optimizer_entries = seen[1]
    for name, value in weights(source).items():
        assert torch.equal(start[name], value), name
    assert optimizer_entries == 0
    assert summaries[-1]["iteration"] == 1 and summaries[-1]["policy_version"] == 0
    state = (tmp_path / "run" / "checkpoint" / "state.json").read_text()
    assert '"iteration": 1' in state


def test_warm_start_from_what_is_not_a_checkpoint_is_refused(smollm2_tokenizer, tmp_path, capsys):
    """A missing directory, a run's out_dir (naming the checkpoint inside it) and weights of
    another architecture are each a clear error before anything is written."""
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
