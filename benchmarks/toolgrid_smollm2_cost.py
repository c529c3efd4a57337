"""What SmolLM2-135M-Instruct costs as the ToolGrid policy on this CPU, phase by phase, and
what projecting the vocabulary only where logits are used saves, side by side in one run
(repeats alternate the two ways; medians).

    nice -n 10 .venv/bin/python benchmarks/toolgrid_smollm2_cost.py [--threads 2] [--repeats 3]
        -> benchmarks/results/toolgrid_smollm2_cost.json

Measured: loading the checkpoint; one warm-start step (4 demonstrations); one task of the
gap check's log-prob half, as three full forwards (every position's logits, the earlier way)
against `turn_scores` (the three contexts in one forward, logits at the scored turn only);
the sampler's prefill of 16 first prompts with every position's logits against each row's
last only (`logits_to_keep`); one decoding step per episode at 1, 8 and 32 episodes per KV
cache; the machine's matrix-product rate (GFLOP/s) in float32 and bfloat16.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

import torch

from etude.envs.toolgrid import Episode, demonstration, sample_task
from etude.models import KVCache
from etude.recipes.toolgrid.hint_reading import CONTEXTS, first_call_contexts, turn_scores
from etude.recipes.toolgrid.train import chat_tokenizer, load_config, new_policy
from etude.recipes.toolgrid.warmstart import warm_start
from etude.rl.trajectory import tokenize

RESULTS = Path(__file__).parent / "results"


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def full_forward_scores(policy, contexts, tok) -> list[float]:
    """The earlier log-prob half: one forward per context, every position's logits."""
    out = []
    for messages in contexts:
        t = tokenize(messages, tok)
        with torch.no_grad():
            logp = torch.log_softmax(policy(t.tokens[None, :-1])[0].float(), -1)
        scored = (t.trainable[1:] & (t.turn[1:] == len(messages) - 1)).nonzero()[:, 0]
        out.append(float(logp[scored, t.tokens[1:][scored]].sum()))
    return out


def prefill(policy, prompts: list[list[int]], keep_last: bool) -> torch.Tensor:
    """Each row's last logits after feeding `prompts` into a fresh cache (right-padded)."""
    width = max(map(len, prompts))
    tokens = torch.tensor([p + [0] * (width - len(p)) for p in prompts])
    cache = KVCache.empty(policy.config, len(prompts), width)
    start = torch.zeros(len(prompts), dtype=torch.long)
    rows, last = torch.arange(len(prompts)), torch.tensor([len(p) - 1 for p in prompts])
    if keep_last:
        keep = torch.zeros(tokens.shape, dtype=torch.bool)
        keep[rows, last] = True
        return policy(tokens, cache=cache, start_pos=start, logits_to_keep=keep)
    return policy(tokens, cache=cache, start_pos=start)[rows, last]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/toolgrid-smollm2.toml")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS / "toolgrid_smollm2_cost.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cfg = load_config(args.config)
    tok = chat_tokenizer(cfg.model)
    start = time.perf_counter()
    policy = new_policy(cfg.model)
    load_s = time.perf_counter() - start
    train, heldout = cfg.toolgrid.registries()
    rng = random.Random(0)
    out: dict = {"threads": args.threads, "repeats": args.repeats, "load_s": round(load_s, 1)}

    demos = [
        demonstration(sample_task(rng.choice(train), 2, rng), rng, 0.3, 0.25) for _ in range(4)
    ]
    # the configured optimizer's cost; at lr 0 the weights stay as loaded
    opt = torch.optim.AdamW(policy.parameters(), lr=0.0, betas=(0.9, 0.98), weight_decay=0)
    out["warm_start_step_4_demonstrations_s"] = round(
        seconds(lambda: warm_start(policy, opt, tok, lambda _s: demos, 1)), 1
    )
    policy.eval()

    tasks = [sample_task(heldout[i], 2, rng) for i in range(args.repeats)]
    contexts = [first_call_contexts(t, rng) for t in tasks]
    old, new, diffs = [], [], []
    for ctx, offset in contexts:
        lists = [ctx[c] for c in CONTEXTS]
        a = b = None

        def run_old(lists=lists):
            nonlocal a
            a = full_forward_scores(policy, lists, tok)

        def run_new(lists=lists, offset=offset):
            nonlocal b
            b = [s for s, _ in turn_scores(policy, lists, offset, tok)]

        old.append(seconds(run_old))
        new.append(seconds(run_new))
        diffs.append(max(abs(x - y) for x, y in zip(a, b)))
    out["logprob_half_one_task"] = {
        "three_full_forwards_s": round(statistics.median(old), 2),
        "turn_scores_s": round(statistics.median(new), 2),
        "speedup": round(statistics.median(o / n for o, n in zip(old, new)), 2),
        "max_abs_logp_difference": max(diffs),
    }

    episodes = [Episode(sample_task(heldout[i], 2, rng), cfg.toolgrid.slack) for i in range(16)]
    prompts = [
        tokenize(ep.messages, tok, add_generation_prompt=True).tokens.tolist() for ep in episodes
    ]
    full, kept, diffs = [], [], []
    with torch.inference_mode():
        for _ in range(args.repeats):
            a = b = None

            def run_full():
                nonlocal a
                a = prefill(policy, prompts, keep_last=False)

            def run_kept():
                nonlocal b
                b = prefill(policy, prompts, keep_last=True)

            full.append(seconds(run_full))
            kept.append(seconds(run_kept))
            diffs.append(float((a - b).abs().max()))
        out["sampler_prefill_16_prompts"] = {
            "prompt_tokens_median": statistics.median(map(len, prompts)),
            "all_logits_s": round(statistics.median(full), 2),
            "last_logits_s": round(statistics.median(kept), 2),
            "speedup": round(statistics.median(f / k for f, k in zip(full, kept)), 2),
            "max_abs_logit_difference": max(diffs),
        }
        per_row = {}
        for batch in (1, 8, 32):
            cache = KVCache.empty(policy.config, batch, 128)
            policy(torch.ones(batch, 100, dtype=torch.long), cache=cache, start_pos=0)
            step = torch.ones(batch, 1, dtype=torch.long)
            keep = torch.ones(batch, 1, dtype=torch.bool)
            times = [
                seconds(
                    lambda cache=cache, step=step, keep=keep, k=k: policy(
                        step,
                        cache=cache,
                        start_pos=torch.full((len(step),), 100 + k),
                        logits_to_keep=keep,
                    )
                )
                for k in range(2 * args.repeats + 1)
            ]
            per_row[str(batch)] = round(statistics.median(times) / batch, 4)
        out["decode_step_s_per_episode"] = per_row
        rates = {}
        for dtype in (torch.float32, torch.bfloat16):
            w = torch.randn(1536, 576, dtype=dtype)  # one of SmolLM2's FFN projections
            for rows in (64, 512):
                x = torch.randn(rows, 576, dtype=dtype)
                t = statistics.median(seconds(lambda x=x, w=w: x @ w.T) for _ in range(21))
                rates[f"{str(dtype).split('.')[1]} {rows} rows"] = round(
                    2 * rows * 576 * 1536 / t / 1e9, 1
                )
        out["matmul_gflops"] = rates
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
