"""One keyed run stored in a benchmark's results JSON, beside the runs stored there
under other keys (another run may have saved since this one started)."""

from __future__ import annotations

import json
import platform
from pathlib import Path


def store(path: Path, benchmark: str, key: str, run: dict) -> None:
    """Merge `run` under `key` into the JSON at `path` (with the benchmark's name and this
    machine), through a temporary file and a rename, so that an interrupted write leaves
    the previous file whole."""
    result = json.loads(path.read_text()) if path.is_file() else {}
    result |= {
        "benchmark": benchmark,
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        key: run,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(result, indent=2) + "\n")
    partial.replace(path)
