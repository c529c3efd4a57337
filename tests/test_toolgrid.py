"""ToolGrid: the environment's rules, demonstrations, KV-cache sampling, and a miniature
`etude rl --config` run end to end (log, plots, bad configs)."""

from __future__ import annotations

import json
import random

import pytest
import torch

from etude.cli import main as etude
from etude.envs.toolgrid import (
    Episode,
    Registry,
    Request,
    Task,
    call_message,
    demonstration,
    lookup_drill,
    random_registry,
    sample_task,
    split_registries,
    tool_errors,
)
from etude.recipes.toolgrid.policy import BytePolicy
from etude.recipes.toolgrid.train import (
    ModelSettings,
    RLSettings,
    load_config,
    new_policy,
    rl_optimizer,
    sampled_nll,
    train,
)
from etude.rl.feedback import DETECTORS, Hint, detect_all
from etude.rl.trajectory import (
    ByteChat,
    Sample,
    Trajectory,
    sample_of,
    tokenize,
    with_sample,
    without_samples,
)
from etude.rl.update import StepSettings, has_signal
from etude.serving.native import rollout, rollouts, turn_format

REG = Registry((("zop", "add"), ("kav", "neg")))
TASK = Task(REG, (Request("add", (3, 4)), Request("neg", (2,))), "t")


def test_correct_play_earns_the_reward():
    ep = Episode(TASK)
    assert ep.messages[0]["content"] == "tools: add=zop neg=kav"
    ep.step(call_message("zop", {"a": 3, "b": 4}, "x"))
    assert ep.messages[-1] == {"role": "tool", "tool_call_id": "call_2_0", "content": "7"}
    ep.step({"role": "assistant", "content": "7"})
    assert ep.messages[-1] == {"role": "user", "content": "neg 2"}
    ep.step(call_message("kav", {"a": 2}, "y"))
    ep.step({"role": "assistant", "content": "-2"})
    assert ep.done and ep.reward == 1.0
    assert tool_errors(ep.trajectory()) == (0, 2)


def test_errors_and_the_turn_budget():
    ep = Episode(TASK)
    ep.step(call_message("qix", {"a": 3, "b": 4}, "x"))
    assert ep.messages[-1]["content"] == "Tool not found: qix"
    ep.step(call_message("zop", {"a": 3}, "y"))
    assert ep.messages[-1]["content"] == "Invalid arguments: expected a, b"
    ep.step(call_message("zop", {"a": 3, "b": 4}, "z"))
    ep.step({"role": "assistant", "content": "7"})
    assert ep.done and ep.reward == 0.0  # four turns used: the budget of two requests
    traj = ep.trajectory()
    assert tool_errors(traj) == (2, 3)
    found = [(h.turn, h.category) for h in detect_all(traj, [d() for d in DETECTORS.values()])]
    assert found == [(2, "tool_not_found"), (4, "invalid_arguments")]


def test_heldout_registries_are_disjoint_from_training():
    train, heldout = split_registries(0, 50, 20, 3)
    assert len(set(train)) == 50 and len(set(heldout)) == 20
    assert not set(train) & set(heldout)


def test_lookup_drills_answer_each_function_with_its_binding():
    drill = lookup_drill(REG, random.Random(0), requests=6)
    assert drill[0] == {"role": "system", "content": "tools: add=zop neg=kav"}
    pairs = list(zip(drill[1::2], drill[2::2]))
    assert len(pairs) == 6
    for ask, answer in pairs:
        assert ask["role"] == "user" and answer["role"] == "assistant"
        assert answer["content"] == f"{ask['content']}={REG.name_of(ask['content'])}"
    assert {ask["content"] for ask, _ in pairs} == {"add", "neg"}


def test_hinted_lookup_drills_name_the_binding_in_the_hint():
    drill = lookup_drill(REG, random.Random(0), requests=20, p_hint=0.5)
    answers = [i for i, m in enumerate(drill) if m["role"] == "assistant"]
    hinted = [i for i in answers if drill[i - 1]["content"].startswith("Note: ")]
    assert len(answers) == 20 and 3 < len(hinted) < 17
    for i in hinted:
        hint, ask = drill[i - 1]["content"], drill[i - 2]["content"]
        assert drill[i]["content"] == f"{ask}={REG.name_of(ask)}"
        assert hint.endswith(
            f"Available tools: add=zop neg=kav. Did you mean {drill[i]['content']}?"
        )


