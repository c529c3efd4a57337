"""A pretrained chat model as a ToolGrid policy, on tiny settings: a random Llama built with
transformers' config class and saved as transformers saves it, with SmolLM2's tokenizer and
chat template, loaded through `[model] pretrained` as SmolLM2 is. Its tool calls are the
Hermes `<tool_call>` text the coding environment uses with SmolLM2."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import replace

import pytest
import torch

from etude.envs.toolgrid import (
    Episode,
    demonstration,
    run_tool,
    sample_task,
    split_registries,
)
from etude.rl.batch import pad_batch
from etude.rl.sft import sft_loss
from etude.rl.trajectory import (
    render_tool_calls,
    sample_of,
    tokenize,
    without_samples,
)
from etude.serving.backends import parse_assistant
from etude.serving.native import rollout, rollouts

pytestmark = pytest.mark.slow  # SmolLM2's tokenizer loads in about 15 s; then 20-40 s

CONFIG = {
    "env": "toolgrid",
    "model": {"max_seq_len": 400},
    "toolgrid": {"train_registries": 20, "heldout_registries": 5},
    "warm_start": {"steps": 6, "batch": 2, "optimizer": "adamw", "lr": 0.01},
    "rl": {"max_turn_tokens": 12},
}


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, smollm2_tokenizer):
    """A tiny random Llama with SmolLM2's vocabulary and tokenizer, saved as a Hugging Face
    directory."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(smollm2_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
        max_position_embeddings=1024,
    )
    path = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(path)
    smollm2_tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def cfg(checkpoint):
    from etude.recipes.toolgrid.train import parse_config

    data = json.loads(json.dumps(CONFIG))
    data["model"]["pretrained"] = str(checkpoint)
    return parse_config(data)


def _tasks(n: int, seed: int = 0):
    rng = random.Random(seed)
    train, _ = split_registries(0, 10, 2, 3)
    return [sample_task(train[k % 10], 1 + k % 2, rng, f"t{k}") for k in range(n)], rng


def test_demonstration_calls_read_back_as_the_calls_they_render(smollm2_tokenizer):
    """What SmolLM2 is taught to write (a call message in the chat template's text) parses
    back to the same call, and the environment answers it as the demonstration says."""
    tasks, rng = _tasks(8)
    calls = 0
    for task in tasks:
        messages = demonstration(task, rng, p_error=0.5, p_hint=0.0)
        for m, reply in itertools.pairwise(messages):
            if not m.get("tool_calls"):
                continue
            parsed = parse_assistant(render_tool_calls(m)["content"])
            assert parsed["content"] == m["content"]
            (want,), (got,) = m["tool_calls"], parsed["tool_calls"]
            assert got["function"]["name"] == want["function"]["name"]
            assert json.loads(got["function"]["arguments"]) == json.loads(
                want["function"]["arguments"]
            )
            fn = got["function"]
            assert run_tool(task.registry, fn["name"], fn["arguments"]) == reply["content"]
            calls += 1
    assert calls > 8


def test_batched_rollouts_in_the_chat_template_are_token_exact(cfg):
    """Sampled turns end on `<|im_end|>`, their ids are the trainable tokens the trainer
    builds from the episode, and batched sampling equals one episode at a time."""
    from etude.recipes.toolgrid.train import chat_tokenizer, new_policy

    policy, chat = new_policy(cfg.model).eval(), chat_tokenizer(cfg.model)
    tasks, _ = _tasks(4)
    limits = {"temperature": 1.0, "max_turn_tokens": 12, "max_len": 400}
    batched = [Episode(t) for t in tasks]
    alone = [Episode(t) for t in tasks]
    rollouts(policy, chat, batched, [torch.Generator().manual_seed(k) for k in range(4)], **limits)
    for k, ep in enumerate(alone):
        rollout(policy, chat, ep, torch.Generator().manual_seed(k), **limits)
    end = chat.tokenizer.convert_tokens_to_ids("<|im_end|>")
    turns = 0
    for a, b in zip(batched, alone):
        assert without_samples(a.messages) == without_samples(b.messages)
        t = tokenize(a.messages, chat)
        for i, m in enumerate(a.messages):
            if m["role"] != "assistant":
                continue
            sample = sample_of(m)
            assert sample.ids == sample_of(b.messages[i]).ids
            assert t.tokens[t.turn_mask(i)].tolist() == list(sample.ids)
            assert (sample.finish == "stop") == (sample.ids[-1] == end)
            turns += 1
    assert turns >= 4


def test_pretrained_warm_start_lowers_demonstration_loss_then_checks_and_trains(cfg, tmp_path):
    """`[model] pretrained` + the configured warm start (SFT on the environment's
    demonstrations): the loss on fresh demonstrations falls; the pre-flight gap check runs on
    the result, and so does an RL step, on the log-probs its sampler recorded."""
    from etude.recipes.toolgrid.hint_reading import gap_check
    from etude.recipes.toolgrid.train import (
        chat_tokenizer,
        new_policy,
        train,
        warm_started_policy,
    )

    chat = chat_tokenizer(cfg.model)
    tasks, rng = _tasks(6, seed=1)
    held = [tokenize(demonstration(t, rng, 0.3, 0.25), chat) for t in tasks]
    tokens, mask = pad_batch([t.tokens for t in held], [t.trainable for t in held])

    def loss(policy) -> float:
        with torch.no_grad():
            return float(sft_loss(policy, tokens, mask))

    registries, _ = cfg.toolgrid.registries()
    before = loss(new_policy(cfg.model))
    warm = warm_started_policy(cfg, registries)
    after = loss(warm)
    assert after < before - 1.0, (before, after)  # about 10.8 (ln V) before
    check = gap_check(warm, cfg, tasks=3, episodes=2)
    assert check["tasks"] == 3 and check["success"]["episodes"] == 2
    for context in ("none", "hint", "placebo"):
        assert check[context]["median_turn_logp"] < 0
    one_step = replace(
        cfg,
        out_dir=str(tmp_path / "run"),
        rl=replace(cfg.rl, steps=1, tasks_per_step=1, group_size=2),
        eval=replace(cfg.eval, every=1, episodes=2),
    )
    (record,) = [r for r in train(one_step, policy=warm, progress=False) if "step" in r]
    assert record["errors"] == [] and record["sampled_tokens"] > 0
    assert record["logprob_gap_max"] < 1e-4  # the trainer recomputes the sampler's log-probs


def test_the_smollm2_config_parses():
    """The prepared SmolLM2 command's config (the model itself is not loaded here)."""
    from pathlib import Path

    from etude.recipes.toolgrid.train import load_config

    cfg = load_config(Path(__file__).parents[1] / "configs" / "toolgrid-smollm2.toml")
    assert cfg.model.pretrained == "smollm2" and cfg.warm_start.steps > 0
    assert set(cfg.loss.modes.values()) == {"advantage_weight"}
