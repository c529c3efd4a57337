"""`etude sft` on a handful of the scripted solver's demonstrations (tests/data/coding,
made by make_demonstrations.py), with a tiny Llama over SmolLM2's tokenizer: the loss
falls, a rejected turn is context, checkpoint and resume equal an uninterrupted run, bad
input is refused with the file and record named; the projection at target positions and
the frozen-layer cache give the full-logits loss and gradients; the step and `etude sft`
itself on 2 FSDP2 gloo ranks equal one process. On SmolLM2's real weights: a few steps
make a held-out task's first turn call a tool the coding environment runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from etude.cli import main as cli
from etude.envs.coding import REJECTED_PREFIXES, TOOL_NOT_FOUND
from etude.recipes.sft import load_examples, parse_config, train
from etude.rl.sft import FrozenLayersCache, all_logits, sft_example, sft_step, target_logits
from etude.rl.trajectory import HFChat, read_jsonl, tokenize
from etude.spawn import run_on_ranks

DATA = Path(__file__).parent / "data" / "coding"
DEMOS = DATA / "demonstrations.jsonl"


def _config(out: Path, **extra) -> dict:
    return {"out_dir": str(out), "data": [str(DEMOS)], **extra}


def test_a_rejected_turn_is_context_not_a_target(smollm2_tokenizer):
    chat = HFChat(smollm2_tokenizer)
    traj = list(read_jsonl(DEMOS))[4]
    assert traj.messages[3]["content"].startswith(TOOL_NOT_FOUND)
    tokens, trainable = sft_example(traj, chat, REJECTED_PREFIXES)
    full = tokenize(traj.messages, chat)
    assert torch.equal(tokens, full.tokens)
    assert full.trainable[full.turn == 2].any() and not trainable[full.turn == 2].any()
    assert torch.equal(trainable[full.turn == 4], full.trainable[full.turn == 4])


def _tiny(tok):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,  # the loop's default model.max_context
    )
    return LlamaForCausalLM(config)


def test_sft_resume_equals_an_uninterrupted_run_and_bad_input(smollm2_tokenizer, tmp_path):
    tok = smollm2_tokenizer
    settings = TRAIN
    whole = _tiny(tok)
    lines = train(
        parse_config(_config(tmp_path / "whole", steps=3, **settings)), policy=(whole, tok)
    )
    assert lines[-1]["loss"] < lines[0]["loss"] and lines[0]["examples"] == 6
    part = _tiny(tok)
    cut = tmp_path / "cut"
    train(parse_config(_config(cut, steps=2, **settings)), policy=(part, tok))
    with pytest.raises(ValueError, match="pass --resume"):
        train(parse_config(_config(cut, steps=3, **settings)), policy=(part, tok))
    resumed = _tiny(tok)  # fresh weights: everything comes from the checkpoint
    lines = train(
        parse_config(_config(cut, steps=3, **settings)), policy=(resumed, tok), resume=True
    )
    assert [line["iteration"] for line in lines] == [3]
    for (name, a), b in zip(whole.named_parameters(), resumed.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6, msg=name)
    other = {**settings, "batch_size": 1}
    with pytest.raises(ValueError, match="batch_size"):
        train(parse_config(_config(cut, steps=4, **other)), policy=(resumed, tok), resume=True)

    record = json.loads(DEMOS.read_text().splitlines()[0])
    record.pop("source")  # unsampled turns, and not a demonstration
    bad = tmp_path / "bad.jsonl"
    bad.write_text(DEMOS.read_text().splitlines()[1] + "\n" + json.dumps(record) + "\n")
    with pytest.raises(
        ValueError, match=r"bad\.jsonl, trajectory 2: .*not marked as a demonstration"
    ):
        load_examples(parse_config({"data": [str(bad)]}), tok)
    config = tmp_path / "sft.toml"
    config.write_text(f'data = ["{bad}"]\nsteps = 1\nlearning_rate = 1\n')
    assert cli(["sft", "--config", str(config)]) == 2
    config.write_text(f'data = ["{tmp_path / "missing.jsonl"}"]\n')
    assert cli(["sft", "--config", str(config)]) == 2
    config.write_text(f'out_dir = "{tmp_path / "never"}"\ndata = ["{bad}"]\ninit = "{tmp_path}"\n')
    assert cli(["sft", "--config", str(config)]) == 2
    assert not (tmp_path / "never").exists()  # nothing written


def _sequences() -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(1)
    out = []
    for length in (7, 12, 5):  # 3 sequences on 2 ranks: one micro-step of rank 1 is idle
        tokens = torch.randint(0, 96, (length,), generator=gen)
        mask = torch.rand(length, generator=gen) < 0.6
        out.append((tokens, mask))
    return out


def _steps(model, dp_rank: int, dp_size: int) -> dict:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = [
        sft_step(target_logits(model), opt, _sequences(), 1, dp_rank, dp_size) for _ in range(2)
    ]

    def full(t):
        return t.full_tensor() if hasattr(t, "full_tensor") else t

    return {
        "losses": [x["loss"] for x in losses],
        "tokens": losses[-1]["tokens"],
        "params": {n: full(p).detach().clone() for n, p in model.named_parameters()},
    }


def _tiny_llama(layers: int = 2):
    from hf_tiny import tiny_configs
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    config = tiny_configs()["llama"]
    config.num_hidden_layers = layers
    return LlamaForCausalLM(config)


def _gradients(model, policy, micro_batch: int) -> tuple[dict, dict]:
    """(the step's metrics, the gradient of every trained parameter) after one sft_step
    whose optimizer does not move the weights."""
    params = [p for p in model.parameters() if p.requires_grad]
    metrics = sft_step(policy, torch.optim.SGD(params, lr=0.0), _sequences(), micro_batch)
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}
    return metrics, grads


def test_projection_at_targets_and_cached_frozen_layers_equal_full_logits():
    """The vocabulary projection at target positions only (`target_logits`), and the cache
    of frozen layers' outputs on top of it, give the full-logits loss and gradients: one
    sequence per micro-batch and padded micro-batches of 2; the cache on its first use
    and on its cached second."""
    from etude.recipes.coding.loop import trainable_parameters

    model = _tiny_llama(layers=3)
    full = all_logits(lambda t: model(input_ids=t).logits)
    for micro_batch in (1, 2):
        want, want_grads = _gradients(model, full, micro_batch)
        got, grads = _gradients(model, target_logits(model), micro_batch)
        assert got == pytest.approx(want, rel=1e-6) and len(grads) == len(want_grads)
        for name, g in grads.items():
            torch.testing.assert_close(g, want_grads[name], rtol=1e-5, atol=1e-7, msg=name)
    trainable_parameters(model, 1)  # the last layer and the final norm
    cache = FrozenLayersCache(model, 1)
    for micro_batch in (1, 2):
        want, want_grads = _gradients(model, full, micro_batch)
        assert sorted(want_grads) == ["model.layers.2." + n for n in LAYER] + ["model.norm.weight"]
        for _ in range(2):  # computes the frozen part, then reads it back
            got, grads = _gradients(model, cache, micro_batch)
            assert got == pytest.approx(want, rel=1e-6)
            for name, g in grads.items():
                torch.testing.assert_close(g, want_grads[name], rtol=1e-5, atol=1e-7, msg=name)
    assert len(cache._hidden) == 4  # the 3 sequences alone, the first padded to the second
    model.model.layers[0].mlp.up_proj.weight.requires_grad_(True)
    with pytest.raises(ValueError, match=r"layers\.0\.mlp\.up_proj\.weight trains"):
        FrozenLayersCache(model, 1)


LAYER = [
    "input_layernorm.weight",
    "mlp.down_proj.weight",
    "mlp.gate_proj.weight",
    "mlp.up_proj.weight",
    "post_attention_layernorm.weight",
    "self_attn.k_proj.weight",
    "self_attn.o_proj.weight",
    "self_attn.q_proj.weight",
    "self_attn.v_proj.weight",
]


TRAIN = {"batch_size": 2, "optim": {"train_layers": 1}, "max_tokens": 2048}


def _train_and_resume(tok, out: Path) -> dict:
    """`etude sft`'s train: 2 steps, then a resume to 3 on fresh weights; the losses of
    the 3 steps and the final full weights."""
    first = train(parse_config(_config(out, steps=2, **TRAIN)), policy=(_tiny(tok), tok))
    model = _tiny(tok)
    resumed = train(parse_config(_config(out, steps=3, **TRAIN)), policy=(model, tok), resume=True)

    def full(t):
        return t.full_tensor() if hasattr(t, "full_tensor") else t

    return {
        "sharded": all(hasattr(p, "full_tensor") for p in model.parameters()),
        "losses": [line["loss"] for line in first + resumed],
        "params": {n: full(p).detach().clone() for n, p in model.named_parameters()},
    }


def _rank(tok, out: Path) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    model = _tiny_llama()
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return {"step": _steps(model, dist.get_rank(), dist.get_world_size())} | {
        "train": _train_and_resume(tok, out)
    }


@pytest.mark.dist
def test_sft_on_2_fsdp2_ranks_equals_one_process(smollm2_tokenizer, tmp_path):
    """The step on 2 FSDP2 gloo ranks (3 sequences: one rank idle in a micro-step), and
    `etude sft` as an application on 2 ranks (its own sharding, rank 0's checkpoint, a
    resume that shards it again), equal one process (which caches the frozen layers)."""
    # The references run on one torch thread, as each rank does: with two, a matmul may
    # sum in another order and the weights drift past 1e-5 (seen: 1.18e-5 on 1 of 2048).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        want = _steps(_tiny_llama(), 0, 1)
        whole = _train_and_resume(smollm2_tokenizer, tmp_path / "one")
    finally:
        torch.set_num_threads(threads)
    cut = sum(int(m.nonzero().max()) + 1 for _, m in _sequences())  # after the last target
    assert want["losses"][1] < want["losses"][0] and want["tokens"] == cut < 24
    assert not whole["sharded"]
    ranks = run_on_ranks(_rank, 2, smollm2_tokenizer, tmp_path / "two", timeout_s=240)
    for got in ranks:
        assert got["step"]["losses"] == pytest.approx(want["losses"], abs=1e-5)
        assert got["step"]["tokens"] == want["tokens"]
        for name, value in want["params"].items():
            torch.testing.assert_close(got["step"]["params"][name], value, rtol=0, atol=1e-5)
        assert got["train"]["sharded"]
        assert got["train"]["losses"] == pytest.approx(whole["losses"], abs=1e-5)
        for name, value in whole["params"].items():
            torch.testing.assert_close(got["train"]["params"][name], value, rtol=0, atol=1e-5)
    metrics = (tmp_path / "two" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["iteration"] for line in metrics] == [1, 2, 3]  # rank 0's alone
    one, two = (tmp_path / d / "checkpoint" for d in ("one", "two"))
    assert sorted(p.name for p in one.iterdir()) == sorted(p.name for p in two.iterdir())


@pytest.mark.dist
def test_etude_sft_under_torchrun_on_2_ranks_equals_one_process(smollm2_tokenizer, tmp_path):
    """The command line a user runs, `torchrun --nproc-per-node 2 -m etude sft`, from a
    checkpoint directory (`init`): it exits 0 (the workers release their process groups
    and end; no hang), rank 0 alone writes metrics.jsonl and prints, and its losses and
    checkpoint equal `etude sft` on one process."""
    import subprocess
    import sys

    from safetensors.torch import load_file

    init = tmp_path / "init"
    _tiny(smollm2_tokenizer).save_pretrained(init)
    smollm2_tokenizer.save_pretrained(init)
    runs = {}
    for name in ("one", "two"):
        config = tmp_path / f"{name}.toml"
        config.write_text(
            f'out_dir = "{tmp_path / name}"\ndata = ["{DEMOS}"]\ninit = "{init}"\n'
            "steps = 2\nbatch_size = 2\nmax_tokens = 2048\n[optim]\ntrain_layers = 1\n"
        )
        runs[name] = config
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as each torchrun rank: two threads may sum in another order
    try:
        assert cli(["sft", "--config", str(runs["one"])]) == 0
    finally:
        torch.set_num_threads(threads)
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    result = subprocess.run(
        [*torchrun, "--nproc-per-node", "2", "-m", "etude", "sft", "--config", str(runs["two"])],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("step 2: loss") == 1  # rank 0's line alone

    def losses(name: str) -> list[float]:
        lines = (tmp_path / name / "metrics.jsonl").read_text().splitlines()
        assert [json.loads(x)["iteration"] for x in lines] == [1, 2]
        return [json.loads(x)["loss"] for x in lines]

    assert losses("two") == pytest.approx(losses("one"), abs=1e-5)
    one, two = (load_file(tmp_path / d / "checkpoint" / "model.safetensors") for d in runs)
    assert sorted(one) == sorted(two)
    for name, value in one.items():
        torch.testing.assert_close(two[name], value, rtol=0, atol=1e-5, msg=name)


HELD_OUT = "example_repo__textkit.stats--module"  # make_demonstrations.py leaves it out


@pytest.mark.slow
def test_sft_on_smollm2_makes_a_held_out_first_turn_call_a_tool(smollm2, tmp_path):
    """SmolLM2-135M-Instruct (real weights; 0 of 8 first turns call a tool before SFT:
    benchmarks/results/tool_call_rate.json): 6 SFT steps on 3 demonstration openings, one
    per train task, the last 2 layers trained. Their loss drops, and greedy decoding on the
    first prompt of a task never demonstrated yields a tool call that the coding
    environment accepts and runs on the example repository."""
    from etude.envs.coding import SYSTEM_PROMPT, TOOLS, CodingEnv, EnvSettings
    from etude.optim import Muon
    from etude.recipes.coding.loop import trainable_parameters
    from etude.recipes.coding.tool_use import call_error
    from etude.recipes.device import newton_schulz_dtype
    from etude.serving.backends import HFBackend
    from etude.synth import EXAMPLE_REPO

    model, tok = smollm2
    chat = HFChat(tok)
    demos = list(read_jsonl(DEMOS))
    handful = [demos[i] for i in (0, 2, 5)]
    assert len({t.task_id for t in handful}) == 3 and HELD_OUT not in {t.task_id for t in demos}
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    try:
        optimizer = Muon(
            trainable_parameters(model, 2),
            lr=0.05,
            adamw_lr=1e-5,
            weight_decay=0.0,
            ns_dtype=newton_schulz_dtype("cpu"),  # as `etude sft` on the CPU
        )
        logits = FrozenLayersCache(model, 2)
        batch = [sft_example(t, chat, REJECTED_PREFIXES) for t in handful]
        model.train()
        losses = [sft_step(logits, optimizer, batch)["loss"] for _ in range(6)]
        model.eval()
        prompt = (DATA / "heldout_prompt.txt").read_text()
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": prompt},
        ]
        reply, _ = HFBackend(model, tok, max_new_tokens=40, temperature=0).complete(messages, TOOLS)
    finally:
        model.eval()
        with torch.no_grad():  # restore: the session fixture is shared
            for n, p in model.named_parameters():
                p.copy_(before[n])
                p.requires_grad_(True)
    assert losses[-1] < 0.5 * losses[0], losses
    (call,) = reply["tool_calls"]
    name, arguments = call["function"]["name"], call["function"]["arguments"]
    env = CodingEnv(
        EXAMPLE_REPO,
        tmp_path / "episode",
        prompt,
        task_id=HELD_OUT,
        settings=EnvSettings(python_env=False),
    )
    try:
        output = env.call(name, arguments)
    finally:
        env.close()
    tools = [t["function"]["name"] for t in TOOLS]
    assert call_error(name, output, tools) is None, (name, arguments, output)
