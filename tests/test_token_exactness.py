"""Token in, token out: every trained policy token is a token the sampler produced.

For 20 sampled multi-turn tool trajectories per backend (etude's native model, the local
Hugging Face SmolLM2, the real llama.cpp server), every assistant turn's trained ids equal
its sampled ids (0 mismatches), budget-cut turns included (they get no stop token), template
tokens are never trainable, and the trainer's log-probs of the sampled tokens match the
sampler's (fp32 ≤ 1e-4 locally; the server's gap is reported). Turns are short, and the
local model samples its 20 episodes in one batch and scores them in a few, to keep this
fast. Also: the old format (no token ids) is refused by the update, or re-tokenized with a
warning under an explicit option; the JSONL round trip keeps the token view."""

from __future__ import annotations

import json

import pytest
import torch

from etude.recipes.toolgrid.policy import BytePolicy
from etude.recipes.toolgrid.train import ModelSettings
from etude.rl.loss import token_logprobs
from etude.rl.policy import NativePolicy
from etude.rl.trajectory import (
    ByteChat,
    JsonlWriter,
    Trajectory,
    TrajectoryFormatError,
    read_jsonl,
    sample_of,
    tokenize,
)
from etude.rl.update import StepSettings, rl_update
from etude.serving.backends import BackendError, HFBackend, OpenAIBackend
from etude.serving.native import rollout

N_TRAJECTORIES = 20


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Small forwards on a shared 2-core machine (next to the llama.cpp server) run faster
    on one thread than on two that wait for each other; restored afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            },
        },
    }
]


class ToolChat:
    """A small multi-turn tool environment: each tool call gets a tool result, a turn without
    calls gets a user follow-up; done after `turns` assistant turns."""

    def __init__(self, seed: int, turns: int = 2):
        self.turns, self.done = turns, False
        self.messages = [
            {
                "role": "system",
                "content": 'Call tools as <tool_call>{"name": "add", "arguments": {...}}'
                "</tool_call>. <call>add {} also works.",
            },
            {"role": "user", "content": f"What is {seed} + {seed + 3}? Be brief."},
        ]

    def step(self, message: dict) -> None:
        self.messages.append(message)
        if sum(m["role"] == "assistant" for m in self.messages) == self.turns:
            self.done = True
            return
        calls = message.get("tool_calls") or []
        for call in calls:
            self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": "7"})
        if not calls:
            self.messages.append({"role": "user", "content": "Go on."})


def check_exact(messages: list[dict], tok, trainer_logprobs: torch.Tensor) -> dict:
    """Mismatches between trained and sampled ids, finish reasons, and the largest gap
    between the trainer's and the sampler's log-probs, for one trajectory;
    `trainer_logprobs` [T]: the trainer's log-probs of its training sequence."""
    tt = tokenize(messages, tok)
    out = {"mismatches": 0, "stop": 0, "length": 0, "turns": 0}
    for i, m in enumerate(messages):
        sample = sample_of(m)
        if m["role"] != "assistant":
            assert not tt.turn_mask(i).any()  # context is never trainable
            continue
        assert sample is not None
        out["turns"] += 1
        out[sample.finish] += 1
        trained = tt.tokens[tt.turn_mask(i)].tolist()
        out["mismatches"] += trained != list(sample.ids)
        end = tt.turn_mask(i).nonzero()[-1].item() + 1
        if end < len(tt.tokens):  # the template's end-of-turn after the ids: context
            assert not tt.trainable[end]
    gap = (trainer_logprobs - tt.sampler_logprobs).abs()[tt.sampled]
    out["gap_max"] = gap.max().item()
    out["gap_mean"] = gap.mean().item()
    return out


def hf_logprobs(model, tok, conversations: list[list[dict]], chunk: int = 8) -> list[torch.Tensor]:
    """The trainer's log-probs [T] of each conversation's training sequence under a Hugging
    Face model, `chunk` sequences per forward. Right padding: under causal attention no
    real position sees a pad, so each row's log-probs are its unpadded ones."""
    seqs = [tokenize(m, tok).tokens for m in conversations]
    out = []
    for start in range(0, len(seqs), chunk):
        part = seqs[start : start + chunk]
        batch = torch.nn.utils.rnn.pad_sequence(part, batch_first=True)
        with torch.no_grad():
            lp = token_logprobs(model(input_ids=batch).logits, batch)
        out += [row[: len(s)] for row, s in zip(lp, part, strict=True)]
    return out


