"""Which warm start learns the tool-list lookup? Muon (as configs/toolgrid.toml) against AdamW,
and 2 against 4 KV heads, from scratch, on the same data.

The experiment's warm start never learned to look a tool's name up in the tool list
(benchmarks/toolgrid_hint_reading.py). Here both arms train the configured policy on the
same batches: 8 scripted demonstrations (as the warm start uses) plus 8 lookup drills (a
tool list, then 8 requests each answered by its binding alone, `mul=pav`). Every
`--every` steps: first-name-byte accuracy with teacher forcing on held-out registries (the
lookup; 1/3 is picking one of the offered names at random); at the end the hint-reading
check (`etude.recipes.toolgrid.hint_reading`).

    .venv/bin/python benchmarks/toolgrid_warm_start.py [--arms LABEL ...]   # ~10 min an arm
        -> benchmarks/results/toolgrid_warm_start.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import time
from dataclasses import replace
from pathlib import Path

import torch

from etude.envs.toolgrid import demonstration, lookup_drill, sample_task
from etude.recipes.toolgrid.hint_reading import (
    first_call_contexts,
    hint_reading,
    reads_hints,
    turn_score,
)
from etude.recipes.toolgrid.policy import BytePolicy, muon_optimizer
from etude.recipes.toolgrid.train import load_config
from etude.rl.batch import pad_batch
from etude.rl.sft import sft_loss
from etude.rl.trajectory import ByteChat, tokenize

ROOT = Path(__file__).parents[1]
# label -> (optimizer, learning rate, KV heads); the configured policy has 2 KV heads.
ARMS = {
    "muon lr=0.02": ("muon", 0.02, 2),
    "adamw lr=0.003": ("adamw", 0.003, 2),
    "adamw lr=0.003, 4 kv heads": ("adamw", 0.003, 4),
}


def lookup_accuracy(policy: BytePolicy, heldout, tasks: int, n_requests: int) -> float:
    """First-name-byte accuracy on the first call of `tasks` held-out tasks."""
    rng = random.Random(1)
    right = 0
    for i in range(tasks):
        task = sample_task(heldout[i % len(heldout)], n_requests, rng)
        contexts, offset = first_call_contexts(task, rng)
        right += turn_score(policy, contexts["none"], offset)[1]
    return right / tasks


def run_arm(job: tuple[str, int, int]) -> tuple[str, dict]:
    label, steps, every = job
    torch.set_num_threads(1)
    cfg = load_config(ROOT / "configs/toolgrid.toml")
    tg, ws = cfg.toolgrid, cfg.warm_start
    train, heldout = tg.registries()
    kind, lr, kv_heads = ARMS[label]
    cfg = replace(cfg, model=replace(cfg.model, n_kv_heads=kv_heads))
    torch.manual_seed(0)
    policy = BytePolicy(cfg.model.config())
    opt = (
        muon_optimizer(policy, lr)
        if kind == "muon"
        else torch.optim.AdamW(policy.parameters(), lr=lr, betas=(0.9, 0.98), weight_decay=0.0)
    )
    rng, tok, curve = random.Random(123), ByteChat(), []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        batch = [
            demonstration(
                sample_task(rng.choice(train), tg.n_requests, rng), rng, ws.p_error, ws.p_hint
            )
            for _ in range(8)
        ] + [lookup_drill(rng.choice(train), rng) for _ in range(8)]
        tokenized = [tokenize(m, tok) for m in batch]
        tokens, mask = pad_batch([t.tokens for t in tokenized], [t.trainable for t in tokenized])
        loss = sft_loss(policy, tokens, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % every == 0:
            policy.eval()
            acc = lookup_accuracy(policy, heldout, 64, tg.n_requests)
            policy.train()
            curve.append({"step": step, "loss": loss.item(), "heldout_lookup_accuracy": acc})
            print(f"{label} step {step}: loss {loss.item():.3f} lookup {acc:.3f}", flush=True)
    policy.eval()
    check = hint_reading(policy, cfg, tasks=150)
    return label, {
        "curve": curve,
        "hint_reading": check,
        "reads_hints": reads_hints(check),
        "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument(
        "--arms", nargs="*", default=list(ARMS), help="labels; merged into the JSON"
    )
    args = parser.parse_args()
    unknown = set(args.arms) - set(ARMS)
    if unknown:
        parser.error(f"unknown arms {sorted(unknown)}; known: {list(ARMS)}")
    path = ROOT / "benchmarks/results/toolgrid_warm_start.json"
    jobs = [(label, args.steps, args.every) for label in args.arms]
    with mp.get_context("spawn").Pool(min(len(jobs), 2)) as pool:
        arms = dict(pool.map(run_arm, jobs))
    # Arms are deterministic (fixed seeds), so an arm run later sits beside the others.
    previous = json.loads(path.read_text())["arms"] if path.exists() else {}
    out = {
        "what": "held-out first-name-byte accuracy (teacher forcing, 64 tasks) while warm-"
        "starting from scratch on demonstrations + lookup drills; hint-reading check at the end",
        "steps": args.steps,
        "batch": "8 demonstrations + 8 drills",
        "chance_among_offered": 1 / 3,
        "arms": {**previous, **arms},
    }
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
