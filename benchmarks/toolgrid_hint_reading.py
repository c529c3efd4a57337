"""Can the warm-started ToolGrid policy read a hint? The diagnostic behind the experiment.

Targeted textual feedback needs a teacher (the policy reading a hint) that acts better than the
student (the policy without it). This measures that directly on held-out registries, with
teacher forcing: for the first call of each task, the log-probability of the correct assistant
turn (`mul=pav` then `<call>pav {...}`) and whether the first byte of the tool name is the
arg-max, in three contexts that differ only in the message right before the turn —

- none: no extra message (the student);
- hint: the tool-not-found hint in the detectors' words, listing the available tools;
- placebo: the experiment's irrelevant sentence.

Looking the name up in the tool list is the skill the hint is about: picking one of the three
offered names at random gives a first-byte accuracy of 1/3.

    .venv/bin/python benchmarks/toolgrid_hint_reading.py [--policy PATH]
        (default: runs/toolgrid/experiment/warm_start.pt, the experiment's warm start)
        -> benchmarks/results/toolgrid_hint_reading.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

import torch

from etude.envs.toolgrid import ARGS, NAMES, call_message, sample_task, split_registries
from etude.rl.feedback.detectors import not_found_text
from etude.rl.policy import BytePolicy
from etude.rl.toolgrid_run import PLACEBO_TEXT, load_config
from etude.rl.trajectory import ByteChat, tokenize

ROOT = Path(__file__).parents[1]
RESULTS = Path(__file__).parent / "results"


def turn_scores(policy: BytePolicy, tok: ByteChat, messages: list, name_offset: int) -> tuple:
    """(log-probability of the last message's trainable tokens, whether the tool name's first
    byte — at `name_offset` bytes into that message's content — is the arg-max)."""
    t = tokenize(messages, tok)
    with torch.no_grad():
        logp = torch.log_softmax(policy(t.tokens[None, :-1])[0].float(), -1)
    target = t.tokens[1:]
    last = t.turn[1:] == t.turn.max()
    trainable = t.trainable[1:] & last
    token_logp = logp.gather(-1, target[:, None])[:, 0]
    first = int(trainable.nonzero()[0, 0]) + name_offset
    return float(token_logp[trainable].sum()), bool(logp[first].argmax() == target[first])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--policy", default=str(ROOT / "runs/toolgrid/experiment/warm_start.pt"))
    parser.add_argument("--tasks", type=int, default=300)
    args = parser.parse_args()
    if not Path(args.policy).is_file():
        sys.exit(f"no policy at {args.policy}: run `etude rl experiment toolgrid` first")
    torch.set_num_threads(1)
    cfg = load_config(ROOT / "configs/toolgrid.toml")
    policy = BytePolicy(cfg.model.config())
    policy.load_state_dict(torch.load(args.policy, map_location="cpu"))
    policy.eval()
    tg = cfg.toolgrid
    _, heldout = split_registries(
        tg.registry_seed, tg.train_registries, tg.heldout_registries, tg.n_tools
    )
    tok, rng = ByteChat(), random.Random(0)
    scores: dict[str, list[tuple[float, bool]]] = {"none": [], "hint": [], "placebo": []}
    for i in range(args.tasks):
        task = sample_task(heldout[i % len(heldout)], tg.n_requests, rng)
        reg, req = task.registry, task.requests[0]
        name = reg.name_of(req.function)
        wrong = rng.choice([n for n in NAMES if reg.function_of(n) is None])
        available = " ".join(f"{f}={n}" for n, f in reg.tools)
        base = [
            {"role": "system", "content": reg.system_prompt()},
            {"role": "user", "content": req.text()},
        ]
        call = call_message(name, dict(zip(ARGS, req.args)), "c0", f"{req.function}={name}")
        offset = len(req.function) + 1
        extra = {
            "none": [],
            "hint": [{"role": "user", "content": not_found_text(wrong, available)}],
            "placebo": [{"role": "user", "content": PLACEBO_TEXT}],
        }
        for arm, msgs in extra.items():
            scores[arm].append(turn_scores(policy, tok, base + msgs + [call], offset))
    out = {
        "policy": str(Path(args.policy).relative_to(ROOT))
        if Path(args.policy).is_relative_to(ROOT)
        else args.policy,
        "tasks": args.tasks,
        "chance_first_byte_among_offered": 1 / tg.n_tools,
    }
    for arm, rows in scores.items():
        out[arm] = {
            "median_turn_logp": statistics.median(r[0] for r in rows),
            "first_name_byte_accuracy": sum(r[1] for r in rows) / len(rows),
        }
    for arm in ("hint", "placebo"):
        gains = [a[0] - b[0] for a, b in zip(scores[arm], scores["none"])]
        out[arm]["median_logp_gain_vs_none"] = statistics.median(gains)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "toolgrid_hint_reading.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
