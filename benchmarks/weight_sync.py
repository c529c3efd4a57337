"""Weight sync to llama.cpp, side by side with not syncing, in one run.

SmolLM2's last 4 decoder layers (what `configs/coding-smol.toml` trains) get one
deliberate change (layer 29's down_proj ×3, a quarter of its q_proj rows ×4). For each
policy — unchanged, changed and synced, changed but not synced (the server keeps the old
weights: the off-policy case) — the server's greedy completion of a fixed prompt and its
logprobs are compared with the Hugging Face model's current logprobs of the same tokens:
the largest absolute gap. Also timed (median of `--repeats`): the GGUF export of the
trained layers, and a server restart on the new file.

    .venv/bin/python benchmarks/weight_sync.py      # writes benchmarks/results/weight_sync.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import torch

from etude.serving.gguf_export import export_gguf
from etude.serving.hf_model import load_smollm2, smollm2_gguf
from etude.serving.llama_server import LlamaServer
from etude.serving.weight_sync import max_logprob_gap, model_logprobs, server_completion

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "The capital of France is"


def served_gap(base_url: str, model, tok) -> tuple[str, float]:
    """The server's greedy completion and its largest logprob gap to `model` now."""
    text, served = server_completion(base_url, PROMPT)
    return text, max_logprob_gap(served, model_logprobs(model, tok, PROMPT, text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "weight_sync.json"))
    args = parser.parse_args()
    model, tok = load_smollm2()
    names = [
        n
        for n, _ in model.named_parameters()
        if n.startswith(tuple(f"model.layers.{i}." for i in range(26, 30)))
    ]
    tmp = Path(tempfile.mkdtemp(prefix="weight-sync-"))
    export_s, restart_s, cases = [], [], {}
    with LlamaServer(tmp / "server.log") as server:
        for k in range(args.repeats):
            start = time.perf_counter()
            path = export_gguf(model, smollm2_gguf(), tmp / f"p{k}.gguf", names)
            export_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            server.start(path)
            restart_s.append(time.perf_counter() - start)
        cases["unchanged, synced"] = served_gap(server.base_url, model, tok)
        with torch.no_grad():
            model.model.layers[29].mlp.down_proj.weight.mul_(3.0)
            model.model.layers[29].self_attn.q_proj.weight[:144].mul_(4.0)
        # The server still has the old weights: the off-policy case.
        cases["changed, not synced"] = served_gap(server.base_url, model, tok)
        server.start(export_gguf(model, smollm2_gguf(), tmp / "changed.gguf", names))
        cases["changed, synced"] = served_gap(server.base_url, model, tok)
    size = (tmp / "changed.gguf").stat().st_size
    result = {
        "what": "largest |logprob(server) - logprob(HF model now)| over an 8-token greedy "
        "completion; export and restart seconds (median)",
        "prompt": PROMPT,
        "trained_tensors": len(names),
        "export_dtype": "f32",
        "gguf_bytes": size,
        "export_seconds_median": statistics.median(export_s),
        "restart_seconds_median": statistics.median(restart_s),
        "export_seconds": export_s,
        "restart_seconds": restart_s,
        "cases": {k: {"completion": t, "max_logprob_gap": g} for k, (t, g) in cases.items()},
        "gap_ratio_not_synced_over_synced": cases["changed, not synced"][1]
        / cases["changed, synced"][1],
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load": os.getloadavg(),
        },
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