def sample_in_lockstep(backend: HFBackend, n: int) -> list[ToolChat]:
    """`n` ToolChat episodes, each turn of all live episodes sampled in one batch."""
    envs = [ToolChat(seed) for seed in range(n)]
    while live := [e for e in envs if not e.done]:
        for env, (message, _) in zip(
            live, backend.complete_batch([e.messages for e in live], TOOLS), strict=True
        ):
            env.step(message)
    return envs


def summarize(results: list[dict]) -> dict:
    return {
        "mismatches": sum(r["mismatches"] for r in results),
        "stop": sum(r["stop"] for r in results),
        "length": sum(r["length"] for r in results),
        "turns": sum(r["turns"] for r in results),
        "gap_max": max(r["gap_max"] for r in results),
        "gap_mean": sum(r["gap_mean"] for r in results) / len(results),
    }


def byte_policy() -> BytePolicy:
    torch.manual_seed(0)
    policy = BytePolicy(
        ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64, max_seq_len=512).config()
    )
    policy.bias[ord(ByteChat.END)] = 3.0  # turns that stop, next to turns the budget cuts
    return policy


def test_native_model_trains_on_exactly_the_sampled_tokens():
    policy, tok = byte_policy(), ByteChat()
    gen = torch.Generator().manual_seed(1)
    results = []
    for seed in range(N_TRAJECTORIES):
        env = ToolChat(seed, turns=3)
        rollout(policy, tok, env, gen, max_turn_tokens=8)
        tokens = tokenize(env.messages, tok).tokens[None]
        with torch.no_grad():
            lp = token_logprobs(policy(tokens), tokens)[0]
        results.append(check_exact(env.messages, tok, lp))
    total = summarize(results)
    assert total["mismatches"] == 0 and total["turns"] == 3 * N_TRAJECTORIES
    assert total["stop"] > 0 and total["length"] > 0, total
    assert total["gap_max"] <= 1e-4, total


@pytest.mark.slow
def test_local_hf_model_trains_on_exactly_the_sampled_tokens(smollm2):
    """The 20 episodes are sampled together (`HFBackend.complete_batch`: left-padded,
    masked), the trainer scores each unpadded: padding must change neither the ids nor,
    beyond fp32 rounding, the log-probs. One episode through `complete` checks the path a
    single conversation takes."""
    model, tokenizer = smollm2
    backend = HFBackend(model, tokenizer, max_new_tokens=10, temperature=1.0, top_p=1.0)
    torch.manual_seed(0)
    envs = sample_in_lockstep(backend, N_TRAJECTORIES)
    single = ToolChat(N_TRAJECTORIES)
    while not single.done:
        single.step(backend.complete(single.messages, TOOLS)[0])
    conversations = [e.messages for e in [*envs, single]]
    scores = hf_logprobs(model, backend.chat, conversations)
    results = [
        check_exact(m, backend.chat, lp) for m, lp in zip(conversations, scores, strict=True)
    ]
    total = summarize(results)
    assert total["mismatches"] == 0 and total["turns"] == 2 * (N_TRAJECTORIES + 1)
    assert total["stop"] > 0 and total["length"] > 0, total
    assert total["gap_max"] <= 1e-4, total


