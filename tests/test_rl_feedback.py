"""Hint detectors find the planted mistakes in hand-written trajectories and nothing in clean
ones; the judge detector reads any chat callable; bad hints give clear errors."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from etude.models import MoEConfig, MoETransformer
from etude.recipes.toolgrid.policy import BytePolicy, muon_optimizer
from etude.recipes.toolgrid.train import ModelSettings
from etude.rl.feedback import (
    DETECTORS,
    CommunicationDetector,
    EffortDetector,
    Hint,
    HintError,
    JudgeDetector,
    detect_all,
    validate_hint,
)
from etude.rl.feedback.detectors import suggest_tool
from etude.rl.policy import NativePolicy
from etude.rl.trajectory import ByteChat, HFChat, TemplateError, Trajectory
from etude.rl.update import StepSettings, rl_update

DATA = Path(__file__).parent / "data" / "rl"

# the hand-written trajectories of tests/data/rl carry no token ids: updates on them
# re-tokenize (retokenize=True), which warns
pytestmark = pytest.mark.filterwarnings("ignore:.*re-tokenized:UserWarning")


def _load(name):
    return Trajectory.from_dict(json.loads((DATA / f"{name}.json").read_text()))


def _all():
    return [d() for d in DETECTORS.values()]


def test_clean_trajectory_gets_no_hints():
    assert detect_all(_load("clean"), _all()) == []


def test_tool_not_found_hint_at_the_failing_turn():
    (hint,) = detect_all(_load("tool_not_found"), _all())
    assert (hint.turn, hint.category, hint.source) == (2, "tool_not_found", "tool_not_found")
    assert "qix does not exist" in hint.text and "add=zop" in hint.text and "mul=kav" in hint.text


def test_tool_not_found_hint_suggests_the_tool_the_turn_meant():
    traj = _load("tool_not_found")
    assert suggest_tool(traj, 2, "qix") is None  # no description named, no close name
    traj.messages[2]["content"] = "mul=qix"
    (hint,) = detect_all(traj, [DETECTORS["tool_not_found"]()])
    assert hint.text.endswith("Available tools: add=zop mul=kav. Did you mean mul=kav?")
    assert suggest_tool(traj, 2, "zopp") == "mul=kav"  # the named description comes first
    traj.messages[2]["content"] = "multiply"  # a description only counts as a whole word
    assert suggest_tool(traj, 2, "zopp") == "zop"  # then the closest offered name


def test_each_planted_mistake_is_found_at_its_turn():
    found = {(h.turn, h.category) for h in detect_all(_load("planted_many"), _all())}
    assert found == {
        (2, "invalid_arguments"),  # zop called without b
        (6, "repeated_call"),  # zop(3, 4) again
        (8, "style"),  # unused import in the written file (ruff F401)
        (10, "communication"),  # empty answer
    }
    style = [h for h in detect_all(_load("planted_many"), _all()) if h.category == "style"]
    assert "F401" in style[0].text


def test_effort_detector_flags_far_too_many_turns_and_giving_up_early():
    traj = _load("clean")
    many = Trajectory(
        traj.messages[:2]
        + [{"role": "assistant", "content": "thinking"}, {"role": "user", "content": "go on"}] * 7,
        traj.tools,
        metadata={"expected_turns": 3},
    )
    (hint,) = EffortDetector()(many)
    assert hint.category == "effort" and hint.turn == 2 + 2 * 6  # the 7th assistant turn
    early = Trajectory(traj.messages[:3], traj.tools, reward=0.0, metadata={"expected_turns": 6})
    assert [h.turn for h in EffortDetector()(early)] == [2]
    assert EffortDetector()(traj) == []  # 3 turns for 3 expected


def test_communication_detector_flags_rambling():
    traj = _load("clean")
    ramble = Trajectory(
        [*traj.messages[:-1], {"role": "assistant", "content": "I will do it.\n" * 5}]
    )
    (hint,) = CommunicationDetector()(ramble)
    assert hint.turn == len(ramble.messages) - 1


def test_judge_detector_takes_any_chat_callable_and_records_what_it_rejects(caplog):
    traj = _load("tool_not_found")
    seen = {}

    def chat(messages):
        seen["messages"] = messages
        return (
            '{"turn": 2, "hint": "Use zop, the add tool."}\n'
            "not json\n"
            '{"turn": 1, "hint": "a user turn"}\n'
            '{"turn": 99, "hint": "out of range"}\n'
            '{"hint": "no turn"}\n'
        )

    caplog.set_level(logging.INFO, logger="etude.rl.feedback.judge")
    judge = JudgeDetector(chat)
    assert judge(traj) == [Hint(2, "Use zop, the add tool.", "judge", "judge")]
    prompt = seen["messages"][-1]["content"]
    assert "[2] assistant:  call qix" in prompt and "Assistant turns: 2, 4, 6." in prompt
    # instructions, a worked example and its reply, then the trajectory
    assert [m["role"] for m in seen["messages"]] == ["system", "user", "assistant", "user"]
    assert len(judge.rejected) == 3  # user turn, out of range, missing turn
    assert "'user' message" in judge.rejected[0] and "trajectory has 7" in judge.rejected[1]
    assert 'not an object with "turn" and "hint"' in judge.rejected[2]
    assert len([r for r in caplog.records if "rejected" in r.getMessage()]) == 3


@pytest.mark.parametrize(
    ("reply", "turns", "reasons"),
    [
        # prose and a code fence around a multi-line object, as small models write it
        (
            'Sure! Here it is:\n```json\n{\n  "turn": 2,\n  "hint": "Use zop."\n}\n```\nDone.',
            [2],
            [],
        ),
        ('[{"turn": "2", "hint": "Use zop."}, {"turn": 4.0, "hint": "Fine."}]', [2, 4], []),
        ("", [], []),  # nothing went wrong
        ("The tool is not found.", [], ["no JSON object in the reply"]),
        ('{"turn": 2, "hint": "Use zo', [], ["not valid JSON"]),  # cut off by max_tokens
        ('{"turn": 2, "hint": "a"} {"turn": 2, "hint": "b"}', [2], ["a second hint for turn 2"]),
        ('{"turn": true, "hint": "a"} {"turn": "two", "hint": "b"}', [], ["not a message"] * 2),
        (
            '{"turn": 2, "hint": {"text": "a"}} {"turn": 2, "hint": " "}',
            [],
            ["not text", "no text"],
        ),
    ],
    ids=["prose_fence", "array", "empty", "prose_only", "cut_off", "twice", "bad_turn", "bad_hint"],
)
def test_judge_reply_parsing_keeps_hints_and_reports_the_rest(reply, turns, reasons):
    traj = _load("tool_not_found")
    judge = JudgeDetector(lambda _: reply, name="small-judge")
    hints = judge(traj)
    assert [h.turn for h in hints] == turns
    assert all(h.category == "judge" and h.source == "small-judge" for h in hints)
    assert len(judge.rejected) == len(reasons)
    for rejected, reason in zip(judge.rejected, reasons):
        assert reason in rejected


def test_hint_validation_names_the_problem():
    traj = _load("tool_not_found")
    with pytest.raises(HintError, match="points at turn 1, a 'user' message"):
        validate_hint(traj, Hint(1, "x", "judge", "judge"))
    with pytest.raises(HintError, match="trajectory has 7"):
        validate_hint(traj, Hint(7, "x", "judge", "judge"))
    with pytest.raises(HintError, match="no text"):
        validate_hint(traj, Hint(2, "  ", "judge", "judge"))


# Bad input through one update (`rl_update`): each bad hint or trajectory is dropped with a
# message naming it, and the rest of the batch still trains.


def _tiny_policy():
    torch.manual_seed(0)
    return BytePolicy(ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64, max_seq_len=512).config())


def _update(policy, tok, trajectories, hints):
    before = [p.detach().clone() for p in policy.parameters()]
    metrics = rl_update(
        NativePolicy(policy),
        muon_optimizer(policy, 0.01),
        tok,
        trajectories,
        [0, 0] + [1] * (len(trajectories) - 2),  # a successful and a failed run share a group
        hints,
        StepSettings(weights={"tool_not_found": 1.0}, modes={"tool_not_found": "kl"}),
        retokenize=True,
    )
    changed = any(not torch.equal(a, b) for a, b in zip(before, policy.parameters()))
    return metrics, changed


def test_bad_hints_are_dropped_by_an_update_and_the_rest_trains():
    good = _load("tool_not_found")
    failed = Trajectory(good.messages, good.tools, reward=0.0)
    bad = {
        "'user' message": Hint(1, "Note: at a user turn", "tool_not_found", "t"),
        "'tool' message": Hint(3, "Note: at a tool turn", "tool_not_found", "t"),
        "'system' message": Hint(0, "Note: at the system prompt", "tool_not_found", "t"),
        "points at turn 7; trajectory has 7": Hint(7, "Note: past the end", "tool_not_found", "t"),
        "points at turn -1": Hint(-1, "Note: negative", "tool_not_found", "t"),
        "has no text": Hint(4, " ", "tool_not_found", "t"),
        "ascii text only": Hint(4, "Note: caf\u00e9", "tool_not_found", "t"),
    }
    (hint,) = detect_all(good, _all())
    metrics, changed = _update(
        _tiny_policy(), ByteChat(), [good, failed], [[hint, *bad.values()], list(bad.values())]
    )
    for index in (0, 1):
        for problem in bad:
            assert any(
                e.startswith(f"trajectory {index}: hint dropped") and problem in e
                for e in metrics["errors"]
            ), (index, problem, metrics["errors"])
    assert len(metrics["errors"]) == 2 * len(bad)
    assert metrics["hints_used"] == 1 and metrics["kl/tool_not_found"] > 0 and changed


def test_trajectories_that_do_not_fit_are_dropped_by_an_update_and_the_rest_trains():
    good = _load("tool_not_found")
    failed = Trajectory(good.messages, good.tools, reward=0.0)
    unfit = {
        "no messages": [],
        "ascii text only": [{"role": "user", "content": "caf\u00e9"}],
        "no valid role": [{"role": "robot", "content": "x"}],
        "content must be a string": [{"role": "user", "content": ["x"]}],
        "tool call without function.name": [
            {"role": "assistant", "content": None, "tool_calls": [{"function": {}}]}
        ],
    }
    metrics, changed = _update(
        _tiny_policy(),
        ByteChat(),
        [good, failed, *(Trajectory(m, reward=1.0) for m in unfit.values())],
        [detect_all(good, _all()), [], *([] for _ in unfit)],
    )
    assert len(metrics["errors"]) == len(unfit)
    for index, (problem, error) in enumerate(zip(unfit, metrics["errors"]), start=2):
        assert error.startswith(f"trajectory {index} dropped") and problem in error, error
    assert metrics["hints_used"] == 1 and changed


def _tiny_hf_tokenizer(chat_template=None):
    """A byte-level fast tokenizer (no merges) with ChatML's two special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend)
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tok.chat_template = chat_template
    return tok


