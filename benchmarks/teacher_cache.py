"""Cost of the teacher pass: reusing the student's prefix KV cache against a full teacher
forward, on SmolLM2-135M-Instruct, plus the tiny policy's loss throughput.

1. SmolLM2 (fp32, CPU): a multi-turn tool trajectory whose prefix is about 2,000 tokens and
   whose hinted (last) turn is about 200 tokens. `full`: one forward over prefix + hint +
   turn (what TRL GKD / OPSD / tinker-style distillation run). `cached`: the student's prefix
   keys/values (its training forward computed them anyway) are copied, detached, and only
   hint + turn run (`etude.rl.teacher.cached_teacher_logits_hf`). Both run `repeats` times,
   interleaved; the maximum difference of their logits is recorded too.
2. The tiny ToolGrid policy: tokens/s of one full loss computation + update (`rl_update`) on a
   batch of 32 ToolGrid trajectories with tool errors, RL only against RL + targeted KL.
3. The tiny ToolGrid policy's teacher pass with 1, 2 and 4 hints per trajectory (16
   trajectories of 4 requests, every call first wrong; 9 repeats, interleaved, after a
   warm-up): `batched` (`cached_teacher_logits_moe`: every hint of a trajectory in one
   forward, per-row start positions) against `sequential` (the algorithm it replaced, kept
   here as the baseline: one forward per hint on one private copy of the prefix, latest
   insertion point first); the maximum difference of their logits is recorded.

Run: .venv/bin/python benchmarks/teacher_cache.py   (writes benchmarks/results/teacher_cache.json)
"""

from __future__ import annotations

import json
import platform
import random
import statistics
import time
import warnings
from pathlib import Path

import torch

from etude.envs.toolgrid import demonstration, sample_task, split_registries
from etude.models import KVCache
from etude.recipes.toolgrid.policy import BytePolicy, allowed_bytes, muon_optimizer
from etude.recipes.toolgrid.train import ModelSettings
from etude.rl.feedback import Hint, InvalidArgumentsDetector, ToolNotFoundDetector, detect_all
from etude.rl.policy import NativePolicy
from etude.rl.teacher import (
    TeacherQuery,
    build_query,
    cached_teacher_logits_hf,
    cached_teacher_logits_moe,
    full_teacher_logits,
    hf_logits,
)
from etude.rl.trajectory import ByteChat, HFChat, Trajectory, tokenize
from etude.rl.update import StepSettings, rl_update

OUT = Path(__file__).parent / "results" / "teacher_cache.json"


def _long_trajectory(chat: HFChat, prefix_tokens: int, turn_tokens: int):
    """Tool-call rounds until the prefix reaches `prefix_tokens`, then a final answer of about
    `turn_tokens` tokens."""
    msgs = [{"role": "system", "content": "You answer questions about cities with tools."}]
    i = 0
    while len(tokenize(msgs, chat).tokens) < prefix_tokens - 60:
        city = f"City{i}"
        args = json.dumps({"city": city})
        fn = {"name": "get_weather", "arguments": args}
        msgs += [
            {"role": "user", "content": f"What is the weather in {city}? Give details."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"c{i}", "type": "function", "function": fn}],
            },
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "content": f"sunny, {10 + i % 20} C, wind {i % 7} m/s",
            },
            {"role": "assistant", "content": f"In {city} it is sunny with {10 + i % 20} C."},
        ]
        i += 1
    msgs.append({"role": "user", "content": "Summarize everything."})
    words = " ".join(f"City{j} was sunny." for j in range(200))
    answer = chat.tokenizer.decode(chat.tokenizer(words)["input_ids"][: turn_tokens - 2])
    msgs.append({"role": "assistant", "content": answer})
    return msgs


