"""Keeping an OpenAI-compatible server on-policy: after each update the trained model is
exported to a GGUF (`etude.serving.gguf_export`) and the llama.cpp server this process owns
(`etude.serving.llama_server`) is restarted on it. `version` is the number of updates the
served weights have seen; the loop records it with every rollout. `server_completion`,
`model_logprobs` and `max_logprob_gap` check that a server serves the trainer's weights."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import torch

from etude.serving.gguf_export import export_gguf
from etude.serving.llama_server import LlamaServer


class ServedPolicy:
    """The policy behind a llama.cpp server: files under `directory` (one
    `policy-NNNN.gguf`, the server's log), the server at `base_url`."""

    def __init__(self, directory: Path, source_gguf: Path, n_ctx: int = 4096) -> None:
        self.directory = Path(directory)
        self.source_gguf = Path(source_gguf)
        self.server = LlamaServer(self.directory / "server.log", n_ctx=n_ctx)
        self.base_url = self.server.base_url
        self.version: int | None = None

    def sync(self, model, version: int) -> None:
        """Serve `model`'s current weights (its parameters with requires_grad replaced in
        the source GGUF, as F32) as policy `version`; the previous file is removed once the
        server answers on the new one."""
        path = export_gguf(model, self.source_gguf, self.directory / f"policy-{version:04d}.gguf")
        previous = self.server.model_path
        self.server.start(path)
        if previous is not None and previous != path:
            previous.unlink(missing_ok=True)
        self.version = version

    def stop(self) -> None:
        self.server.stop()


def server_completion(base_url: str, prompt: str, max_tokens: int = 8) -> tuple[str, list[float]]:
    """The server's greedy completion of `prompt` and the log-probability of each of its
    tokens (OpenAI-compatible `/completions` with `logprobs`)."""
    body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "logprobs": 1}
    request = urllib.request.Request(
        base_url + "/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        choice = json.loads(response.read())["choices"][0]
    return choice["text"], choice["logprobs"]["token_logprobs"]


def model_logprobs(model, tok, prompt: str, completion: str) -> list[float]:
    """`model`'s log-probability of each token of `completion` after `prompt`: what the
    served policy's `server_completion` logprobs should equal once synced."""
    prompt_ids = tok(prompt, add_special_tokens=False, return_tensors="pt").input_ids
    full = tok(prompt + completion, add_special_tokens=False, return_tensors="pt").input_ids
    with torch.no_grad():
        logprobs = torch.log_softmax(model(full).logits[0].float(), -1)
    return [logprobs[i - 1, full[0, i]].item() for i in range(prompt_ids.shape[1], full.shape[1])]


def max_logprob_gap(served: list[float], trained: list[float]) -> float:
    """Largest absolute difference between the served and the trained model's logprobs of
    the same tokens."""
    if len(served) != len(trained):
        raise ValueError(f"token counts differ: served {len(served)}, trained {len(trained)}")
    return max(abs(a - b) for a, b in zip(served, trained))
