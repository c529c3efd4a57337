"""Keeping an OpenAI-compatible server on-policy: after each update the trained model is
exported to a GGUF (`etude.envs.gguf_export`) and the llama.cpp server this process owns
(`etude.envs.llama_server`) is restarted on it. `version` is the number of updates the
served weights have seen; the loop records it with every rollout."""

from __future__ import annotations

from pathlib import Path

from etude.envs.gguf_export import export_gguf
from etude.envs.llama_server import LlamaServer


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