def smollm2_section(repeats: int) -> dict:
    from etude.serving.hf_model import load_smollm2

    model, tok = load_smollm2()
    chat = HFChat(tok)
    msgs = _long_trajectory(chat, 2000, 200)
    tt = tokenize(msgs, chat)
    hint = Hint(len(msgs) - 1, "Note: keep the summary to one sentence.", "communication", "bench")
    q = build_query(msgs, tt, chat, hint)
    full_model = hf_logits(model)
    with torch.no_grad():
        student = model(input_ids=tt.tokens[None], use_cache=True)
        times = {"full": [], "cached": []}
        diff = 0.0
        for _ in range(repeats):
            t0 = time.perf_counter()
            want = full_teacher_logits(full_model, tt.tokens, q)
            t1 = time.perf_counter()
            (got,) = cached_teacher_logits_hf(model, student.cache, 0, [q])
            t2 = time.perf_counter()
            times["full"].append(t1 - t0)
            times["cached"].append(t2 - t1)
            diff = max(diff, (got - want).abs().max().item())
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "model": "SmolLM2-135M-Instruct (Q4_1 GGUF dequantized to fp32)",
        "prefix_tokens": q.insert_at,
        "hint_tokens": len(q.hint_tokens),
        "turn_tokens": len(q.continuation),
        "seconds": times,
        "median_s": med,
        "speedup_full_over_cached": med["full"] / med["cached"],
        "max_abs_logit_diff": diff,
    }


def tiny_loss_section(repeats: int) -> dict:
    torch.manual_seed(0)
    policy = BytePolicy(ModelSettings().config())
    tok = ByteChat()
    train, _ = split_registries(0, 50, 5, 3)
    rng = random.Random(0)
    # scripted noisy episodes (every other call wrong, no hint messages): the loss's cost
    # depends on the tokens and hints, not on who wrote them
    trajs, groups = [], []
    for g in range(4):
        task = sample_task(rng.choice(train), 2, rng)
        for _ in range(8):
            msgs = demonstration(task, rng, p_error=0.5, p_hint=0.0)
            trajs.append(Trajectory(msgs, task.registry.specs(), reward=float(rng.random() < 0.5)))
            groups.append(g)
    dets = [ToolNotFoundDetector(), InvalidArgumentsDetector()]
    hints = [detect_all(t, dets) for t in trajs]
    n_tokens = sum(len(tokenize(t.messages, tok).tokens) for t in trajs)
    arms = {
        "rl_only": StepSettings(),
        "rl_plus_targeted_kl": StepSettings(
            weights={"tool_not_found": 0.5, "invalid_arguments": 0.5},
            modes={"tool_not_found": "kl", "invalid_arguments": "kl"},
        ),
    }
    times = {k: [] for k in arms}
    opt = muon_optimizer(policy, 0.0)  # lr 0: every repeat sees the same policy
    for _ in range(repeats):
        for name, settings in arms.items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():  # scripted turns: re-tokenized on purpose
                warnings.simplefilter("ignore")
                m = rl_update(
                    NativePolicy(policy),
                    opt,
                    tok,
                    trajs,
                    groups,
                    hints,
                    settings,
                    retokenize=True,
                )
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "trajectories": len(trajs),
        "tokens": n_tokens,
        "hints": sum(map(len, hints)),
        "frac_distilled": m["frac_distilled"],
        "median_s": med,
        "tokens_per_s": {k: n_tokens / v for k, v in med.items()},
        "kl_overhead_ratio": med["rl_plus_targeted_kl"] / med["rl_only"],
    }


def sequential_teacher_logits(model, cache, row: int, queries: list[TeacherQuery]) -> list:
    """The baseline: one forward per hint. The prefix is copied once into a private cache and
    hints run from the latest insertion point to the earliest, each overwriting only
    positions at or after its own, so every later hint still finds its prefix intact."""
    need = max(q.insert_at + len(q.hint_tokens) + len(q.continuation) for q in queries)
    prefix = max(q.insert_at for q in queries)
    own = KVCache.empty(model.config, 1, need, dtype=cache.keys[0].dtype)
    for mine, theirs in zip(own.keys + own.values, cache.keys + cache.values):
        mine[:, :prefix] = theirs[row : row + 1, :prefix].detach()
    out = [None] * len(queries)
    for i in sorted(range(len(queries)), key=lambda i: -queries[i].insert_at):
        q = queries[i]
        new = torch.cat([q.hint_tokens, q.continuation])[None]
        lh = len(q.hint_tokens)
        out[i] = model(new, cache=own, start_pos=q.insert_at)[0, lh - 1 : -1]
    return out