def test_demonstrations_solve_the_task_and_carry_hints_in_the_detectors_words():
    rng = random.Random(0)
    train, _ = split_registries(0, 20, 5, 3)
    n_hints = n_errors = 0
    for _ in range(40):
        task = sample_task(rng.choice(train), 2, rng)
        msgs = demonstration(task, rng, p_error=0.5, p_hint=0.3)
        answers = [
            m["content"] for m in msgs if m["role"] == "assistant" and not m.get("tool_calls")
        ]
        assert answers == [str(r.answer()) for r in task.requests]
        hints = [
            m["content"] for m in msgs if m["role"] == "user" and m["content"].startswith("Note:")
        ]
        n_hints += len(hints)
        for h in hints:
            assert "does not exist. Available tools: " in h or " call has missing " in h
            if "does not exist" in h:  # it names the binding the next call uses
                binding = h.removesuffix("?").rsplit(" ", 1)[1]
                following = msgs[msgs.index({"role": "user", "content": h}) + 1]
                assert following["content"] == binding
        n_errors += sum(
            m["role"] == "tool" and not m["content"].lstrip("-").isdigit() for m in msgs
        )
        tokenize(msgs, ByteChat())
    assert n_hints > 5 and n_errors > 5


def _reference_rollout(policy, tok, ep, gen, max_turn_tokens):
    """Sampling without a cache: a full forward for every token, prompts from `tokenize`."""
    while not ep.done:
        ids = tokenize(ep.messages, tok, add_generation_prompt=True).tokens.tolist()
        out, logprobs, finish = [], [], "length"
        for _ in range(max_turn_tokens):
            logits = policy(torch.tensor([ids + out]))[0, -1].float()
            nxt = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=gen))
            out.append(nxt)
            logprobs.append(float(torch.log_softmax(logits, -1)[nxt]))
            if nxt == ord(tok.END):
                finish = "stop"
                break
        text = tok.decode(out[:-1] if finish == "stop" else out)
        ep.step(with_sample(tok.parse_assistant(text), Sample(tuple(out), tuple(logprobs), finish)))


def test_kv_cache_sampling_equals_sampling_without_cache():
    torch.manual_seed(0)
    policy = BytePolicy(
        ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64, max_seq_len=512).config()
    )
    tok = ByteChat()
    a, b = Episode(TASK), Episode(TASK)
    with torch.no_grad():
        rollout(policy, tok, a, torch.Generator().manual_seed(5), max_turn_tokens=12)
        _reference_rollout(policy, tok, b, torch.Generator().manual_seed(5), 12)
    assert without_samples(a.messages) == without_samples(b.messages)
    samples = [(sample_of(x), sample_of(y)) for x, y in zip(a.messages, b.messages)]
    samples = [(x, y) for x, y in samples if x is not None]
    assert {x.finish for x, _ in samples} == {"length"} or len(samples) > 1
    for x, y in samples:
        assert x.ids == y.ids and x.finish == y.finish
        torch.testing.assert_close(torch.tensor(x.logprobs), torch.tensor(y.logprobs))


def _mixed_episodes() -> list[Episode]:
    """Episodes of one to three requests, with and without slack: they end at different
    turns (a random policy answers every request wrongly at once, or runs out of room)."""
    rng = random.Random(3)
    train, _ = split_registries(0, 6, 2, 3)
    return [Episode(sample_task(train[k], 1 + k % 3, rng, f"t{k}"), slack=k % 2) for k in range(6)]


