"""A llama.cpp server (`llama-cpp-python[server]`) owned by this process: started on a GGUF,
restarted on another (the policy after an update), stopped with its owner. Its output goes
to a log file (a pipe would fill and block it); a server that exits or does not come up in
time is an error quoting the log's tail."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServerError(RuntimeError):
    """The server could not start (names why, with its log's tail)."""


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1; `base_url` is its `/v1` root. Use as a
    context manager, or call `stop()`."""

    def __init__(
        self,
        log_path: Path,
        *,
        port: int | None = None,
        n_ctx: int = 4096,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.log_path = Path(log_path)
        self.port = port or free_port()
        self.n_ctx, self.startup_timeout_s = n_ctx, startup_timeout_s
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.model_path: Path | None = None
        self._proc: subprocess.Popen | None = None

    def start(self, model_path: Path) -> None:
        """Serve `model_path` (stopping what was served before); returns once it answers."""
        self.stop()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("a")
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model_path),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                str(self.n_ctx),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()  # the child holds its own descriptor
        self.model_path = Path(model_path)
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            if self._proc.poll() is not None:
                raise LlamaServerError(f"llama server exited on {model_path}: {self._tail()}")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise LlamaServerError(
                    f"llama server did not answer in {self.startup_timeout_s:.0f} s: {self._tail()}"
                )
            time.sleep(0.3)

    def stop(self) -> None:
        """Terminate the server (killed if it does not exit in 20 s); no-op when stopped."""
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def _tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-2000:]

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
