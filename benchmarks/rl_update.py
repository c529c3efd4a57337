"""`rl_update` against the update it replaced, and what micro-batching saves.

1. Throughput: tokens/s of one update of the tiny ToolGrid policy on one batch of 32
   sampled ToolGrid episodes (4 tasks × 8, one hint per episode), single process, one
   thread: `rl_update` against the old `rl_step` (read from git history, commit
   `OLD_COMMIT`, and run from a copy inside this benchmark only), RL only and RL + targeted
   KL, interleaved repeats, medians. Both train the same token sequences (the old one
   tokenizes through today's `tokenize`, which takes the sampled ids).
2. Memory: peak resident memory of one `rl_update` of a Hugging Face Llama-architecture
   model (tiny random weights, SmolLM2's 49,152-token vocabulary and chat template: the
   logits dominate) on two coding trajectories of ~4k tokens with micro_batch = 1, and of
   ~2k tokens with micro_batch = 1 and with the whole batch in one forward, each in a
   fresh process (see `memory` for why there is no 4k whole-batch arm).

    .venv/bin/python benchmarks/rl_update.py [--repeats 7]
        -> benchmarks/results/rl_update.json   (~5 min on 2 cores)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "rl_update.json"
OLD_COMMIT = "97f295d"  # the last commit with etude/rl/step.py (rl_step)


def old_rl_step():
    """`rl_step` as it was at OLD_COMMIT, its one moved import (pad_batch) redirected."""
    source = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:etude/rl/step.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    source = source.replace(
        "from etude.rl.warmstart import pad_batch", "from etude.rl.batch import pad_batch"
    )
    path = Path(tempfile.mkdtemp()) / "old_step.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_step", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_step"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def toolgrid_batch():
    from etude.envs.toolgrid import Episode, sample_task
    from etude.recipes.toolgrid.policy import BytePolicy
    from etude.recipes.toolgrid.train import load_config
    from etude.rl.feedback import Hint
    from etude.rl.trajectory import ByteChat
    from etude.serving.native import rollout

    cfg = load_config(ROOT / "configs" / "toolgrid.toml")
    torch.manual_seed(0)
    policy = BytePolicy(cfg.model.config())
    rng, gen = random.Random(0), torch.Generator().manual_seed(0)
    train, _ = cfg.toolgrid.registries()
    trajectories, groups, hints = [], [], []
    for g in range(4):
        task = sample_task(rng.choice(train), cfg.toolgrid.n_requests, rng, f"b{g}")
        for _ in range(8):
            ep = Episode(task, cfg.toolgrid.slack)
            rollout(policy, ByteChat(), ep, gen, max_turn_tokens=cfg.rl.max_turn_tokens)
            traj = ep.trajectory()
            traj.reward = float(rng.random() < 0.5)
            trajectories.append(traj)
            groups.append(g)
            first = next(i for i, m in enumerate(traj.messages) if m["role"] == "assistant")
            hints.append([Hint(first, "Note: use the tool list.", "tool_not_found", "bench")])
    return policy, trajectories, groups, hints


def throughput(repeats: int) -> dict:
    from etude.recipes.toolgrid.policy import muon_optimizer
    from etude.rl.policy import NativePolicy
    from etude.rl.trajectory import ByteChat, tokenize
    from etude.rl.update import StepSettings, rl_update

    torch.set_num_threads(1)
    old = old_rl_step()
    policy, trajectories, groups, hints = toolgrid_batch()
    tok = ByteChat()
    n_tokens = sum(len(tokenize(t.messages, tok).tokens) for t in trajectories)
    opt = muon_optimizer(policy, 0.0)  # lr 0: every repeat sees the same policy
    arms = {"rl_only": {}, "rl_plus_targeted_kl": {"tool_not_found": 0.5}}
    times: dict[str, list[float]] = {}
    for _ in range(repeats):
        for arm, weights in arms.items():
            new_settings = StepSettings(weights=weights, modes=dict.fromkeys(weights, "kl"))
            old_settings = old.StepSettings(weights=weights)
            runs = {
                f"{arm}/rl_update": lambda s=new_settings: rl_update(
                    NativePolicy(policy), opt, tok, trajectories, groups, hints, s
                ),
                f"{arm}/old_rl_step": lambda s=old_settings: old.rl_step(
                    policy, opt, tok, trajectories, groups, hints, s
                ),
            }
            for name, run in runs.items():
                start = time.perf_counter()
                run()
                times.setdefault(name, []).append(time.perf_counter() - start)
    median = {k: statistics.median(v) for k, v in times.items()}
    return {
        "trajectories": len(trajectories),
        "tokens": n_tokens,
        "repeats": repeats,
        "median_s": median,
        "tokens_per_s": {k: n_tokens / v for k, v in median.items()},
        "rl_update_over_old": {
            arm: median[f"{arm}/old_rl_step"] / median[f"{arm}/rl_update"] for arm in arms
        },
    }


def coding_trajectory(tokenizer, seed: int, target_tokens: int):
    """A sampled-format coding trajectory of about `target_tokens` tokens: read_file calls
    answered with source text, sampled turns' ids from the tokenizer (what a backend would
    have recorded), random log-probs."""
    from etude.rl.trajectory import HFChat, Sample, Trajectory, tokenize, with_sample

    chat, rng = HFChat(tokenizer), random.Random(seed)
    source = (ROOT / "etude" / "rl" / "update.py").read_text()
    messages = [
        {"role": "system", "content": "You are a coding agent. Call tools as <tool_call>."},
        {"role": "user", "content": "Fix the failing test in src/textkit/slug.py."},
    ]
    turn = 0
    while len(tokenize(messages, chat).tokens) < target_tokens:
        text = (
            f'<tool_call>{{"name": "read_file", "arguments": {{"path": "f{turn}.py"}}}}</tool_call>'
        )
        ids = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        lps = tuple(-rng.random() for _ in ids)
        messages.append(
            with_sample({"role": "assistant", "content": text}, Sample(tuple(ids), lps, "stop"))
        )
        start = rng.randrange(0, len(source) - 2000)
        messages.append({"role": "user", "content": source[start : start + 2000]})
        turn += 1
    return Trajectory(messages, reward=float(seed % 2))


def memory_child(micro_batch: int, n_trajectories: int, target_tokens: int) -> dict:
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from etude.rl.policy import HFPolicy
    from etude.rl.trajectory import HFChat, tokenize
    from etude.rl.update import StepSettings, rl_update
    from etude.serving.hf_model import smollm2_gguf

    torch.set_num_threads(2)
    path = smollm2_gguf()
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
    )
    model = LlamaForCausalLM(config)
    trajectories = [coding_trajectory(tokenizer, s, target_tokens) for s in range(n_trajectories)]
    lengths = [len(tokenize(t.messages, HFChat(tokenizer)).tokens) for t in trajectories]
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metrics = rl_update(
            HFPolicy(model),
            opt,
            HFChat(tokenizer),
            trajectories,
            [0] * n_trajectories,
            [[]] * n_trajectories,
            StepSettings(micro_batch=micro_batch),
        )
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "micro_batch": micro_batch,
        "trajectory_tokens": lengths,
        "peak_rss_mib": round(peak / 1024, 1),
        "rss_before_update_mib": round(before / 1024, 1),
        "update_peak_over_before_mib": round((peak - before) / 1024, 1),
        "seconds": round(seconds, 2),
        "rl_loss": metrics["rl_loss"],
    }


MEMORY_ARMS = {  # name: (micro_batch, trajectories, tokens per trajectory)
    "4k_x2_micro_batch_1": (1, 2, 4096),
    "2k_x2_micro_batch_1": (1, 2, 2048),
    "2k_x2_whole_batch": (0, 2, 2048),
}


def memory() -> dict:
    """Each arm in a fresh process. The whole batch of two 4k-token trajectories is left
    out: at about twice the 4k micro-batched peak it would pass this machine's 4 GiB
    per-process budget; the 2k arms show the ratio."""
    out = {}
    for name, (micro_batch, n, tokens) in MEMORY_ARMS.items():
        result = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(micro_batch), str(n), str(tokens)],
            check=True,
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        out[name] = json.loads(result.stdout.strip().splitlines()[-1])
    whole, micro = out["2k_x2_whole_batch"], out["2k_x2_micro_batch_1"]
    out["2k_whole_over_micro_update_memory"] = (
        whole["update_peak_over_before_mib"] / micro["update_peak_over_before_mib"]
    )
    out["2k_same_loss"] = abs(whole["rl_loss"] - micro["rl_loss"]) < 1e-5
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--memory-child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        print(json.dumps(memory_child(*args.memory_child)))
        return
    result = {
        "benchmark": "rl_update",
        "torch": torch.__version__,
        "throughput": throughput(args.repeats),
        "memory": memory(),
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
