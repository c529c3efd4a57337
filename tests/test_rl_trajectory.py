"""Token masks and turn indices of multi-turn tool trajectories (byte tokenizer; the Hugging
Face chat template is tested with SmolLM2 in test_rl_smollm2.py), and clear errors for
trajectories that do not fit a template."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from etude.rl.trajectory import ByteChat, TemplateError, Trajectory, tokenize

DATA = Path(__file__).parent / "data" / "rl"
TOK = ByteChat()


def _load(name):
    return Trajectory.from_dict(json.loads((DATA / f"{name}.json").read_text()))


def test_byte_tokenizer_turns_and_trainable_mask():
    traj = _load("tool_not_found")
    tt = tokenize(traj.messages, TOK)
    text = TOK.decode(tt.tokens.tolist())
    assert text == TOK.render(traj.messages)
    # every message's span decodes to that message alone
    for i, m in enumerate(traj.messages):
        start, end = tt.spans[i]
        assert TOK.decode(tt.tokens[start:end].tolist()) == TOK.render([m])
        assert (tt.turn[start:end] == i).all()
    # trainable: exactly the assistant messages' generated text and end byte
    for i, m in enumerate(traj.messages):
        generated = TOK.decode(tt.tokens[tt.turn_mask(i)].tolist())
        if m["role"] == "assistant":
            assert generated == TOK.render([m])[len("\x02assistant\n") :]
        else:
            assert generated == ""
    assert TOK.decode(tt.tokens[tt.turn_mask(2)].tolist()) == '<call>qix {"a":3,"b":4}\x03'
    assert TOK.decode(tt.tokens[tt.turn_mask(6)].tolist()) == "7\x03"


def test_parse_assistant_round_trips_calls_and_text():
    msg = TOK.parse_assistant('<call>zop {"a":1,"b":2}\x03')
    assert msg["tool_calls"][0]["function"] == {"name": "zop", "arguments": '{"a":1,"b":2}'}
    assert TOK.render([msg]) == '\x02assistant\n<call>zop {"a":1,"b":2}\x03'
    assert TOK.parse_assistant("42") == {"role": "assistant", "content": "42"}


def test_record_round_trip():
    d = json.loads((DATA / "clean.json").read_text())
    assert Trajectory.from_dict(d).to_dict() == d


class _Rerendering(ByteChat):
    """A template that renders the last message first: prefixes are not preserved."""

    def render(self, messages, add_generation_prompt=False):
        return super().render(messages[-1:] + messages[:-1], add_generation_prompt)


@pytest.mark.parametrize(
    ("messages", "tok", "match"),
    [
        ([], TOK, "no messages"),
        ([{"role": "robot", "content": "x"}], TOK, "message 0 has no valid role"),
        ([{"role": "user", "content": 3}], TOK, "content must be a string"),
        ([{"role": "assistant", "tool_calls": [{"id": "c"}]}], TOK, "without function.name"),
        (
            [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
            _Rerendering(),
            "does not fit this chat template",
        ),
        (
            [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
            _Rerendering(),
            "does not fit this chat template",
        ),
    ],
)
def test_trajectories_that_do_not_fit_give_clear_errors(messages, tok, match):
    with pytest.raises(TemplateError, match=match):
        tokenize(messages, tok)


def test_record_without_messages():
    with pytest.raises(TemplateError, match="no 'messages'"):
        Trajectory.from_dict({"reward": 1})