@pytest.mark.slow
def test_llama_cpp_server_trains_on_exactly_the_sampled_tokens(llama_server, smollm2):
    """The server samples from the Q4_1 GGUF, the trainer scores with the dequantized fp32
    weights: ids must match exactly; the log-prob gap is reported, not bounded tightly.
    The server's tokenization of the prompt text is compared with the trainer's ids."""
    import httpx

    model, tokenizer = smollm2
    backend = OpenAIBackend(llama_server, max_tokens=6, temperature=1.0, tokenizer=tokenizer)
    envs, prompt_mismatches = [ToolChat(seed) for seed in range(N_TRAJECTORIES)], 0
    for env in envs:
        while not env.done:
            prompt = tokenize(env.messages, backend.chat_template, add_generation_prompt=True)
            served = httpx.post(
                llama_server.removesuffix("/v1") + "/extras/tokenize",
                json={"input": tokenizer.decode(prompt.tokens.tolist())},
            ).json()["tokens"]
            prompt_mismatches += served != prompt.tokens.tolist()
            message, _ = backend.complete(env.messages, TOOLS)
            env.step(message)
    conversations = [e.messages for e in envs]
    scores = hf_logprobs(model, backend.chat_template, conversations)
    results = [
        check_exact(m, backend.chat_template, lp)
        for m, lp in zip(conversations, scores, strict=True)
    ]
    total = summarize(results)
    print(f"llama.cpp server vs trainer: {total}, prompt mismatches {prompt_mismatches}")
    assert total["mismatches"] == 0 and total["turns"] == 2 * N_TRAJECTORIES
    assert total["stop"] > 0 and total["length"] > 0, total
    assert prompt_mismatches == 0
    assert total["gap_mean"] < 0.5, total  # Q4_1 against fp32: close, not equal


def test_a_context_beyond_the_models_positions_is_refused(smollm2_tokenizer):
    from test_coding_resume import tiny_model  # 4,096 positions

    model = tiny_model(smollm2_tokenizer)
    assert HFBackend(model, smollm2_tokenizer, max_context=4096).max_context == 4096
    with pytest.raises(ValueError, match="max_context 4097 exceeds the model's 4096 positions"):
        HFBackend(model, smollm2_tokenizer, max_context=4097)


def test_server_without_logprobs_is_refused_unless_off_policy(smollm2_tokenizer):
    """A server that answers completions without per-token log-probs (an httpx mock
    transport stands in for it): refused, or re-tokenized without log-probs when
    off-policy mode is stated."""
    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        reply = {"choices": [{"text": "Hello there", "finish_reason": "stop", "logprobs": None}]}
        return httpx.Response(200, json=reply)

    messages = [{"role": "user", "content": "Say hello."}]
    for off_policy in (False, True):
        backend = OpenAIBackend(
            "http://server.test/v1", tokenizer=smollm2_tokenizer, off_policy=off_policy
        )
        backend.client = httpx.Client(transport=httpx.MockTransport(handler))
        if not off_policy:
            with pytest.raises(BackendError, match=r"no per-token log-probs.*off_policy=True"):
                backend.complete(messages, [])
            continue
        message, _ = backend.complete(messages, [])
        sample = sample_of(message)
        assert sample.finish == "stop" and set(sample.logprobs) == {None}
        assert sample.ids[-1] == smollm2_tokenizer.eos_token_id
        assert smollm2_tokenizer.decode(sample.ids[:-1]) == "Hello there"


def test_old_format_is_refused_or_retokenized_with_a_warning(tmp_path):
    policy, tok = byte_policy(), ByteChat()
    env = ToolChat(0)
    rollout(policy, tok, env, torch.Generator().manual_seed(0), max_turn_tokens=6)
    sampled = Trajectory(env.messages, reward=1.0)
    old = Trajectory([{k: v for k, v in m.items() if k != "sample"} for m in env.messages])
    old.reward = 0.0
    opt = torch.optim.SGD(policy.parameters(), lr=0.0)
    with pytest.raises(TrajectoryFormatError, match=r"no sampled token ids.*retokenize=True"):
        rl_update(NativePolicy(policy), opt, tok, [sampled, old], [0, 0], [[], []], StepSettings())
    with pytest.warns(UserWarning, match="re-tokenized"):
        metrics = rl_update(
            NativePolicy(policy),
            opt,
            tok,
            [sampled, old],
            [0, 0],
            [[], []],
            StepSettings(),
            retokenize=True,
        )
    assert metrics["trajectories"] == 2 and metrics["sampled_tokens"] > 0

    # the JSONL keeps the message view and the token view; a malformed sample is named
    path = tmp_path / "rollouts.jsonl"
    JsonlWriter(path).write(sampled)
    (back,) = read_jsonl(path)
    assert back.messages == sampled.messages
    record = json.loads(path.read_text())
    record["messages"][2]["sample"]["logprobs"] = record["messages"][2]["sample"]["logprobs"][:-1]
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(TrajectoryFormatError, match=r"line 1: message 2: sample has \d+ ids"):
        list(read_jsonl(path))