@pytest.mark.parametrize(("temperature", "end_bias"), [(0.0, 0.5), (1.0, 1.0)])
def test_batched_rollouts_equal_one_at_a_time(temperature, end_bias):
    """Six episodes in one cache (each at its own length, `start_pos` per row) give the same
    tokens, messages and finish reasons as each played alone with the same generator;
    greedy, and sampled from per-episode generators."""
    torch.manual_seed(0)
    policy = BytePolicy(ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64).config())
    policy.bias[ord(ByteChat.END)] = end_bias  # turns of different lengths
    tok, limits = ByteChat(), {"temperature": temperature, "max_turn_tokens": 10, "max_len": 130}
    batched, alone = _mixed_episodes(), _mixed_episodes()
    rollouts(policy, tok, batched, [torch.Generator().manual_seed(k) for k in range(6)], **limits)
    for k, ep in enumerate(alone):
        rollout(policy, tok, ep, torch.Generator().manual_seed(k), **limits)
    finishes = set()
    for a, b in zip(batched, alone):
        assert without_samples(a.messages) == without_samples(b.messages)
        assert a.done == b.done
        for x, y in zip(a.messages, b.messages):
            if x["role"] == "assistant":
                sx, sy = sample_of(x), sample_of(y)
                assert sx.ids == sy.ids and sx.finish == sy.finish
                torch.testing.assert_close(torch.tensor(sx.logprobs), torch.tensor(sy.logprobs))
                finishes.add(sx.finish)
    assert len({ep.assistant_turns() for ep in batched}) > 1  # they ended at different turns
    assert {ep.done for ep in batched} == {True, False}  # some ran out of room in the cache
    if temperature > 0:
        assert finishes == {"stop", "length"}


def test_rollouts_refuse_a_generator_count_or_tokenizer_they_cannot_use():
    policy = BytePolicy(ModelSettings(dim=32, n_layers=1, dense_ffn_dim=64).config())
    with pytest.raises(ValueError, match="one generator per episode: 2 episodes, 1"):
        rollouts(policy, ByteChat(), _mixed_episodes()[:2], [torch.Generator()])
    with pytest.raises(TypeError, match="no turn format known for object"):
        turn_format(object())


TINY_RUN = """
env = "toolgrid"
seed = 0
out_dir = "{out}"
[model]
dim = 32
n_layers = 1
dense_ffn_dim = 64
[toolgrid]
train_registries = 20
heldout_registries = 5
[warm_start]
steps = 4
batch = 4
drills = 2
optimizer = "adamw"
lr = 0.003
[rl]
steps = 2
tasks_per_step = 2
group_size = 2
max_turn_tokens = 12
[loss.weights]
tool_not_found = 1.0
[eval]
every = 1
episodes = 2
"""