def tiny_teacher_batching_section(repeats: int, trajectories: int = 16) -> dict:
    torch.manual_seed(0)
    policy = BytePolicy(ModelSettings().config()).eval()
    tok = ByteChat()
    train, _ = split_registries(0, 50, 5, 3)
    rng = random.Random(1)
    dets = [ToolNotFoundDetector(), InvalidArgumentsDetector()]
    trajs = []
    while len(trajs) < trajectories:  # 4 requests, every call first wrong: 4 hinted turns
        task = sample_task(rng.choice(train), 4, rng)
        traj = Trajectory(demonstration(task, rng, p_error=1.0, p_hint=0.0))
        hints = detect_all(traj, dets)
        if len(hints) == 4:
            trajs.append((traj, tokenize(traj.messages, tok), hints))
    tokens = torch.nn.utils.rnn.pad_sequence([tt.tokens for _, tt, _ in trajs], batch_first=True)
    cache = KVCache.empty(policy.config, len(trajs), tokens.shape[1])
    allowed = allowed_bytes()
    result = {"trajectories": len(trajs), "student_tokens": int(tokens.numel()), "by_hints": {}}
    with torch.no_grad():
        policy(tokens, cache=cache, start_pos=0)
        for k in (1, 2, 4):
            queries = [[build_query(t.messages, tt, tok, h) for h in hs[:k]] for t, tt, hs in trajs]
            arms = {"batched": cached_teacher_logits_moe, "sequential": sequential_teacher_logits}
            times = {name: [] for name in arms}
            outputs = {}
            for teacher in arms.values():  # warm-up, untimed
                teacher(policy, cache, 0, queries[0])
            for _ in range(repeats):
                for name, teacher in arms.items():
                    t0 = time.perf_counter()
                    outputs[name] = [teacher(policy, cache, r, q) for r, q in enumerate(queries)]
                    times[name].append(time.perf_counter() - t0)
            diff = max(
                (a[:, allowed] - b[:, allowed]).abs().max().item()
                for rows_a, rows_b in zip(outputs["batched"], outputs["sequential"])
                for a, b in zip(rows_a, rows_b)
            )
            med = {name: statistics.median(v) for name, v in times.items()}
            result["by_hints"][str(k)] = {
                "teacher_tokens": sum(
                    len(q.hint_tokens) + len(q.continuation) for qs in queries for q in qs
                ),
                "seconds": times,
                "median_s": med,
                "speedup_sequential_over_batched": med["sequential"] / med["batched"],
                "max_abs_logit_diff_allowed_bytes": diff,
            }
    return result


def main() -> None:
    # one thread: on this shared machine, multi-threaded kernels stall on busy cores
    torch.set_num_threads(1)
    result = {
        "machine": f"{platform.machine()}, {torch.get_num_threads()} threads, "
        f"torch {torch.__version__}",
        "note": "a shared 2-core machine; other jobs ran meanwhile: absolute times are noisy",
        "smollm2_teacher_pass": smollm2_section(repeats=5),
        "tiny_policy_loss": tiny_loss_section(repeats=5),
        "tiny_teacher_batching": tiny_teacher_batching_section(repeats=9),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2))
    print(
        json.dumps(
            {k: v for k, v in result["smollm2_teacher_pass"].items() if k != "seconds"}, indent=2
        )
    )
    print(json.dumps(result["tiny_policy_loss"], indent=2))
    for k, v in result["tiny_teacher_batching"]["by_hints"].items():
        print(k, "hints:", {n: v[n] for n in ("median_s", "speedup_sequential_over_batched")})


if __name__ == "__main__":
    main()
