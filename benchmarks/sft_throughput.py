"""SFT tokens/s on SmolLM2-135M-Instruct, three exact ways side by side in one run: every
position's logits (`etude.rl.sft.all_logits`, the reference), the vocabulary projection at
target positions only (`target_logits`), and that plus the cache of the frozen layers'
outputs (`FrozenLayersCache`, what `etude sft` uses on one process when only the last
`--train-layers` layers train).

Each way trains its own copy of the model from the same weights on the same batches; the
steps run round-robin (way A step k, way B step k, ...) so that the shared machine's load
falls on all three alike. The losses must agree (the ways are exact); the script stops if
they do not. The cache's first step fills it (a full no-grad forward per trajectory) and is
reported apart from the later steps. Medians of step seconds; ratios against the reference.

Writes benchmarks/results/sft_throughput.json.

    nice -n 10 .venv/bin/python benchmarks/sft_throughput.py --steps 4 \\
        --data tests/data/coding/demonstrations.jsonl --batch 0 2 5
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import statistics
import time
from pathlib import Path

RESULT = Path(__file__).parent / "results" / "sft_throughput.json"


def main() -> None:
    import torch

    from etude.envs.coding import REJECTED_PREFIXES
    from etude.optim import Muon
    from etude.recipes.coding.loop import trainable_parameters
    from etude.rl.sft import FrozenLayersCache, all_logits, sft_example, sft_step, target_logits
    from etude.rl.trajectory import HFChat, read_jsonl
    from etude.serving.hf_model import load_smollm2

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="tests/data/coding/demonstrations.jsonl")
    parser.add_argument("--batch", type=int, nargs="+", default=[0, 2, 5], help="record numbers")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--train-layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    base, tok = load_smollm2()
    records = list(read_jsonl(args.data))
    batch = [sft_example(records[i], HFChat(tok), REJECTED_PREFIXES) for i in args.batch]
    ways = {}
    for name in ("all_logits", "target_logits", "frozen_layers_cache"):
        model = copy.deepcopy(base)
        params = trainable_parameters(model, args.train_layers)
        optimizer = Muon(params, lr=args.lr, adamw_lr=1e-5, weight_decay=0.0)
        logits = {
            "all_logits": lambda m=model: all_logits(lambda t: m(input_ids=t).logits),
            "target_logits": lambda m=model: target_logits(m),
            "frozen_layers_cache": lambda m=model: FrozenLayersCache(m, args.train_layers),
        }[name]()
        model.train()
        ways[name] = {"step": lambda lg=logits, o=optimizer: sft_step(lg, o, batch), "runs": []}
    del base
    for step in range(args.steps):
        for name, way in ways.items():
            start = time.perf_counter()
            metrics = way["step"]()
            way["runs"].append({"seconds": time.perf_counter() - start, **metrics})
            print(f"step {step} {name}: {way['runs'][-1]}", flush=True)
        losses = [way["runs"][-1]["loss"] for way in ways.values()]
        if max(losses) - min(losses) > 1e-3 * max(losses):
            raise SystemExit(f"step {step}: the ways disagree on the loss: {losses}")
    tokens = ways["all_logits"]["runs"][0]["tokens"]
    out = {}
    for name, way in ways.items():
        later = [r["seconds"] for r in way["runs"][1:]]
        out[name] = {
            "first_step_s": round(way["runs"][0]["seconds"], 2),
            "later_steps_median_s": round(statistics.median(later), 2),
            "later_tokens_per_s": round(tokens / statistics.median(later), 1),
            "losses": [r["loss"] for r in way["runs"]],
        }
    ref = out["all_logits"]["later_steps_median_s"]
    for name in out:
        out[name]["speedup_vs_all_logits"] = round(ref / out[name]["later_steps_median_s"], 2)
    result = {
        "benchmark": "sft_throughput",
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "torch_threads": torch.get_num_threads(),
        },
        "settings": vars(args),
        "tokens_per_step": tokens,
        "targets_per_step": ways["all_logits"]["runs"][0]["targets"],
        "ways": out,
    }
    RESULT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