@pytest.mark.slow
def test_etude_rl_config_trains_and_writes_log_and_plots(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text(TINY_RUN.format(out=tmp_path / "run"))
    assert etude(["rl", "--config", str(config)]) == 0
    records = [
        json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()
    ]
    steps = [r for r in records if "step" in r]
    assert [r["episodes"] for r in steps] == [4, 8]
    assert {"reward", "rl_loss", "frac_distilled", "teacher_gap", "heldout_success"} <= set(
        steps[-1]
    )
    assert (tmp_path / "run" / "plots.png").stat().st_size > 10_000
    assert "held-out success" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('env = "toolgrid"\n[rl]\nstepz = 3\n', "unknown key(s) rl.stepz"),
        ('env = "chess"\n', "unknown env 'chess'"),
        ('env = "toolgrid"\n[feedback]\ndetectors = ["psychic"]\n', "unknown detector(s)"),
        (
            'env = "toolgrid"\n[warm_start]\noptimizer = "sgd"\n',
            "[warm_start] optimizer must be 'muon' or 'adamw', got 'sgd'",
        ),
        (
            'env = "toolgrid"\n[loss]\nlambda_schedule = "cosine"\n',
            "[loss] lambda_schedule must be 'constant' or 'linear', got 'cosine'",
        ),
        (
            'env = "toolgrid"\n[rl]\noptimizer = "sgd"\n',
            "[rl] optimizer must be 'muon' or 'adamw', got 'sgd'",
        ),
        (
            'env = "toolgrid"\n[rl]\nrollout_batch = 0\n',
            "[rl] rollout_batch must be at least 1, got 0",
        ),
        (
            'env = "toolgrid"\n[rl]\ntrain_layers = -1\n',
            "[rl] train_layers must be >= 0, got -1",
        ),
        (
            'env = "toolgrid"\n[model]\ndevice = "tpu"\n',
            "[model] device must be 'cpu' or 'cuda', got 'tpu'",
        ),
        pytest.param(
            'env = "toolgrid"\n[model]\ndevice = "cuda"\n',
            "[model] device = 'cuda' but torch sees no CUDA device",
            marks=pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is here"),
        ),
        ("env = ", "not valid TOML"),
    ],
)
def test_bad_configs_exit_nonzero_with_a_message(tmp_path, capsys, text, message):
    config = tmp_path / "bad.toml"
    config.write_text(text)
    assert etude(["rl", "--config", str(config)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def _played(rewards: list[float]) -> list[Trajectory]:
    return [Trajectory(messages=Episode(TASK).messages, reward=r) for r in rewards]


def test_has_signal_needs_a_reward_spread_in_a_group_or_a_distilled_hint():
    trajs, groups = _played([1.0, 1.0, 0.0, 0.0]), [0, 0, 1, 1]
    none = [[] for _ in trajs]
    assert not has_signal(trajs, groups, none, StepSettings())
    assert has_signal(trajs, [0, 1, 0, 1], none, StepSettings())  # 1 and 0 in each group
    hint = [[Hint(1, "Note: qix does not exist.", "tool_not_found", "test")], [], [], []]
    kl = StepSettings(weights={"tool_not_found": 0.5}, modes={"tool_not_found": "kl"})
    assert has_signal(trajs, groups, hint, kl)  # the KL term has a gradient on its own
    credit = StepSettings(modes={"tool_not_found": "advantage_weight"})
    assert not has_signal(trajs, groups, hint, credit)  # it only reweighs zero advantages
    default = StepSettings(weights={"tool_not_found": 0.5})  # a λ, no mode: the default
    assert not has_signal(trajs, groups, hint, default)  # mode, advantage weighting
    assert not has_signal(trajs, groups, hint, StepSettings())  # λ 0: the hint is unused
    assert has_signal(trajs, groups, none, StepSettings(effort_alpha=0.5))
    assert not has_signal(trajs, groups, none, StepSettings(ref_kl=0.1))  # it only restrains


def test_sampled_nll_is_the_mean_negative_log_prob_of_the_sampled_tokens():
    msgs = [
        {"role": "user", "content": "hi"},
        with_sample({"role": "assistant", "content": "ab"}, Sample((97, 98), (-1.0, -2.0), "stop")),
        with_sample({"role": "assistant", "content": "c"}, Sample((99,), (None,), "length")),
        with_sample({"role": "assistant", "content": "d"}, Sample((100,), (-3.0,), "stop")),
    ]
    assert sampled_nll([Trajectory(messages=msgs)]) == pytest.approx(
        2.0
    )  # (1 + 2 + 3) / 3; None is not counted
    assert sampled_nll([]) == 0.0


def test_rl_optimizer_is_the_configured_one():
    policy = BytePolicy(ModelSettings(dim=32, n_layers=1, dense_ffn_dim=64).config())
    adamw = rl_optimizer(policy, RLSettings(optimizer="adamw", lr=1e-4))
    assert isinstance(adamw, torch.optim.AdamW) and adamw.defaults["lr"] == 1e-4
    assert adamw.defaults["weight_decay"] == 0
    assert not isinstance(rl_optimizer(policy, RLSettings()), torch.optim.AdamW)


def test_skip_no_signal_leaves_the_policy_as_it_was_on_batches_without_signal(tmp_path):
    config = tmp_path / "run.toml"
    config.write_text(
        TINY_RUN.format(out=tmp_path / "run").replace("[loss.weights]\ntool_not_found = 1.0\n", "")
    )
    cfg = load_config(config)
    cfg.rl.skip_no_signal, cfg.rl.steps = True, 2
    torch.manual_seed(0)
    policy = new_policy(cfg.model)  # untrained: it never succeeds, so no group has signal
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    steps = [r for r in train(cfg, policy=policy, progress=False) if "step" in r]
    assert [r["reward"] for r in steps] == [0.0, 0.0]
    assert all(r["skipped"] and r["sampled_nll"] > 0 for r in steps)
    assert all(torch.equal(before[k], v) for k, v in policy.state_dict().items())


def test_random_registries_avoid_the_excluded_and_keep_the_split_as_it_was():
    train, heldout = split_registries(1234, 300, 100, 3)
    # the split every earlier run used (registries() now draws through random_registry, in
    # the same order)
    assert train[0] == Registry((("qix", "sub"), ("yad", "add"), ("kav", "sq")))
    rng = random.Random(0)
    drawn = [random_registry(rng, 3, set(heldout)) for _ in range(500)]
    assert not set(drawn) & set(heldout)
    assert all(len({n for n, _ in r.tools}) == len({f for _, f in r.tools}) == 3 for r in drawn)
    assert len(set(drawn)) > 490  # fresh: almost never the same registry twice