# ChatML that, like many models' templates, refuses roles it does not know
STRICT_CHATML = (
    "{% for m in messages %}{% if m['role'] == 'tool' %}"
    "{{ raise_exception('this template has no tool role') }}{% endif %}"
    "<|im_start|>{{ m['role'] }}\n{{ m['content'] or '' }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_tokenizer_without_chat_template_is_a_clear_error():
    with pytest.raises(TemplateError, match=r"has no chat template; set tokenizer\.chat_template"):
        HFChat(_tiny_hf_tokenizer())


def test_trajectory_the_hf_template_refuses_is_dropped_and_the_rest_trains():
    tok = _tiny_hf_tokenizer(STRICT_CHATML)
    chat = HFChat(tok)
    plain = [
        {"role": "user", "content": "add 3 4"},
        {"role": "assistant", "content": "7"},
    ]
    with_tool = _load("tool_not_found").messages  # has tool messages: the template refuses
    torch.manual_seed(0)
    policy = MoETransformer(
        MoEConfig(
            vocab_size=len(tok),
            dim=32,
            n_layers=1,
            n_heads=2,
            n_kv_heads=1,
            head_dim=16,
            n_experts=0,
            top_k=1,
            expert_ffn_dim=0,
            n_shared_experts=0,
            n_dense_layers=1,
            dense_ffn_dim=64,
            max_seq_len=512,
        )
    )
    before = [p.detach().clone() for p in policy.parameters()]
    metrics = rl_update(
        NativePolicy(policy),
        torch.optim.SGD(policy.parameters(), lr=0.1),
        chat,
        [Trajectory(plain, reward=1.0), Trajectory(plain, reward=0.0), Trajectory(with_tool)],
        [0, 0, 1],
        [[], [], []],
        StepSettings(),
        retokenize=True,
    )
    assert len(metrics["errors"]) == 1 and "no tool role" in metrics["errors"][0]
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters()))
